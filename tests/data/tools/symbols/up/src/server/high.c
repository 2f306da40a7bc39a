int sst_fixture_high(void);
int sst_fixture_high(void) {
    return 1;
}
