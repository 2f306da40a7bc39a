/* SPDX-License-Identifier: MIT */
/*
 * One busy handler for every SQLite connection of the library (savers,
 * store, cache, run queue). SQLite's own (sqlite3_busy_timeout) sleeps 1 ms
 * first and longer later; the connections of one process that share a file
 * (`superstep serve`: the saver, the store and the queue) wait on each other
 * for a few microseconds at a time, so those sleeps dominated a run's
 * latency. This one waits 10 us, doubling up to 1 ms, until the timeout.
 */
#include <sqlite3.h>
#include <stdint.h>
#include <time.h>

#include "common.h"

static int busy(void *arg, int count) {
    int timeout_ms = (int)(intptr_t)arg;
    /* Each wait is at most 1 ms: count calls have waited less than count ms. */
    if (count > timeout_ms + 8) {
        return 0;
    }
    long us = count < 7 ? 10L << count : 1000L;
    struct timespec ts = {0, us * 1000L};
    nanosleep(&ts, NULL);
    return 1;
}

void sst__sqlite_busy(struct sqlite3 *db, int timeout_ms) {
    sqlite3_busy_handler(db, busy, (void *)(intptr_t)timeout_ms);
}
