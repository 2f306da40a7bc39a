/* SPDX-License-Identifier: MIT */
/* Retry policies (include/superstep/retry.h): the default and the backoff delay. */
#include <math.h>

#include "common.h"
#include "superstep/retry.h"

void sst_retry_policy_init(sst_retry_policy *p) {
    p->max_attempts = 3;
    p->initial_interval_s = 0.5;
    p->backoff_factor = 2.0;
    p->max_interval_s = 128.0;
    p->jitter = true;
    p->retry_on = NULL;
    p->retry_on_user_data = NULL;
    p->retry_on_error = NULL;
}

uint64_t sst_retry_policy_delay_ms(const sst_retry_policy *p, unsigned attempt, double jitter01) {
    double interval = p->initial_interval_s * pow(p->backoff_factor, attempt > 0 ? attempt - 1 : 0);
    if (!(interval <= p->max_interval_s)) {
        interval = p->max_interval_s; /* also catches an overflow to infinity */
    }
    if (p->jitter) {
        interval += jitter01 < 0 ? 0 : jitter01 >= 1 ? 1 : jitter01;
    }
    return interval <= 0 ? 0 : (uint64_t)llround(interval * 1000.0);
}
