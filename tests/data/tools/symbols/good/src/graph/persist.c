int sst_fixture_low(void);
int sst_fixture_persist(void);
int sst_fixture_persist(void) {
    return sst_fixture_low() + 1;
}
