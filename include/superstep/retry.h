/* SPDX-License-Identifier: MIT */
/*
 * Retry policies (LangGraph's RetryPolicy): how often a failing piece of
 * work is tried again and how long to wait in between. The engine retries
 * tasks under them (pregel.h); the HTTP clients and the SQLite cache back
 * off by them. A common-layer header, so that every layer may use one.
 */
#ifndef SUPERSTEP_RETRY_H
#define SUPERSTEP_RETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "superstep/error.h"
#include "superstep/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Decides whether a failure with @p code is retried. */
typedef bool (*sst_retry_on_fn)(sst_code code, void *user_data);

/**
 * Decides whether a failure is retried, seeing the whole error (borrowed:
 * code and message) and the vertex (borrowed). Called on the thread running
 * the engine (sst_engine_run's caller), between a superstep's attempts.
 */
typedef bool (*sst_retry_on_error_fn)(const sst_error *error, const char *vertex, void *user_data);

/**
 * How a failing task is retried (LangGraph's RetryPolicy). Fill with
 * sst_retry_policy_init (or SST_RETRY_POLICY_DEFAULT), then adjust.
 *
 * A vertex or a node has no retry unless it asks for one: its options start
 * with a policy of one attempt (the other fields as in the default policy,
 * so setting max_attempts alone gives LangGraph's RetryPolicy(max_attempts)).
 */
typedef struct sst_retry_policy {
    unsigned max_attempts;     /* total attempts, first included; default 3 */
    double initial_interval_s; /* delay before the first retry; default 0.5 */
    double backoff_factor;     /* multiplier per retry; default 2.0 */
    double max_interval_s;     /* cap on the delay; default 128 */
    bool jitter;               /* add a uniform 0..1 s; default true */
    sst_retry_on_fn retry_on;  /* NULL: sst_code_is_transient */
    void *retry_on_user_data;  /* for retry_on and retry_on_error */
    /* Takes precedence over retry_on when set; NULL: retry_on decides. */
    sst_retry_on_error_fn retry_on_error;
} sst_retry_policy;

/**
 * The default retry policy as an initializer (LangGraph's RetryPolicy()):
 * 3 attempts, 0.5 s before the first retry, x2 per retry, 128 s cap, jitter,
 * transient codes retried. `sst_retry_policy p = SST_RETRY_POLICY_DEFAULT;`
 */
#define SST_RETRY_POLICY_DEFAULT                                                                   \
    { 3, 0.5, 2.0, 128.0, true, NULL, NULL, NULL }

/** Fills @p p with the default policy (SST_RETRY_POLICY_DEFAULT). */
SST_API void sst_retry_policy_init(sst_retry_policy *p);

/**
 * The delay in milliseconds before attempt @p attempt + 1 when attempt
 * @p attempt (1-based) failed: min(max_interval, initial * factor^(attempt-1)),
 * plus @p jitter01 (a number in [0, 1)) seconds when jitter is on.
 */
SST_API uint64_t sst_retry_policy_delay_ms(const sst_retry_policy *p, unsigned attempt,
                                           double jitter01);

#ifdef __cplusplus
}
#endif

#endif /* SUPERSTEP_RETRY_H */
