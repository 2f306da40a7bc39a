/* Uses a banned function. */
void f(char *d, const char *s) { strcpy(d, s); }
