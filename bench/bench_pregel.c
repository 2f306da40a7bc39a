/* SPDX-License-Identifier: MIT */
/*
 * Pregel engine benchmarks (issue 3). Prints figures; never fails on speed.
 *
 *  W1  one vertex adds 1 to a `sum` field and re-activates itself N times
 *      (default 1 000 000 supersteps): ns per superstep.
 *  W2  N Send tasks (default 100 000) of one vertex in one superstep, each
 *      appending one item: ns per task, with 1 and 2 workers.
 *  W2-cpu  the same with a CPU-bound task body (~20 µs of hashing): the
 *      speedup from 1 to 2 workers.
 *
 * Each workload runs in its own child process so its peak RSS is its own.
 * Usage: bench_pregel [--quick] | bench_pregel w1|w2|w2cpu N WORKERS
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "superstep/superstep.h"
#include "workloads.h"

/* ---- W1 ---- */

static int64_t g_limit;

static sst_code inc(sst_task *t, void *ud) {
    (void)ud;
    sst_task_vote_halt(t);
    sst_code rc = sst_task_write(t, "counter", sst_int_new(1, NULL), NULL);
    if (rc == SST_OK && sst_int_value(sst_object_get(sst_task_state(t), "counter")) + 1 < g_limit) {
        rc = sst_task_activate(t, "inc", NULL);
    }
    return rc;
}

/* ---- W2 ---- */

static int64_t g_sends;
static int g_cpu_iters;
static atomic_uint_fast64_t g_sink; /* keeps the CPU-bound loop from being optimised away */

static sst_code split(sst_task *t, void *ud) {
    (void)ud;
    sst_task_vote_halt(t);
    for (int64_t i = 0; i < g_sends; i++) {
        sst_code rc = sst_task_send(t, "work", sst_int_new(i, NULL), NULL);
        if (rc != SST_OK) {
            return rc;
        }
    }
    return SST_OK;
}

static sst_code work(sst_task *t, void *ud) {
    (void)ud;
    sst_task_vote_halt(t);
    int64_t x = sst_int_value(sst_task_input(t));
    uint64_t h = (uint64_t)x;
    for (int i = 0; i < g_cpu_iters; i++) {
        h ^= h >> 33;
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 29;
    }
    atomic_fetch_xor_explicit(&g_sink, h, memory_order_relaxed);
    sst_value *item = sst_int_new(x * 2, NULL);
    return sst_task_write(t, "results", sst_array_push_take(sst_array_empty(), item, NULL), NULL);
}

/* Runs one workload in this process, prints one line, returns ns per unit. */
static double run_workload(const char *w, int64_t n, unsigned workers) {
    sst_error err;
    sst_schema *s = sst_schema_new(&err);
    sst_pregel_builder *b = sst_pregel_builder_new(s, &err);
    const char *start;
    bool is_w1 = strcmp(w, "w1") == 0;
    if (is_w1) {
        g_limit = n;
        if (sst_schema_add_field(s, "counter", sst_reducer_sum(), sst_int_new(0, NULL), &err) ||
            sst_pregel_builder_add_vertex(b, "inc", inc, NULL, NULL, &err)) {
            bw_die("setup", &err);
        }
        start = "inc";
    } else {
        g_sends = n;
        g_cpu_iters = strcmp(w, "w2cpu") == 0 ? 8000 : 0;
        if (sst_schema_add_field(s, "results", sst_reducer_append(), sst_array_empty(), &err) ||
            sst_pregel_builder_add_vertex(b, "split", split, NULL, NULL, &err) ||
            sst_pregel_builder_add_vertex(b, "work", work, NULL, NULL, &err)) {
            bw_die("setup", &err);
        }
        start = "split";
    }
    sst_pregel *p = sst_pregel_builder_build(b, &err);
    sst_engine_opts eo;
    sst_engine_opts_init(&eo);
    eo.workers = workers;
    sst_engine *e = sst_engine_new(&eo, &err);
    if (p == NULL || e == NULL) {
        bw_die("setup", &err);
    }
    sst_run_opts ro;
    sst_run_opts_init(&ro);
    ro.start = &start;
    ro.n_start = 1;
    ro.max_supersteps = (uint64_t)n + 10;
    double t0 = bw_now_s();
    sst_run_result *r = sst_engine_run(e, p, &ro, &err);
    double dt = bw_now_s() - t0;
    if (r == NULL || sst_run_result_status(r) != SST_RUN_COMPLETED) {
        bw_die("run", r != NULL ? sst_run_result_error(r) : &err);
    }
    const sst_value *st = sst_run_result_state(r);
    if (is_w1) {
        if (sst_int_value(sst_object_get(st, "counter")) != n) {
            fprintf(stderr, "bench_pregel: W1 counted wrong\n");
            exit(1);
        }
        printf("%-8s %10" PRId64 " supersteps  %2u worker%s  %9.1f ns/superstep  %8.3f s  peak RSS "
               "%6.1f MiB\n",
               "W1", n, workers, workers == 1 ? " " : "s", dt / (double)n * 1e9, dt,
               (double)bw_peak_rss_kib() / 1024.0);
    } else {
        if ((int64_t)sst_array_len(sst_object_get(st, "results")) != n) {
            fprintf(stderr, "bench_pregel: W2 lost results\n");
            exit(1);
        }
        printf("%-8s %10" PRId64 " tasks       %2u worker%s  %9.1f ns/task       %8.3f s  peak RSS "
               "%6.1f MiB\n",
               strcmp(w, "w2cpu") == 0 ? "W2-cpu" : "W2", n, workers, workers == 1 ? " " : "s",
               dt / (double)n * 1e9, dt, (double)bw_peak_rss_kib() / 1024.0);
    }
    fflush(stdout);
    sst_run_result_free(r);
    sst_engine_free(e);
    sst_pregel_free(p);
    sst_pregel_builder_free(b);
    sst_schema_free(s);
    return dt / (double)n * 1e9;
}

/* Runs a workload in a child process (its own peak RSS); returns ns per unit. */
static double in_child(const char *w, int64_t n, unsigned workers) {
    int fd[2];
    if (pipe(fd) != 0) {
        perror("pipe");
        exit(1);
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        double ns = run_workload(w, n, workers);
        ssize_t wr = write(fd[1], &ns, sizeof ns);
        _exit(wr == (ssize_t)sizeof ns ? 0 : 1);
    }
    close(fd[1]);
    double ns = 0;
    ssize_t got = read(fd[0], &ns, sizeof ns);
    close(fd[0]);
    int status;
    waitpid(pid, &status, 0);
    if (got != (ssize_t)sizeof ns || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "bench_pregel: %s failed\n", w);
        exit(1);
    }
    return ns;
}

int main(int argc, char **argv) {
    if (argc == 4) {
        (void)run_workload(argv[1], strtoll(argv[2], NULL, 10),
                           (unsigned)strtoul(argv[3], NULL, 10));
        return 0;
    }
    bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    int64_t w1 = quick ? 100000 : 1000000, w2 = quick ? 20000 : 100000;
    int64_t w2cpu = quick ? 2000 : 20000;
    printf(
        "superstep %s Pregel benchmark%s (LangGraph.js: W1 817 us/superstep, W2 718 us/Send)\n\n",
        sst_version(), quick ? " (quick)" : "");
    double ns_w1 = in_child("w1", w1, 1);
    double ns_w2 = in_child("w2", w2, 1);
    in_child("w2", w2, 2);
    double cpu1 = in_child("w2cpu", w2cpu, 1);
    double cpu2 = in_child("w2cpu", w2cpu, 2);
    printf("\nW1: %.0f ns per superstep (goal <= 1000; LangGraph.js 817 000): %.0fx faster\n",
           ns_w1, 817000.0 / ns_w1);
    printf("W2: %.0f ns per task (goal <= 2000; LangGraph.js 718 000): %.0fx faster\n", ns_w2,
           718000.0 / ns_w2);
    printf("W2-cpu: 1 -> 2 workers speedup %.2fx (goal >= 1.8x on 2 cores)\n", cpu1 / cpu2);
    return 0;
}
