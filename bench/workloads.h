/* SPDX-License-Identifier: MIT */
/*
 * The reference workloads (../shared/peers/langgraphjs, W1-W5, and W6 of
 * bench/langgraphjs) as C graphs, shared by the benchmark programs, and small
 * timing helpers.
 */
#ifndef SUPERSTEP_BENCH_WORKLOADS_H
#define SUPERSTEP_BENCH_WORKLOADS_H

#include "superstep/superstep.h"

double bw_now_s(void);
/* CPU time of this process (user and system, all threads), seconds. */
double bw_cpu_s(void);
/* The median of @p n figures (at most BW_MAX_REPS are read). */
#define BW_MAX_REPS 16
double bw_median(const double *xs, int n);
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
/* W1 with options for its node "inc" and for the compile (each may be NULL). */
sst_compiled_graph *bw_w1_with(const sst_node_opts *inc_opts, const sst_compile_opts *co);
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

/*
 * W6: W1's loop three graphs deep (issue 15). The root runs node "mid", a
 * subgraph that runs node "inner", a subgraph that is W1 itself. All three
 * declare W1's fields (`counter`, sum; `n`, replace), shared by name. The
 * children are borrowed by their parents: free all three together.
 */
typedef struct bw_nested {
    sst_compiled_graph *root;  /* START -> mid -> END */
    sst_compiled_graph *mid;   /* START -> inner -> END */
    sst_compiled_graph *inner; /* bw_w1() */
} bw_nested;
void bw_w6(bw_nested *w);
void bw_w6_free(bw_nested *w);

/* What one durable loop run cost (bw_loop_sqlite). */
typedef struct bw_durable {
    double wall_s;       /* the invoke alone */
    double cpu_s;        /* the process's CPU time (user + system) during the invoke */
    long long db_bytes;  /* the file after a WAL checkpoint */
    size_t checkpoints;  /* stored, every namespace */
    size_t per_depth[3]; /* of which at nesting depth 0 (root), 1 and 2 or deeper */
} bw_durable;

/*
 * One invoke of @p cg with {"counter":0,"n":n} on a new thread of a fresh
 * SQLite file @p db (removed before, and after unless SST_BENCH_KEEP is
 * set); exits unless counter == n.
 */
bw_durable bw_loop_sqlite(const sst_compiled_graph *cg, const char *db, long n);

#endif
