/* SPDX-License-Identifier: MIT */
/*
 * The background TTL sweeper (LangGraph's start_ttl_sweeper): a thread that
 * deletes expired items every sweep_interval_minutes until the store's last
 * reference goes. It holds no reference itself (else the store would never
 * be freed); sst_store_free stops and joins it before destroying the backend.
 * A failed sweep is retried at the next interval.
 */
#include <errno.h>
#include <math.h>
#include <time.h>

#include "store_int.h"

static void *sweeper_main(void *arg) {
    sst_store *st = arg;
    double secs = st->sweep_interval_minutes * 60.0;
    pthread_mutex_lock(&st->sweep_mu);
    while (!st->sweeper_stop) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        double whole = floor(secs);
        until.tv_sec += (time_t)whole;
        until.tv_nsec += (long)((secs - whole) * 1e9);
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        int rc = 0;
        while (!st->sweeper_stop && rc != ETIMEDOUT) {
            rc = pthread_cond_timedwait(&st->sweep_cv, &st->sweep_mu, &until);
        }
        if (st->sweeper_stop) {
            break;
        }
        pthread_mutex_unlock(&st->sweep_mu);
        size_t removed = 0;
        sst_code code = st->ops.sweep(st->self, sst__store_now(st), &removed, NULL);
        (void)code; /* retried at the next interval */
        pthread_mutex_lock(&st->sweep_mu);
    }
    pthread_mutex_unlock(&st->sweep_mu);
    return NULL;
}

sst_code sst__sweeper_start(sst_store *st, sst_error *err) {
    if (st->sweep_interval_minutes <= 0 || st->ops.sweep == NULL) {
        return SST_OK;
    }
    if (pthread_create(&st->sweeper, NULL, sweeper_main, st) != 0) {
        return sst__error(err, SST_ENOMEM, "store: cannot start the TTL sweeper thread");
    }
    st->sweeper_running = true;
    return SST_OK;
}

void sst__sweeper_stop(sst_store *st) {
    if (!st->sweeper_running) {
        return;
    }
    pthread_mutex_lock(&st->sweep_mu);
    st->sweeper_stop = true;
    pthread_cond_broadcast(&st->sweep_cv);
    pthread_mutex_unlock(&st->sweep_mu);
    pthread_join(st->sweeper, NULL);
    st->sweeper_running = false;
}
