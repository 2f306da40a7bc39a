/* SPDX-License-Identifier: MIT */
/*
 * Cron schedules (the five fields of crontab(5): minute, hour, day of month,
 * month, day of week), evaluated in UTC, and the calendar arithmetic they
 * need (UTC only: no time zone database, no gmtime). The server's crons
 * (crons.c, docs/server.md "Crons") are built on it.
 */
#ifndef SUPERSTEP_SERVER_CRON_EXPR_H
#define SUPERSTEP_SERVER_CRON_EXPR_H

#include <stdbool.h>
#include <stdint.h>

#include "superstep/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A parsed schedule: one bit per value each field allows. */
typedef struct srv_cron {
    uint64_t minutes;    /* bits 0..59 */
    uint32_t hours;      /* bits 0..23 */
    uint32_t days;       /* bits 1..31 (day of month) */
    uint16_t months;     /* bits 1..12 */
    uint8_t weekdays;    /* bits 0..6, 0 = Sunday (7 in the text is Sunday too) */
    bool dom_restricted; /* the day-of-month field does not allow every day */
    bool dow_restricted; /* the day-of-week field does not allow every weekday */
} srv_cron;

/*
 * Parses a 5-field cron expression into @p out.
 *
 * Fields are separated by spaces or tabs. Each field is a comma-separated
 * list of items; an item is "*", a number, a range "a-b", or either of those
 * followed by a step "/n" ("*" + "/n" is every n-th value of the whole range,
 * "a/n" is a-max/n). Months may be named JAN..DEC and weekdays SUN..SAT (any
 * case, in ranges too); weekday 7 is Sunday, and a weekday range ending in
 * SUN ("MON-SUN") ends at 7. The macros @yearly (@annually), @monthly,
 * @weekly, @daily (@midnight) and @hourly stand for their usual expressions.
 *
 * Days follow the POSIX rule: when both the day-of-month and the day-of-week
 * fields are restricted (allow fewer than all their values), a day matches
 * when EITHER matches; otherwise both must ("0 0 13 * 5" is every 13th and
 * every Friday; "0 0 * * 5" every Friday).
 *
 * @param expr the expression (NUL-terminated); NULL is an error.
 * @param out  OUT: the schedule; unchanged on failure.
 * @param err  optional; on failure SST_EINVAL with a message naming the field
 *             ("day-of-month"), the 1-based character position in @p expr and
 *             the problem ("32 is out of range 1-31").
 * @return SST_OK or SST_EINVAL.
 */
SST_NODISCARD sst_code srv_cron_parse(const char *expr, srv_cron *out, sst_error *err);

/*
 * The first minute matching @p c strictly after @p after_ms (UTC, ms since
 * the Unix epoch; negative times are fine), in ms (a multiple of 60000), or
 * -1 when none comes within 8 years (the longest gap of a valid schedule is
 * Feb 29 across 2100, so -1 means the schedule never fires: "0 0 30 2 *").
 */
int64_t srv_cron_next(const srv_cron *c, int64_t after_ms);

/* Days since 1970-01-01 of the proleptic Gregorian date @p y-@p m-@p d (m 1..12). */
int64_t srv_days_from_civil(int64_t y, unsigned m, unsigned d);
/* The date of @p days since 1970-01-01: OUT @p y, @p m (1..12), @p d (1..31). */
void srv_civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d);

/*
 * Parses an ISO 8601 / RFC 3339 date-time into ms since the epoch:
 * "YYYY-MM-DD", or that followed by "T" (or a space) and "HH:MM", "HH:MM:SS"
 * or "HH:MM:SS.fff" (any number of fraction digits; ms kept, the rest
 * truncated), then optionally "Z" or an offset "+HH:MM" / "-HH:MM" / "+HHMM"
 * / "+HH". No zone means UTC. Fields are range-checked (the day against the
 * month, seconds 0..59: no leap seconds).
 * @return false (and *out_ms unchanged) when @p s is not such a text.
 */
bool srv_time_parse_iso(const char *s, int64_t *out_ms);

#ifdef __cplusplus
}
#endif

#endif
