/* SPDX-License-Identifier: MIT */
/*
 * Cron expressions: the 5-field parser, the next-fire search and the UTC
 * calendar helpers (cron_expr.h has the grammar and the day rule). A parsed
 * schedule is a bit set per field; the next fire is found day by day (at
 * most about 8 years of days), then hour and minute within the first
 * matching day, so it costs microseconds whatever the schedule.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "cron_expr.h"

enum { F_MINUTE, F_HOUR, F_DOM, F_MONTH, F_DOW, F_COUNT };

/* Each field's name (in messages) and the values its text may hold. */
static const struct {
    const char *name;
    int lo, hi;
} k_fields[F_COUNT] = {
    {"minute", 0, 59}, {"hour", 0, 23},       {"day-of-month", 1, 31},
    {"month", 1, 12},  {"day-of-week", 0, 7},
};

static const char *const k_months[12] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                         "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
static const char *const k_weekdays[7] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

static const struct {
    const char *name;
    const char *expr;
} k_macros[] = {
    {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
    {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
    {"@hourly", "0 * * * *"},
};

/* Where parsing is: the whole expression (for positions and messages) and the field. */
typedef struct parser {
    const char *expr;
    int field;
    sst_error *err;
} parser;

/* Fails naming the field and the 1-based position of @p at. */
SST_PRINTF(3, 4)
static sst_code fail(const parser *p, const char *at, const char *fmt, ...) {
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return sst__error(p->err, SST_EINVAL, "cron schedule '%.100s': %s field at position %d: %s",
                      p->expr, k_fields[p->field].name, (int)(at - p->expr) + 1, what);
}

static bool is_space(char c) {
    return c == ' ' || c == '\t';
}

/* A number or (month and weekday fields) a name at *s; advances *s. */
static sst_code value(const parser *p, const char **s, const char *end, int *out) {
    const char *at = *s;
    int lo = k_fields[p->field].lo, hi = k_fields[p->field].hi;
    if (at < end && isdigit((unsigned char)*at)) {
        long v = 0;
        const char *q = at;
        while (q < end && isdigit((unsigned char)*q)) {
            if (v < 100000) {
                v = v * 10 + (*q - '0');
            }
            q++;
        }
        if (v < lo || v > hi) {
            int n = (int)(q - at);
            return fail(p, at, "%.*s%s is out of range %d-%d", n > 12 ? 12 : n, at,
                        n > 12 ? "..." : "", lo, hi);
        }
        *s = q;
        *out = (int)v;
        return SST_OK;
    }
    if (at < end && isalpha((unsigned char)*at)) {
        const char *q = at;
        while (q < end && isalpha((unsigned char)*q)) {
            q++;
        }
        size_t n = (size_t)(q - at);
        const char *const *names = p->field == F_MONTH ? k_months
                                   : p->field == F_DOW ? k_weekdays
                                                       : NULL;
        size_t count = p->field == F_MONTH ? 12 : 7;
        for (size_t i = 0; names != NULL && n == 3 && i < count; i++) {
            if (toupper((unsigned char)at[0]) == names[i][0] &&
                toupper((unsigned char)at[1]) == names[i][1] &&
                toupper((unsigned char)at[2]) == names[i][2]) {
                *s = q;
                *out = p->field == F_MONTH ? (int)i + 1 : (int)i;
                return SST_OK;
            }
        }
        if (names == NULL) {
            return fail(p, at, "names such as '%.*s' are allowed only for months and weekdays",
                        (int)(n > 20 ? 20 : n), at);
        }
        return fail(p, at, "unknown name '%.*s' (%s)", (int)(n > 20 ? 20 : n), at,
                    p->field == F_MONTH ? "JAN..DEC" : "SUN..SAT");
    }
    if (at >= end) {
        return fail(p, at, "a value is missing");
    }
    return fail(p, at, "unexpected '%c' (want a number%s, '*' or a range)", *at,
                p->field == F_MONTH || p->field == F_DOW ? ", a name" : "");
}

/* Parses the field text [s, end) into @p bits. */
static sst_code field(const parser *p, const char *s, const char *end, uint64_t *bits) {
    const int fmin = k_fields[p->field].lo, fmax = k_fields[p->field].hi;
    *bits = 0;
    for (;;) {
        const char *item = s;
        int lo, hi;
        bool single = false;
        sst_code rc;
        if (s < end && *s == '*') {
            lo = fmin;
            hi = fmax;
            s++;
        } else {
            if ((rc = value(p, &s, end, &lo)) != SST_OK) {
                return rc;
            }
            hi = lo;
            single = true;
            if (s < end && *s == '-') {
                s++;
                if ((rc = value(p, &s, end, &hi)) != SST_OK) {
                    return rc;
                }
                single = false;
                if (p->field == F_DOW && hi == 0 && lo > 0) {
                    hi = 7; /* "MON-SUN": Sunday as the end of the week */
                }
                if (lo > hi) {
                    return fail(p, item, "the range %d-%d goes backwards", lo, hi);
                }
            }
        }
        int step = 1;
        if (s < end && *s == '/') {
            const char *at = ++s;
            long n = 0;
            while (s < end && isdigit((unsigned char)*s)) {
                if (n < 100000) {
                    n = n * 10 + (*s - '0');
                }
                s++;
            }
            if (s == at) {
                return fail(p, at, "a step needs a number after '/'");
            }
            if (n < 1 || n > fmax - fmin + 1) {
                return fail(p, at, "the step %ld is out of range 1-%d", n, fmax - fmin + 1);
            }
            step = (int)n;
            if (single) {
                hi = fmax; /* "a/n": from a to the end of the range */
            }
        }
        for (int v = lo; v <= hi; v += step) {
            *bits |= (uint64_t)1 << v;
        }
        if (s == end) {
            return SST_OK;
        }
        if (*s != ',') {
            return fail(p, s, "unexpected '%c' (items are separated by ',')", *s);
        }
        s++;
        if (s == end) {
            return fail(p, s, "a value is missing after ','");
        }
    }
}

sst_code srv_cron_parse(const char *expr, srv_cron *out, sst_error *err) {
    if (expr == NULL) {
        return sst__error(err, SST_EINVAL, "cron schedule: missing (NULL)");
    }
    const char *s = expr;
    while (is_space(*s)) {
        s++;
    }
    if (*s == '@') {
        size_t n = strlen(s);
        while (n > 0 && is_space(s[n - 1])) {
            n--;
        }
        for (size_t i = 0; i < sizeof k_macros / sizeof k_macros[0]; i++) {
            if (strlen(k_macros[i].name) == n && strncmp(k_macros[i].name, s, n) == 0) {
                return srv_cron_parse(k_macros[i].expr, out, err);
            }
        }
        return sst__error(err, SST_EINVAL,
                          "cron schedule '%.100s': unknown macro '%.*s' (@yearly, @annually, "
                          "@monthly, @weekly, @daily, @midnight, @hourly)",
                          expr, (int)(n > 30 ? 30 : n), s);
    }
    const char *start[F_COUNT + 1], *end[F_COUNT + 1];
    int n = 0;
    while (*s != '\0') {
        const char *b = s;
        while (*s != '\0' && !is_space(*s)) {
            s++;
        }
        if (n <= F_COUNT) {
            start[n] = b;
            end[n] = s;
        }
        n++;
        while (is_space(*s)) {
            s++;
        }
    }
    if (n != F_COUNT) {
        return sst__error(err, SST_EINVAL,
                          "cron schedule '%.100s': expected 5 fields (minute hour day-of-month "
                          "month day-of-week), got %d",
                          expr, n);
    }
    uint64_t bits[F_COUNT];
    for (int i = 0; i < F_COUNT; i++) {
        parser p = {.expr = expr, .field = i, .err = err};
        sst_code rc = field(&p, start[i], end[i], &bits[i]);
        if (rc != SST_OK) {
            return rc;
        }
    }
    uint64_t dow = bits[F_DOW];
    if (dow & ((uint64_t)1 << 7)) {
        dow = (dow | 1) & ~((uint64_t)1 << 7); /* 7 is Sunday */
    }
    *out = (srv_cron){.minutes = bits[F_MINUTE],
                      .hours = (uint32_t)bits[F_HOUR],
                      .days = (uint32_t)bits[F_DOM],
                      .months = (uint16_t)bits[F_MONTH],
                      .weekdays = (uint8_t)dow,
                      .dom_restricted = (uint32_t)bits[F_DOM] != 0xFFFFFFFEu,
                      .dow_restricted = dow != 0x7F};
    return SST_OK;
}

/* Floor division and the matching non-negative remainder. */
static int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* Howard Hinnant's days_from_civil / civil_from_days (public domain algorithms). */
int64_t srv_days_from_civil(int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    int64_t era = floor_div(y, 400);
    int64_t yoe = y - era * 400;                                            /* [0, 399] */
    int64_t doy = (153 * (int64_t)(m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1; /* [0, 365] */
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;                    /* [0, 146096] */
    return era * 146097 + doe - 719468;
}

void srv_civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d) {
    days += 719468;
    int64_t era = floor_div(days, 146097);
    int64_t doe = days - era * 146097;                                   /* [0, 146096] */
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* [0, 399] */
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               /* [0, 365] */
    int64_t mp = (5 * doy + 2) / 153;                                    /* [0, 11] */
    *d = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
    *m = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

/* About 8 years of days: the longest gap between two fires of a schedule that fires at
 * all is Feb 29 across 2100 (2096 to 2104). */
#define SEARCH_DAYS (8 * 366 + 2)
#define MS_PER_MIN  INT64_C(60000)

int64_t srv_cron_next(const srv_cron *c, int64_t after_ms) {
    const int64_t span_ms = (int64_t)(SEARCH_DAYS + 1) * 86400000;
    if (c == NULL || after_ms > INT64_MAX - span_ms || after_ms < INT64_MIN / 2) {
        return -1;
    }
    int64_t minute = floor_div(after_ms, MS_PER_MIN) + 1; /* strictly after */
    int64_t day = floor_div(minute, 1440);
    int first_hour = (int)((minute - day * 1440) / 60);
    int first_min = (int)((minute - day * 1440) % 60);
    const uint64_t all_minutes = ((uint64_t)1 << 60) - 1;
    for (int k = 0; k < SEARCH_DAYS; k++, day++) {
        int64_t y;
        unsigned mon, dom;
        srv_civil_from_days(day, &y, &mon, &dom);
        if ((c->months & (1u << mon)) == 0) {
            continue;
        }
        int64_t wd = day + 4 - floor_div(day + 4, 7) * 7; /* 1970-01-01 was a Thursday */
        bool dom_ok = (c->days & (1u << dom)) != 0;
        bool dow_ok = (c->weekdays & (1u << wd)) != 0;
        bool ok = c->dom_restricted && c->dow_restricted ? dom_ok || dow_ok : dom_ok && dow_ok;
        if (!ok) {
            continue;
        }
        for (int h = k == 0 ? first_hour : 0; h < 24; h++) {
            if ((c->hours & (1u << h)) == 0) {
                continue;
            }
            int from = k == 0 && h == first_hour ? first_min : 0;
            uint64_t mm = c->minutes & all_minutes & ~(((uint64_t)1 << from) - 1);
            if (mm != 0) {
                int mi = __builtin_ctzll(mm);
                return ((day * 1440) + h * 60 + mi) * MS_PER_MIN;
            }
        }
    }
    return -1;
}

/* Reads exactly @p n digits at *s into *out; advances *s. */
static bool digits(const char **s, int n, int *out) {
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)(*s)[i])) {
            return false;
        }
        v = v * 10 + ((*s)[i] - '0');
    }
    *s += n;
    *out = v;
    return true;
}

static bool leap(int64_t y) {
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static unsigned month_days(int64_t y, unsigned m) {
    static const unsigned k[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && leap(y) ? 29 : k[m - 1];
}

bool srv_time_parse_iso(const char *s, int64_t *out_ms) {
    int y, mo, d, h = 0, mi = 0, sec = 0, ms = 0;
    if (s == NULL || !digits(&s, 4, &y) || *s++ != '-' || !digits(&s, 2, &mo) || *s++ != '-' ||
        !digits(&s, 2, &d)) {
        return false;
    }
    if (mo < 1 || mo > 12 || d < 1 || (unsigned)d > month_days(y, (unsigned)mo)) {
        return false;
    }
    if (*s == 'T' || *s == 't' || *s == ' ') {
        s++;
        if (!digits(&s, 2, &h) || *s++ != ':' || !digits(&s, 2, &mi)) {
            return false;
        }
        if (*s == ':') {
            s++;
            if (!digits(&s, 2, &sec)) {
                return false;
            }
            if (*s == '.' || *s == ',') {
                s++;
                int n = 0;
                while (isdigit((unsigned char)*s)) {
                    if (n < 3) {
                        ms = ms * 10 + (*s - '0');
                    }
                    n++;
                    s++;
                }
                if (n == 0) {
                    return false;
                }
                for (; n < 3; n++) {
                    ms *= 10;
                }
            }
        }
        if (h > 23 || mi > 59 || sec > 59) {
            return false;
        }
    }
    int offset_min = 0;
    if (*s == 'Z' || *s == 'z') {
        s++;
    } else if (*s == '+' || *s == '-') {
        int sign = *s++ == '-' ? -1 : 1, oh, om = 0;
        if (!digits(&s, 2, &oh)) {
            return false;
        }
        if (*s == ':') {
            s++;
            if (!digits(&s, 2, &om)) {
                return false;
            }
        } else if (isdigit((unsigned char)*s) && !digits(&s, 2, &om)) {
            return false;
        }
        if (oh > 23 || om > 59) {
            return false;
        }
        offset_min = sign * (oh * 60 + om);
    }
    if (*s != '\0') {
        return false;
    }
    int64_t days = srv_days_from_civil(y, (unsigned)mo, (unsigned)d);
    *out_ms = ((days * 86400 + h * 3600 + mi * 60 + sec) - (int64_t)offset_min * 60) * 1000 + ms;
    return true;
}
