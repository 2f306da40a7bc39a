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

static const double k_pow10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};

/*
 * The common case without printf: a double in [1e-4, 1e15) that is the
 * correctly rounded value of a decimal with at most 15 fraction digits and
 * fewer than 2^53 as an integer mantissa. Such a decimal reads back exactly
 * (the reader divides the exact mantissa by an exact power of ten, which is
 * how the check below was computed), and the first k that works is the
 * shortest fixed-point form. Returns 0 when the double needs the slow path.
 */
static size_t fmt_decimal_fast(double d, char *out) {
    double a = fabs(d);
    if (!(a >= 1e-4 && a < 1e15)) {
        return 0;
    }
    for (int k = 0; k <= 15; k++) {
        double m = floor(a * k_pow10[k] + 0.5);
        if (m >= 9007199254740992.0) {
            return 0;
        }
        if (m / k_pow10[k] != a) {
            continue;
        }
        uint64_t u = (uint64_t)m;
        char digits[24];
        int nd = 0;
        do {
            digits[nd++] = (char)('0' + u % 10);
            u /= 10;
        } while (u != 0 || nd <= k); /* at least one digit before the point */
        size_t n = 0;
        if (d < 0) {
            out[n++] = '-';
        }
        for (int i = nd - 1; i >= k; i--) {
            out[n++] = digits[i];
        }
        out[n++] = '.';
        if (k == 0) {
            out[n++] = '0';
        }
        for (int i = k - 1; i >= 0; i--) {
            out[n++] = digits[i];
        }
        out[n] = '\0';
        return n;
    }
    return 0;
}

size_t sst__fmt_double(double d, char out[SST__DOUBLE_BUF]) {
    size_t fast = fmt_decimal_fast(d, out);
    if (fast > 0) {
        return fast;
    }
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
