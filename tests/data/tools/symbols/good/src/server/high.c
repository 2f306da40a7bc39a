int sst_fixture_low(void);
int sst_fixture_invoke(void);
int sst_fixture_high(void);
int sst_fixture_high(void) {
    return sst_fixture_low() + sst_fixture_invoke();
}
