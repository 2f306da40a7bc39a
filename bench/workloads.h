/* SPDX-License-Identifier: MIT */
/*
 * The reference workloads (../shared/peers/langgraphjs, W1-W5) as C graphs,
 * shared by the benchmark programs, and small timing helpers.
 */
#ifndef SUPERSTEP_BENCH_WORKLOADS_H
#define SUPERSTEP_BENCH_WORKLOADS_H

#include "superstep/superstep.h"

double bw_now_s(void);
/* Peak resident set size of this process, KiB. */
long bw_peak_rss_kib(void);
/* Prints "bench: WHAT: message" and exits 1. */
void bw_die(const char *what, const sst_error *err);
/* Parses JSON that must be valid. */
sst_value *bw_json(const char *text);
/* Size of @p db once its WAL is folded in (PRAGMA wal_checkpoint(TRUNCATE)). */
long long bw_db_bytes(const char *db);
/* Removes @p db and its -wal/-shm files. */
void bw_remove_db(const char *db);

/*
 * One invoke of @p cg (on @p th, or NULL) timed; exits unless it completes
 * with the integer field @p key equal to @p want. Returns seconds.
 */
double bw_invoke_timed(const sst_compiled_graph *cg, sst_graph_thread *th, const sst_value *input,
                       uint64_t recursion_limit, const char *key, int64_t want);

/* W1: `inc` adds 1 to a sum field `counter` and loops until counter >= n (input field). */
sst_compiled_graph *bw_w1(void);
/* W2: `split` fans out one Send("work", {x}) per item; `join` sums `results`. */
sst_compiled_graph *bw_w2(void);
/*
 * W3: `llm` appends an assistant message with a tool call, `tool` answers it;
 * loops until bw_w3_set_target's iteration count is reached.
 */
sst_compiled_graph *bw_w3(void);
void bw_w3_set_target(long iterations);
/* W4: a 3-node chain a -> b -> c on `value` (v+1, *2, -3) with an append field `path`. */
sst_compiled_graph *bw_w4(void);
/* W5a: two parallel nodes add 4 each to a sum field `counter`. */
sst_compiled_graph *bw_w5_sum(void);
/* W5b: two parallel nodes write a single-writer (unique, LangGraph's LastValue) field `key`. */
sst_compiled_graph *bw_w5_plain(void);

#endif
