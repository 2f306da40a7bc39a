/* SPDX-License-Identifier: MIT */
/* libcurl's setup, Retry-After and the wait between attempts; see http_client.h. */
#include "http_client.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <pthread.h>

#include "common.h"

static void global_init(void) {
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

void sst__http_global_init(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, global_init);
}

/* ---- Retry-After ----------------------------------------------------------------------- */

static int64_t capped(double ms) {
    return ms >= (double)SST__RETRY_AFTER_MAX_MS ? SST__RETRY_AFTER_MAX_MS : (int64_t)ms;
}

/* delta-seconds, digits with an optional fraction: the wait, or -1. */
static int64_t delta_seconds(const char *v) {
    size_t dots = 0;
    for (const char *c = v; *c != '\0'; c++) {
        dots += *c == '.';
        if ((!isdigit((unsigned char)*c) && *c != '.') || dots > 1 || v[0] == '.') {
            return -1;
        }
    }
    char *end;
    double s = strtod(v, &end);
    return *end == '\0' && s >= 0 ? capped(s * 1000.0) : -1;
}

static int month_of(const char *m) {
    static const char *const names[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    for (int i = 0; i < 12; i++) {
        if (strcmp(m, names[i]) == 0) {
            return i;
        }
    }
    return -1;
}

/* An HTTP-date in any of its three forms: seconds since the epoch, or -1. */
static int64_t http_date(const char *v) {
    char wday[16], mon[4], tail[8];
    int d = 0, y = 0, hh = 0, mm = 0, ss = 0, n = 0;
    bool ok = false;
    /* IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT */
    if (sscanf(v, "%15[A-Za-z], %2d %3s %4d %2d:%2d:%2d %7s%n", wday, &d, mon, &y, &hh, &mm, &ss,
               tail, &n) == 8 &&
        v[n] == '\0' && strcmp(tail, "GMT") == 0) {
        ok = true;
        /* RFC 850: Sunday, 06-Nov-94 08:49:37 GMT (a two-digit year is 19xx or 20xx) */
    } else if (sscanf(v, "%15[A-Za-z], %2d-%3[A-Za-z]-%2d %2d:%2d:%2d %7s%n", wday, &d, mon, &y,
                      &hh, &mm, &ss, tail, &n) == 8 &&
               v[n] == '\0' && strcmp(tail, "GMT") == 0) {
        ok = true;
        y += y < 70 ? 2000 : 1900;
        /* asctime: Sun Nov  6 08:49:37 1994 */
    } else if (sscanf(v, "%15[A-Za-z] %3s %2d %2d:%2d:%2d %4d%n", wday, mon, &d, &hh, &mm, &ss, &y,
                      &n) == 7 &&
               v[n] == '\0') {
        ok = true;
    }
    int m = ok ? month_of(mon) : -1;
    if (m < 0 || d < 1 || d > 31 || y < 1970 || hh > 23 || mm > 59 || ss > 60) {
        return -1;
    }
    /* Days from the civil date (Howard Hinnant's algorithm): no timegm, no TZ. */
    int yy = y - (m < 2 ? 1 : 0);
    int era = yy / 400;
    int yoe = yy - era * 400;
    int mp = (m + 10) % 12; /* m counts from 0: March is 0 here */
    int doy = (153 * mp + 2) / 5 + d - 1;
    int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    int64_t days = (int64_t)era * 146097 + doe - 719468;
    return days * 86400 + hh * 3600 + mm * 60 + ss;
}

int64_t sst__retry_after_parse(const char *value, size_t len, int64_t now_ms) {
    while (len > 0 && isspace((unsigned char)value[0])) {
        value++, len--;
    }
    while (len > 0 && isspace((unsigned char)value[len - 1])) {
        len--;
    }
    char v[64];
    if (len == 0 || len >= sizeof v) {
        return -1;
    }
    memcpy(v, value, len);
    v[len] = '\0';
    int64_t ms = delta_seconds(v);
    if (ms >= 0 || isdigit((unsigned char)v[0])) {
        return ms;
    }
    int64_t at = http_date(v);
    if (at < 0) {
        return -1;
    }
    double wait = (double)at * 1000.0 - (double)now_ms;
    return wait <= 0 ? 0 : capped(wait);
}

int64_t sst__retry_after_header(const char *line, size_t len) {
    static const char name[] = "retry-after:";
    if (len <= sizeof name - 1 || strncasecmp(line, name, sizeof name - 1) != 0) {
        return -1;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    return sst__retry_after_parse(line + sizeof name - 1, len - (sizeof name - 1), now_ms);
}

/* ---- waits ----------------------------------------------------------------------------- */

uint64_t sst__http_retry_wait_ms(const sst_retry_policy *p, unsigned attempt,
                                 int64_t retry_after_ms, uint64_t cap_ms) {
    uint64_t wait;
    if (retry_after_ms >= 0) {
        wait = (uint64_t)retry_after_ms;
    } else {
        uint32_t r = 0;
        if (p->jitter) {
            (void)sst__random_bytes(&r, sizeof r, NULL); /* without random bytes: no jitter */
        }
        wait = sst_retry_policy_delay_ms(p, attempt, (double)r / 4294967296.0);
    }
    return wait < cap_ms ? wait : cap_ms;
}

static pthread_mutex_t hook_mu = PTHREAD_MUTEX_INITIALIZER;
static sst__http_wait_fn hook_fn; /* hook_mu; tests only */
static void *hook_ud;             /* hook_mu */

void sst__http_set_wait_hook(sst__http_wait_fn fn, void *ud) {
    pthread_mutex_lock(&hook_mu);
    hook_fn = fn;
    hook_ud = ud;
    pthread_mutex_unlock(&hook_mu);
}

bool sst__http_wait_hooked(const char *who, uint64_t ms) {
    pthread_mutex_lock(&hook_mu);
    sst__http_wait_fn fn = hook_fn;
    void *ud = hook_ud;
    pthread_mutex_unlock(&hook_mu);
    if (fn == NULL) {
        return false;
    }
    fn(ud, who, ms);
    return true;
}

bool sst__http_wait(const char *who, uint64_t ms, bool (*stop)(void *ud), void *ud) {
    if (sst__http_wait_hooked(who, ms)) {
        return stop == NULL || !stop(ud);
    }
    while (ms > 0) {
        if (stop != NULL && stop(ud)) {
            return false;
        }
        uint64_t slice = ms < 100 ? ms : 100;
        sst__sleep_ms(slice);
        ms -= slice;
    }
    return stop == NULL || !stop(ud);
}
