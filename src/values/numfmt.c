/* SPDX-License-Identifier: MIT */
/*
 * Locale-independent number text conversions. strtod and snprintf follow
 * LC_NUMERIC, which a host program may set to a locale whose decimal point
 * is ','; we switch the calling thread to the "C" locale around them
 * (uselocale is per thread). The C locale object is created once and never
 * changes, so sharing it is race-free.
 */
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "values_int.h"
#include "values_num.h"

static pthread_once_t g_c_locale_once = PTHREAD_ONCE_INIT;
static locale_t g_c_locale = (locale_t)0;

static void c_locale_init(void) {
    g_c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

static locale_t enter_c(void) {
    pthread_once(&g_c_locale_once, c_locale_init);
    return g_c_locale != (locale_t)0 ? uselocale(g_c_locale) : (locale_t)0;
}

static void leave_c(locale_t old) {
    if (old != (locale_t)0) {
        uselocale(old);
    }
}

double sst__strtod_c(const char *s, char **end) {
    locale_t old = enter_c();
    double d = strtod(s, end);
    leave_c(old);
    return d;
}

size_t sst__fmt_double(double d, char out[SST__DOUBLE_BUF]) {
    locale_t old = enter_c();
    int n = 0;
    for (int prec = 15; prec <= 17; prec++) {
        n = snprintf(out, SST__DOUBLE_BUF, "%.*g", prec, d);
        if (strtod(out, NULL) == d) {
            break;
        }
    }
    leave_c(old);
    if (n < 0 || n >= SST__DOUBLE_BUF - 3) {
        out[0] = '0';
        out[1] = '\0';
        return 1;
    }
    /* Keep it a double when read back: it needs a '.' or an exponent. */
    if (strpbrk(out, ".eEni") == NULL) {
        out[n++] = '.';
        out[n++] = '0';
        out[n] = '\0';
    }
    return (size_t)n;
}

size_t sst__fmt_int(int64_t i, char out[SST__INT_BUF]) {
    char tmp[SST__INT_BUF];
    size_t n = 0;
    uint64_t u = i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    size_t k = 0;
    if (i < 0) {
        out[k++] = '-';
    }
    while (n > 0) {
        out[k++] = tmp[--n];
    }
    out[k] = '\0';
    return k;
}
