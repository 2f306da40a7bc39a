int sst_fixture_persist(void);
int sst_fixture_invoke(void);
int sst_fixture_invoke(void) {
    return sst_fixture_persist() + 1;
}
