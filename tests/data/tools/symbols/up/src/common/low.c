/* A common-layer file calling up into the server layer: the check must fail. */
int sst_fixture_high(void);
int sst_fixture_low(void);
int sst_fixture_low(void) {
    return sst_fixture_high() + 1;
}
