int sst_fixture_invoke(void);
int sst_fixture_invoke(void) {
    return 1;
}
