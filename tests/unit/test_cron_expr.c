/* SPDX-License-Identifier: MIT */
/*
 * superstep serve's cron expressions (src/server/cron_expr.h): every syntax
 * form, the parse errors (field and position named), next fires across
 * month and year ends and leap years, the day-of-month / day-of-week OR
 * rule, schedules that never fire, a brute-force cross-check of the next-fire
 * search, and the UTC calendar and ISO 8601 helpers the crons use.
 */
#include <stdio.h>
#include <string.h>

#include "server/cron_expr.h"
#include "test_util.h"

/* ms since the epoch of a UTC date and time. */
static int64_t at(int64_t y, unsigned mo, unsigned d, unsigned h, unsigned mi) {
    return ((srv_days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * INT64_C(60000);
}

static srv_cron parse_ok(const char *expr) {
    srv_cron c;
    sst_error err = {0};
    assert_sst_ok(srv_cron_parse(expr, &c, &err), &err);
    return c;
}

/* Parsing @p expr fails with SST_EINVAL and a message holding every string of @p want. */
static void parse_fails(const char *expr, const char *want1, const char *want2) {
    srv_cron c = {.minutes = 42};
    sst_error err = {0};
    sst_code rc = srv_cron_parse(expr, &c, &err);
    if (rc != SST_EINVAL) {
        fail_msg("'%s': want SST_EINVAL, got %s", expr != NULL ? expr : "(null)",
                 sst_code_name(rc));
    }
    assert_int_equal(err.code, SST_EINVAL);
    if (want1 != NULL && strstr(err.msg, want1) == NULL) {
        fail_msg("'%s': message '%s' lacks '%s'", expr, err.msg, want1);
    }
    if (want2 != NULL && strstr(err.msg, want2) == NULL) {
        fail_msg("'%s': message '%s' lacks '%s'", expr, err.msg, want2);
    }
    assert_int_equal(c.minutes, 42); /* unchanged on failure */
}

static uint64_t bits(int lo, int hi, int step) {
    uint64_t b = 0;
    for (int v = lo; v <= hi; v += step) {
        b |= (uint64_t)1 << v;
    }
    return b;
}

static void test_syntax_forms(void **state) {
    (void)state;
    srv_cron c = parse_ok("* * * * *");
    assert_true(c.minutes == bits(0, 59, 1));
    assert_true(c.hours == bits(0, 23, 1));
    assert_true(c.days == bits(1, 31, 1));
    assert_true(c.months == bits(1, 12, 1));
    assert_true(c.weekdays == bits(0, 6, 1));
    assert_false(c.dom_restricted);
    assert_false(c.dow_restricted);

    c = parse_ok("5 4 3 2 1"); /* numbers */
    assert_true(c.minutes == bits(5, 5, 1) && c.hours == bits(4, 4, 1));
    assert_true(c.days == bits(3, 3, 1) && c.months == bits(2, 2, 1));
    assert_true(c.weekdays == bits(1, 1, 1));
    assert_true(c.dom_restricted && c.dow_restricted);

    c = parse_ok("1-5 0,12,23 1,15-17 * *"); /* ranges and lists */
    assert_true(c.minutes == bits(1, 5, 1));
    assert_true(c.hours == (bits(0, 0, 1) | bits(12, 12, 1) | bits(23, 23, 1)));
    assert_true(c.days == (bits(1, 1, 1) | bits(15, 17, 1)));

    c = parse_ok("*/15 */6 */10 */3 */2"); /* steps over the whole range */
    assert_true(c.minutes == bits(0, 45, 15));
    assert_true(c.hours == bits(0, 18, 6));
    assert_true(c.days == bits(1, 31, 10));   /* 1, 11, 21, 31 */
    assert_true(c.months == bits(1, 10, 3));  /* 1, 4, 7, 10 */
    assert_true(c.weekdays == bits(0, 6, 2)); /* 0, 2, 4, 6 (and 8 is past 7) */
    assert_true(c.dom_restricted && c.dow_restricted);

    c = parse_ok("10-30/10 5/6 1-31/2 2-12/5 1-5/2"); /* range/step and value/step */
    assert_true(c.minutes == bits(10, 30, 10));
    assert_true(c.hours == bits(5, 23, 6)); /* 5, 11, 17, 23 */
    assert_true(c.days == bits(1, 31, 2));
    assert_true(c.months == (bits(2, 2, 1) | bits(7, 7, 1) | bits(12, 12, 1)));
    assert_true(c.weekdays == (bits(1, 1, 1) | bits(3, 3, 1) | bits(5, 5, 1)));

    c = parse_ok("0 0 * JAN-mar,Dec sun"); /* names, any case */
    assert_true(c.months == (bits(1, 3, 1) | bits(12, 12, 1)));
    assert_true(c.weekdays == bits(0, 0, 1));
    c = parse_ok("0 0 * * MON-FRI");
    assert_true(c.weekdays == bits(1, 5, 1));
    c = parse_ok("0 0 * * Sat,SUN");
    assert_true(c.weekdays == (bits(0, 0, 1) | bits(6, 6, 1)));

    c = parse_ok("0 0 * * 7"); /* 7 is Sunday */
    assert_true(c.weekdays == bits(0, 0, 1));
    c = parse_ok("0 0 * * 5-7");
    assert_true(c.weekdays == (bits(0, 0, 1) | bits(5, 6, 1)));
    c = parse_ok("0 0 * * MON-SUN"); /* a range ending in Sunday: the whole week */
    assert_true(c.weekdays == bits(0, 6, 1));
    assert_false(c.dow_restricted);
    c = parse_ok("0 0 1-31 * 0-7"); /* full sets count as unrestricted */
    assert_false(c.dom_restricted);
    assert_false(c.dow_restricted);

    c = parse_ok("  \t0\t 0  * *   *  "); /* spaces and tabs anywhere between fields */
    assert_true(c.minutes == 1 && c.hours == 1);

    /* Macros. */
    srv_cron m = parse_ok("@hourly"), e = parse_ok("0 * * * *");
    assert_memory_equal(&m, &e, sizeof m);
    m = parse_ok("@daily"), e = parse_ok("0 0 * * *");
    assert_memory_equal(&m, &e, sizeof m);
    m = parse_ok("  @midnight "), e = parse_ok("0 0 * * *");
    assert_memory_equal(&m, &e, sizeof m);
    m = parse_ok("@weekly"), e = parse_ok("0 0 * * 0");
    assert_memory_equal(&m, &e, sizeof m);
    m = parse_ok("@monthly"), e = parse_ok("0 0 1 * *");
    assert_memory_equal(&m, &e, sizeof m);
    m = parse_ok("@yearly"), e = parse_ok("0 0 1 1 *");
    assert_memory_equal(&m, &e, sizeof m);
    m = parse_ok("@annually");
    assert_memory_equal(&m, &e, sizeof m);
}

static void test_parse_errors(void **state) {
    (void)state;
    parse_fails(NULL, "missing", NULL);
    parse_fails("", "expected 5 fields", "got 0");
    parse_fails("   ", "expected 5 fields", "got 0");
    parse_fails("* * * *", "expected 5 fields", "got 4");
    parse_fails("0 * * * * *", "expected 5 fields", "got 6"); /* no seconds field */
    parse_fails("60 * * * *", "minute field at position 1", "60 is out of range 0-59");
    parse_fails("* 24 * * *", "hour field at position 3", "out of range 0-23");
    parse_fails("0 0 32 * *", "day-of-month field at position 5", "32 is out of range 1-31");
    parse_fails("0 0 0 * *", "day-of-month field at position 5", "0 is out of range 1-31");
    parse_fails("0 0 * 13 *", "month field at position 7", "out of range 1-12");
    parse_fails("0 0 * 0 *", "month field", "out of range 1-12");
    parse_fails("0 0 * * 8", "day-of-week field at position 9", "out of range 0-7");
    parse_fails("0 0 * FOO *", "month field at position 7", "unknown name 'FOO'");
    parse_fails("0 0 * * MONDAY", "day-of-week field", "unknown name 'MONDAY'");
    parse_fails("0 0 MON * *", "day-of-month field", "only for months and weekdays");
    parse_fails("a * * * *", "minute field at position 1", "only for months");
    parse_fails("5-3 * * * *", "minute field at position 1", "goes backwards");
    parse_fails("0 0 * * FRI-MON", "day-of-week field at position 9", "goes backwards");
    parse_fails("*/0 * * * *", "minute field at position 3", "step 0 is out of range 1-60");
    parse_fails("*/61 * * * *", "minute field", "step 61");
    parse_fails("*/ * * * *", "minute field at position 3", "needs a number after '/'");
    parse_fails("1,,2 * * * *", "minute field at position 3", "unexpected ','");
    parse_fails("1, * * * *", "minute field at position 3", "missing after ','");
    parse_fails("*5 * * * *", "minute field at position 2", "unexpected '5'");
    parse_fails("1-* * * * *", "minute field at position 3", "unexpected '*'");
    parse_fails("1- * * * *", "minute field at position 3", "a value is missing");
    parse_fails("-1 * * * *", "minute field at position 1", "unexpected '-'");
    parse_fails("0 0 1 1 ?", "day-of-week field at position 9", "unexpected '?'");
    parse_fails("0 0 L * *", "day-of-month field", "only for months");
    parse_fails("99999999999 * * * *", "minute field", "out of range 0-59");
    parse_fails("@reboot", "unknown macro '@reboot'", NULL);
    parse_fails("@daily 0", "unknown macro", NULL);
}

static void next_is(const char *expr, int64_t after, int64_t want) {
    srv_cron c = parse_ok(expr);
    int64_t got = srv_cron_next(&c, after);
    if (got != want) {
        fail_msg("'%s' after %lld: want %lld, got %lld", expr, (long long)after, (long long)want,
                 (long long)got);
    }
}

static void test_next_basics(void **state) {
    (void)state;
    int64_t t = at(2024, 1, 1, 0, 0);
    next_is("* * * * *", t, t + 60000);         /* strictly after */
    next_is("* * * * *", t - 1, t);             /* the next minute boundary */
    next_is("* * * * *", t + 30500, t + 60000); /* mid-minute */
    next_is("*/15 * * * *", t + 60000, t + 15 * 60000);
    next_is("15,45 9-10 * * *", at(2024, 1, 1, 9, 20), at(2024, 1, 1, 9, 45));
    next_is("15,45 9-10 * * *", at(2024, 1, 1, 10, 45), at(2024, 1, 2, 9, 15)); /* next day */
    next_is("0 0 * * *", at(2024, 1, 1, 23, 59), at(2024, 1, 2, 0, 0));
    next_is("59 23 * * *", at(2024, 1, 1, 23, 59), at(2024, 1, 2, 23, 59));
    /* The epoch and before it. */
    next_is("0 0 1 1 *", -1, 0);
    next_is("0 0 1 1 *", at(1969, 6, 1, 0, 0), 0);
    next_is("30 12 * * *", at(1960, 2, 29, 12, 30), at(1960, 3, 1, 12, 30));
    /* No room to search: -1, never a wrapped value. */
    srv_cron c = parse_ok("* * * * *");
    assert_int_equal(srv_cron_next(&c, INT64_MAX), -1);
    assert_int_equal(srv_cron_next(&c, INT64_MIN), -1);
    assert_int_equal(srv_cron_next(NULL, 0), -1);
}

static void test_next_month_and_year_ends(void **state) {
    (void)state;
    next_is("0 0 1 1 *", at(2023, 12, 31, 23, 59), at(2024, 1, 1, 0, 0));
    next_is("59 23 31 12 *", at(2024, 12, 31, 23, 59), at(2025, 12, 31, 23, 59));
    next_is("59 23 31 12 *", at(2024, 12, 31, 23, 58), at(2024, 12, 31, 23, 59));
    next_is("30 23 31 * *", at(2024, 4, 1, 0, 0), at(2024, 5, 31, 23, 30)); /* April has 30 */
    next_is("0 0 31 * *", at(2024, 1, 31, 0, 0), at(2024, 3, 31, 0, 0));    /* skips Feb */
    next_is("0 0 1 * *", at(2024, 12, 15, 0, 0), at(2025, 1, 1, 0, 0));
    next_is("0 12 * 2 *", at(2024, 3, 1, 0, 0), at(2025, 2, 1, 12, 0));
    next_is("0 0 1 JUN,DEC *", at(2024, 6, 1, 0, 0), at(2024, 12, 1, 0, 0));
}

static void test_next_leap_years(void **state) {
    (void)state;
    next_is("0 12 29 2 *", at(2023, 3, 1, 0, 0), at(2024, 2, 29, 12, 0));
    next_is("0 12 29 2 *", at(2024, 2, 29, 12, 0), at(2028, 2, 29, 12, 0));
    next_is("0 0 29 2 *", at(1999, 1, 1, 0, 0), at(2000, 2, 29, 0, 0)); /* 400: leap */
    /* 2100 is not a leap year: Feb 29 skips from 2096 to 2104, 8 years. */
    next_is("0 0 29 2 *", at(2096, 3, 1, 0, 0), at(2104, 2, 29, 0, 0));
    next_is("0 0 28 2 *", at(2100, 2, 28, 0, 0), at(2101, 2, 28, 0, 0));
    next_is("0 0 1 3 *", at(2100, 2, 28, 0, 0), at(2100, 3, 1, 0, 0));
    next_is("0 0 * 2 *", at(2024, 2, 28, 0, 0), at(2024, 2, 29, 0, 0));
    next_is("0 0 * 2 *", at(2023, 2, 28, 0, 0), at(2024, 2, 1, 0, 0));
}

static void test_next_never(void **state) {
    (void)state;
    next_is("0 0 30 2 *", at(2024, 1, 1, 0, 0), -1);
    next_is("0 0 31 2 *", 0, -1);
    next_is("0 0 31 4,6,9,11 *", at(2024, 1, 1, 0, 0), -1);
    /* A weekday OR'ed in makes it fire after all (POSIX). */
    next_is("0 0 30 2 MON", at(2024, 1, 1, 0, 0), at(2024, 2, 5, 0, 0));
}

static void test_dom_dow_or_rule(void **state) {
    (void)state;
    /* 2024-09-01 is a Sunday; Fridays: 6, 13, 20, 27. October: the 13th is a Sunday. */
    next_is("0 0 13 * 5", at(2024, 9, 1, 0, 0), at(2024, 9, 6, 0, 0));     /* Friday */
    next_is("0 0 13 * 5", at(2024, 9, 6, 0, 0), at(2024, 9, 13, 0, 0));    /* both */
    next_is("0 0 13 * 5", at(2024, 10, 11, 0, 0), at(2024, 10, 13, 0, 0)); /* the 13th */
    next_is("0 0 13 * FRI", at(2024, 10, 13, 0, 0), at(2024, 10, 18, 0, 0));
    /* One of them unrestricted: both must match, so only the other counts. */
    next_is("0 0 13 * *", at(2024, 9, 1, 0, 0), at(2024, 9, 13, 0, 0));
    next_is("0 0 * * 5", at(2024, 10, 11, 0, 0), at(2024, 10, 18, 0, 0));
    next_is("0 0 1-31 * 5", at(2024, 10, 11, 0, 0), at(2024, 10, 18, 0, 0));
    next_is("0 0 13 * 0-7", at(2024, 9, 1, 0, 0), at(2024, 9, 13, 0, 0));
    /* Both restricted, in a restricted month: the month still has to match. */
    next_is("0 0 1 FEB MON", at(2024, 1, 1, 0, 0), at(2024, 2, 1, 0, 0));
    next_is("0 0 1 FEB MON", at(2024, 2, 1, 0, 0), at(2024, 2, 5, 0, 0));
    /* Sunday as 0 and as 7. */
    next_is("0 9 * * 7", at(2024, 10, 11, 0, 0), at(2024, 10, 13, 9, 0));
    next_is("0 9 * * 0", at(2024, 10, 11, 0, 0), at(2024, 10, 13, 9, 0));
    next_is("0 9 * * SUN", at(2024, 10, 13, 9, 0), at(2024, 10, 20, 9, 0));
}

/* Does minute @p m (since the epoch) match @p c? (the rule written out plainly) */
static bool matches(const srv_cron *c, int64_t m) {
    int64_t day = m >= 0 ? m / 1440 : -((-m + 1439) / 1440);
    int64_t in_day = m - day * 1440;
    int64_t y;
    unsigned mo, d;
    srv_civil_from_days(day, &y, &mo, &d);
    int wd = (int)(((day % 7) + 7 + 4) % 7);
    bool dom = (c->days >> d) & 1, dow = (c->weekdays >> wd) & 1;
    bool day_ok = c->dom_restricted && c->dow_restricted ? dom || dow : dom && dow;
    return ((c->minutes >> (in_day % 60)) & 1) && ((c->hours >> (in_day / 60)) & 1) &&
           ((c->months >> mo) & 1) && day_ok;
}

static void test_next_against_brute_force(void **state) {
    (void)state;
    static const char *const exprs[] = {
        "*/7 3-5 * * *", "0 0 13 * 5",  "15 */5 1,15 * MON-WED", "0 0 * * *",
        "45 23 1 * *",   "59 * 31 * *", "0 12 * JAN,JUL 6",      "*/20 1 28-31 2 *",
    };
    tu_rng rng = {0x9e3779b97f4a7c15u};
    for (size_t i = 0; i < sizeof exprs / sizeof exprs[0]; i++) {
        srv_cron c = parse_ok(exprs[i]);
        for (int k = 0; k < 40; k++) {
            int64_t after = (int64_t)(tu_rand(&rng) % (UINT64_C(4102444800000))) -
                            INT64_C(315532800000); /* 1960 .. 2100 */
            int64_t got = srv_cron_next(&c, after);
            assert_true(got > after);
            assert_int_equal(got % 60000, 0);
            /* Brute force: the first matching minute after `after`, within 400 days. */
            int64_t m = (after >= 0 ? after / 60000 : -((-after + 59999) / 60000)) + 1;
            int64_t want = -1;
            for (int64_t n = 0; n < 400 * 1440; n++, m++) {
                if (matches(&c, m)) {
                    want = m * 60000;
                    break;
                }
            }
            if (want != got) {
                fail_msg("'%s' after %lld: brute force %lld, srv_cron_next %lld", exprs[i],
                         (long long)after, (long long)want, (long long)got);
            }
        }
    }
}

static void test_civil(void **state) {
    (void)state;
    assert_int_equal(srv_days_from_civil(1970, 1, 1), 0);
    assert_int_equal(srv_days_from_civil(1969, 12, 31), -1);
    assert_int_equal(srv_days_from_civil(2000, 3, 1), 11017);
    assert_int_equal(srv_days_from_civil(2024, 2, 29), 19782);
    int64_t prev_y = 0;
    unsigned prev_m = 0, prev_d = 0;
    for (int64_t day = -800000; day <= 800000; day++) {
        int64_t y;
        unsigned m, d;
        srv_civil_from_days(day, &y, &m, &d);
        assert_int_equal(srv_days_from_civil(y, m, d), day);
        assert_true(m >= 1 && m <= 12 && d >= 1 && d <= 31);
        if (day > -800000) { /* consecutive days: the next date */
            bool next = (y == prev_y && m == prev_m && d == prev_d + 1) ||
                        (y == prev_y && m == prev_m + 1 && d == 1) ||
                        (y == prev_y + 1 && m == 1 && d == 1 && prev_m == 12 && prev_d == 31);
            assert_true(next);
        }
        prev_y = y;
        prev_m = m;
        prev_d = d;
    }
}

static void iso_is(const char *s, int64_t want) {
    int64_t got = 12345;
    if (!srv_time_parse_iso(s, &got) || got != want) {
        fail_msg("'%s': want %lld, got %lld", s, (long long)want, (long long)got);
    }
}

static void iso_bad(const char *s) {
    int64_t got = 12345;
    if (srv_time_parse_iso(s, &got)) {
        fail_msg("'%s' should not parse (got %lld)", s != NULL ? s : "(null)", (long long)got);
    }
    assert_int_equal(got, 12345);
}

static void test_iso_times(void **state) {
    (void)state;
    int64_t t = at(2024, 2, 29, 12, 34);
    iso_is("2024-02-29T12:34:56.789Z", t + 56789);
    iso_is("2024-02-29T12:34:56Z", t + 56000);
    iso_is("2024-02-29T12:34Z", t);
    iso_is("2024-02-29t12:34:56.7z", t + 56700);
    iso_is("2024-02-29 12:34:56.123456Z", t + 56123); /* microseconds cut to ms */
    iso_is("2024-02-29T12:34:56,5", t + 56500);       /* no zone: UTC */
    iso_is("2024-02-29", at(2024, 2, 29, 0, 0));
    iso_is("2024-01-01T00:00:00+02:00", at(2023, 12, 31, 22, 0));
    iso_is("2024-01-01T00:00:00-05:30", at(2024, 1, 1, 5, 30));
    iso_is("2024-01-01T00:00:00+0530", at(2023, 12, 31, 18, 30));
    iso_is("2024-01-01T00:00:00+05", at(2023, 12, 31, 19, 0));
    iso_is("1969-12-31T23:59:59.999Z", -1);
    iso_bad(NULL);
    iso_bad("");
    iso_bad("2024");
    iso_bad("2024-02-30");
    iso_bad("2023-02-29");
    iso_bad("2024-13-01");
    iso_bad("2024-00-10");
    iso_bad("2024-01-01T24:00");
    iso_bad("2024-01-01T10:60");
    iso_bad("2024-01-01T10:00:60");
    iso_bad("2024-01-01T10");
    iso_bad("2024-01-01T10:00:00.");
    iso_bad("2024-01-01T10:00:00Zjunk");
    iso_bad("2024-01-01T10:00:00+24:00");
    iso_bad("2024-01-01T10:00:00+1");
    iso_bad("24-01-01");
    iso_bad("next tuesday");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_syntax_forms),    cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_next_basics),     cmocka_unit_test(test_next_month_and_year_ends),
        cmocka_unit_test(test_next_leap_years), cmocka_unit_test(test_next_never),
        cmocka_unit_test(test_dom_dow_or_rule), cmocka_unit_test(test_next_against_brute_force),
        cmocka_unit_test(test_civil),           cmocka_unit_test(test_iso_times),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
