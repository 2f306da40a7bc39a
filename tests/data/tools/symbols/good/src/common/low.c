/* Calls downward only (server -> common, invoke -> persist): the check must pass. */
int sst_fixture_low(void);
int sst_fixture_low(void) {
    return 1;
}
