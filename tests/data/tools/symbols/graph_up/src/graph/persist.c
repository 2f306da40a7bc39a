/* src/graph's persist level calling up into invoke: the check must fail. */
int sst_fixture_invoke(void);
int sst_fixture_persist(void);
int sst_fixture_persist(void) {
    return sst_fixture_invoke() + 1;
}
