/* SPDX-License-Identifier: MIT */
/*
 * Crash test (issue 5): a child process runs a 2 000-superstep graph (sum,
 * append, add_messages, parallel nodes and a Send fan-out) on a SQLite file
 * with SST_DURABILITY_SYNC and is killed with SIGKILL at 50 random points;
 * after each kill a new process resumes the thread. A victim is killed once it
 * has logged a random amount of progress (read from the side-effect log), never
 * after a fixed time, so the test means the same on a fast or a loaded machine.
 * At the end:
 *
 *   - the final state is byte-identical (canonical JSON) to an uninterrupted
 *     run's;
 *   - no process re-ran a superstep that had committed before it started
 *     (every node appends "pid step node" to a side-effect file, every
 *     process "start pid step" with the step it resumed at);
 *   - PRAGMA integrity_check says ok.
 *
 * With "nested" (issue 15) the graph runs as a subgraph: the root's one node
 * "sub" runs the loop as a compiled child graph checkpointing under its own
 * namespace, so the kills land inside the subgraph, and each resume must go on
 * inside it: no process re-runs a superstep of the child that had committed.
 *
 * With "async" the runs use durability async (issue 37): a superstep's checkpoint
 * is written while the next one computes, so a kill may cost the superstep whose
 * checkpoint was in flight too. Besides the checks above, each resumed process
 * must start at most that far back: at the step its predecessor was running (sync)
 * or the one before it (async), never earlier. With "pg" the thread lives in a
 * fresh schema of the test PostgreSQL server (the CTest fixture "pg"; skipped
 * with a message when there is none) instead of a SQLite file.
 *
 * With "exit" the runs use durability exit: a run's one checkpoint is committed when its
 * invoke ends, so the loop is cut into invokes ("turns": each ends after a tick whose
 * counter is odd, from 3 on, so never where a Send fan-out starts) and every process
 * invokes turn after turn until the loop is done. Every invoke logs "start pid step hash"
 * before it and "end pid step hash" after it (hash: FNV-1a of the canonical state it read,
 * or at the end the one the invoke returned, with the step of the latest checkpoint). The
 * guarantee checked: only what the last invoke that ended wrote survives. Every invoke
 * starts from a state with no pending task (never a torn turn) that is byte-identical to
 * the uninterrupted run's at the end of the same turn (the hashes), and a resumed process
 * starts exactly where the last invoke that logged its end ended, or, if its predecessor
 * was killed between an invoke's return and its "end" line, at the end of the turn after.
 * A killed invoke runs again from its start.
 *
 * A victim killed while it appends a line may leave that line torn: a write that
 * crosses a page boundary of the log is cut there when SIGKILL lands between its
 * pages (the log once held "14958 1" + the next process's "start 14962 155", read as
 * "process 14958 re-ran committed superstep 1"). After each kill the log is cut back
 * to its last whole line (trim_torn_line); "test_crash logcheck" checks that.
 *
 * Usage: test_crash [ITERATIONS [KILLS [flat|nested [sync|async|exit [sqlite|pg]]]]]
 *        (defaults 1000, 50, flat, sync, sqlite)
 *        test_crash logcheck
 *
 * On a failure the files are kept (the message names the directory).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "superstep/superstep.h"
#include "test_util.h"

static long g_iterations = 1000;
static const char *g_log;
static bool g_nested; /* the loop runs as the root's subgraph "sub" */
static sst_durability g_mode = SST_DURABILITY_SYNC;
static bool g_pg;    /* the databases are PostgreSQL URLs, not SQLite files */
static bool g_turns; /* exit mode: the loop runs as many invokes (turns), see the top */

/* Whether the loop's invoke ends after the tick that made counter C (not the whole loop). */
static bool turn_ends(int64_t c) {
    return g_turns && c >= 3 && c % 2 == 1;
}

static sst_checkpointer *open_saver(const char *db, sst_error *err) {
    return g_pg ? sst_postgres_saver_open(db, NULL, err) : sst_sqlite_saver_open(db, NULL, err);
}

static char g_dir[] = "/tmp/sst-crash-XXXXXX"; /* the run's files, kept on a failure */

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "test_crash: " __VA_ARGS__);                                           \
            fprintf(stderr, " (files kept in %s)\n", g_dir);                                       \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static void side_effect(const char *line) {
    int fd = open(g_log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
        ssize_t w = write(fd, line, strlen(line));
        (void)w;
        close(fd);
    }
}

static void record(sst_node_ctx *ctx) {
    char line[96];
    snprintf(line, sizeof line, "%d %llu %s\n", (int)getpid(),
             (unsigned long long)sst_node_step(ctx), sst_node_name(ctx));
    side_effect(line);
}

static int64_t counter_of(const sst_node_ctx *ctx) {
    return sst_int_value(sst_object_get(sst_node_state(ctx), "counter"));
}

static sst_value *json(const char *text) {
    sst_value *v = sst_json_parse(text, NULL);
    CHECK(v != NULL, "bad JSON in the test: %s", text);
    return v;
}

static sst_code tick(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    record(ctx);
    int64_t c = counter_of(ctx) + 1;
    char msg[128];
    snprintf(msg, sizeof msg, "{\"id\":\"m%lld\",\"role\":\"user\",\"content\":\"tick %lld\"}",
             (long long)c, (long long)c);
    sst_code rc = sst_node_update(ctx, "counter", sst_int_new(1, NULL), NULL);
    return rc == SST_OK ? sst_node_update(ctx, "messages", json(msg), NULL) : rc;
}

static sst_code left(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    record(ctx);
    char item[32];
    snprintf(item, sizeof item, "[\"L%lld\"]", (long long)counter_of(ctx));
    return sst_node_update(ctx, "log", json(item), NULL);
}

static sst_code right(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    record(ctx);
    int64_t c = counter_of(ctx);
    char msg[128];
    snprintf(msg, sizeof msg,
             "[{\"id\":\"r%lld\",\"role\":\"assistant\",\"content\":\"reply %lld\"}]", (long long)c,
             (long long)c);
    return sst_node_update(ctx, "messages", json(msg), NULL);
}

static sst_code fan(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    record(ctx);
    return sst_node_update(ctx, "fan", sst_value_ref(sst_node_input(ctx)), NULL);
}

static sst_value *after_tick(const sst_value *state, void *ud, sst_error *err) {
    (void)ud;
    int64_t c = sst_int_value(sst_object_get(state, "counter"));
    if (c >= g_iterations || turn_ends(c)) {
        return sst_string_new(SST_END, err);
    }
    sst_value *t = json("[\"left\", \"right\"]");
    for (int64_t i = 1; c % 10 == 0 && i <= 3; i++) {
        t = sst_array_push_take(t, sst_send_new("fan", sst_int_new(c * 10 + i, NULL), err), err);
    }
    return t;
}

/* The loop graph (the root, or with g_nested the child). */
static sst_compiled_graph *build_loop(sst_graph **out) {
    sst_error err;
    sst_graph *g = sst_graph_new(&err);
    CHECK(g != NULL, "graph");
    CHECK(sst_graph_add_field(g, "counter", sst_reducer_sum(), sst_int_new(0, NULL), &err) == 0 &&
              sst_graph_add_field(g, "fan", sst_reducer_sum(), sst_int_new(0, NULL), &err) == 0 &&
              sst_graph_add_field(g, "log", sst_reducer_append(), sst_array_empty(), &err) == 0 &&
              sst_graph_add_field(g, "messages", sst_reducer_add_messages(), sst_array_empty(),
                                  &err) == 0,
          "fields: %s", err.msg);
    CHECK(sst_graph_add_node(g, "tick", tick, NULL, NULL, &err) == 0 &&
              sst_graph_add_node(g, "left", left, NULL, NULL, &err) == 0 &&
              sst_graph_add_node(g, "right", right, NULL, NULL, &err) == 0 &&
              sst_graph_add_node(g, "fan", fan, NULL, NULL, &err) == 0,
          "nodes: %s", err.msg);
    CHECK(sst_graph_add_edge(g, SST_START, "tick", &err) == 0 &&
              sst_graph_add_conditional_edges(g, "tick", after_tick, NULL, NULL, &err) == 0 &&
              sst_graph_add_edge(g, "left", "tick", &err) == 0 &&
              sst_graph_add_edge(g, "right", "tick", &err) == 0 &&
              sst_graph_add_edge(g, "fan", "tick", &err) == 0,
          "edges: %s", err.msg);
    sst_compiled_graph *cg = sst_graph_compile(g, NULL, &err);
    CHECK(cg != NULL, "compile: %s", err.msg);
    *out = g;
    return cg;
}

/* With g_nested: the child's builder and compiled graph, freed by free_graphs. */
static sst_graph *g_child;
static sst_compiled_graph *g_child_cg;

/* The graph a process runs: the loop, or a root whose node "sub" runs the loop. */
static sst_compiled_graph *build(sst_graph **out) {
    if (!g_nested) {
        return build_loop(out);
    }
    g_child_cg = build_loop(&g_child);
    sst_error err;
    sst_graph *g = sst_graph_new(&err);
    CHECK(g != NULL, "graph");
    CHECK(
        sst_graph_add_field(g, "counter", sst_reducer_replace(), sst_int_new(0, NULL), &err) == 0 &&
            sst_graph_add_field(g, "fan", sst_reducer_replace(), sst_int_new(0, NULL), &err) == 0 &&
            sst_graph_add_field(g, "log", sst_reducer_replace(), sst_array_empty(), &err) == 0 &&
            sst_graph_add_field(g, "messages", sst_reducer_replace(), sst_array_empty(), &err) ==
                0 &&
            sst_graph_add_subgraph(g, "sub", g_child_cg, NULL, &err) == 0 &&
            sst_graph_add_edge(g, SST_START, "sub", &err) == 0,
        "root: %s", err.msg);
    sst_compiled_graph *cg = sst_graph_compile(g, NULL, &err);
    CHECK(cg != NULL, "compile: %s", err.msg);
    *out = g;
    return cg;
}

static void free_graphs(sst_compiled_graph *cg, sst_graph *g) {
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
    sst_compiled_graph_free(g_child_cg);
    sst_graph_free(g_child);
    g_child_cg = NULL;
    g_child = NULL;
}

/* With g_nested, where a finished run resumes: past every step of the child. */
#define FINISHED_STEP ((int64_t)1 << 40)

/*
 * The superstep the loop resumes at (-1000 before it started): the child's with g_nested,
 * or FINISHED_STEP when the root has no task left (the run finished: a victim was killed
 * after its last commit), where there is no child state to read a step from.
 */
static int64_t resume_step(sst_graph_thread *th, const sst_value *st) {
    if (!g_nested || st == NULL) {
        return st != NULL ? sst_int_value(sst_object_get(st, "step")) : -1000;
    }
    if (sst_array_len(sst_object_get(st, "next")) == 0) {
        return FINISHED_STEP;
    }
    sst_error err;
    sst_value *nested = sst_graph_get_state_nested(th, NULL, &err);
    CHECK(nested != NULL, "nested state: %s", err.msg);
    const sst_value *child =
        sst_object_get(sst_array_get(sst_object_get(nested, "tasks"), 0), "state");
    const sst_value *step = sst_object_get(child, "step");
    int64_t s = step != NULL ? sst_int_value(step) : -1000;
    sst_value_unref(nested);
    return s;
}

/* FNV-1a of the canonical JSON of a state's values (0 for none). */
static unsigned long long values_hash(const sst_value *values) {
    if (values == NULL) {
        return 0;
    }
    char *text = sst_json_write(values, SST_JSON_CANONICAL, NULL, NULL);
    CHECK(text != NULL, "state to JSON");
    unsigned long long h = 14695981039346656037ull;
    for (const unsigned char *p = (const unsigned char *)text; *p != 0; p++) {
        h = (h ^ *p) * 1099511628211ull;
    }
    sst_free(text);
    return h;
}

/*
 * Exit mode (g_turns): invoke turn after turn until the loop is done, logging each
 * invoke's start and end (see the top). Every turn must start from a whole turn's state.
 */
static void run_turns(sst_compiled_graph *cg, sst_graph_thread *th, const sst_invoke_opts *o) {
    sst_error err;
    for (;;) {
        sst_value *st = sst_graph_get_state(th, NULL, &err); /* NULL: no checkpoint yet */
        CHECK(st == NULL || sst_array_len(sst_object_get(st, "next")) == 0,
              "process %d found a torn turn: the thread's state has pending tasks, but with "
              "durability exit only an invoke that ended may have written",
              (int)getpid());
        int64_t counter =
            st != NULL ? sst_int_value(sst_object_get(sst_object_get(st, "values"), "counter")) : 0;
        char line[96];
        snprintf(line, sizeof line, "start %d %lld %llu\n", (int)getpid(),
                 (long long)resume_step(th, st), values_hash(sst_object_get(st, "values")));
        sst_value_unref(st);
        if (counter >= g_iterations) {
            return;
        }
        side_effect(line);
        sst_value *input = json("{}");
        sst_graph_result *r = sst_graph_invoke(cg, th, input, o, &err);
        CHECK(r != NULL, "invoke: %s", err.msg);
        CHECK(sst_graph_result_status(r) == SST_RUN_COMPLETED, "run ended with %s: %s",
              sst_run_status_name(sst_graph_result_status(r)), sst_graph_result_error(r)->msg);
        /* The state the invoke returned (not the one stored: what ended must be what
         * survives), at the step of the thread's latest checkpoint. */
        unsigned long long returned = values_hash(sst_graph_result_state(r));
        sst_graph_result_free(r);
        sst_value_unref(input);
        st = sst_graph_get_state(th, NULL, &err);
        CHECK(st != NULL, "state after a turn: %s", err.msg);
        snprintf(line, sizeof line, "end %d %lld %llu\n", (int)getpid(),
                 (long long)resume_step(th, st), returned);
        sst_value_unref(st);
        side_effect(line);
    }
}

/* One process: resume the thread (or start it) and run to completion. */
static void run_to_end(const char *db) {
    sst_graph *g;
    sst_compiled_graph *cg = build(&g);
    sst_error err;
    sst_checkpointer *cp = open_saver(db, &err);
    CHECK(cp != NULL, "open %s: %s", db, err.msg);
    sst_graph_thread *th = sst_graph_thread_open(cg, cp, "crash", &err);
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    o.recursion_limit = 100000;
    o.durability = g_mode;
    o.wait = true; /* a killed predecessor's lock is taken over */
    if (g_turns) {
        run_turns(cg, th, &o);
        sst_graph_thread_free(th);
        sst_checkpointer_free(cp);
        free_graphs(cg, g);
        return;
    }
    sst_value *st = sst_graph_get_state(th, NULL, &err);
    int64_t start = resume_step(th, st);
    char line[64];
    snprintf(line, sizeof line, "start %d %lld\n", (int)getpid(), (long long)start);
    side_effect(line);
    sst_value *input = st == NULL ? json("{}") : NULL;
    sst_value_unref(st);
    sst_graph_result *r = sst_graph_invoke(cg, th, input, &o, &err);
    CHECK(r != NULL, "invoke: %s", err.msg);
    CHECK(sst_graph_result_status(r) == SST_RUN_COMPLETED, "run ended with %s: %s",
          sst_run_status_name(sst_graph_result_status(r)), sst_graph_result_error(r)->msg);
    sst_graph_result_free(r);
    sst_value_unref(input);
    sst_graph_thread_free(th);
    sst_checkpointer_free(cp);
    free_graphs(cg, g);
}

static pid_t spawn(const char *db) {
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0, "fork failed");
    if (pid == 0) {
        run_to_end(db);
        _exit(0);
    }
    return pid;
}

static int wait_for(pid_t pid) {
    int status;
    waitpid(pid, &status, 0);
    return status;
}

/* The final state, canonical JSON (malloc'd). */
static char *final_state(const char *db) {
    sst_graph *g;
    sst_compiled_graph *cg = build(&g);
    sst_error err;
    sst_checkpointer *cp = open_saver(db, &err);
    CHECK(cp != NULL, "reopen %s: %s", db, err.msg);
    sst_graph_thread *th = sst_graph_thread_open(cg, cp, "crash", &err);
    sst_value *st = sst_graph_get_state(th, NULL, &err);
    CHECK(st != NULL, "final state: %s", err.msg);
    CHECK(sst_array_len(sst_object_get(st, "next")) == 0, "the run is not finished");
    char *text = sst_json_write(sst_object_get(st, "values"), SST_JSON_CANONICAL, NULL, NULL);
    char *copy = strdup(text);
    sst_free(text);
    sst_value_unref(st);
    sst_graph_thread_free(th);
    sst_checkpointer_free(cp);
    free_graphs(cg, g);
    return copy;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The size of a file, 0 if it does not exist yet. */
static off_t file_size(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 ? sb.st_size : 0;
}

/*
 * Cuts the log at @p path back to its last whole line: a killed victim's torn last line
 * (see the top) goes, so the next process's lines start lines of their own.
 */
static void trim_torn_line(const char *path) {
    int fd = open(path, O_RDWR);
    if (fd < 0) {
        return; /* the victim logged nothing */
    }
    off_t end = lseek(fd, 0, SEEK_END);
    CHECK(end >= 0, "seek in %s", path);
    char c = '\n';
    while (end > 0 && pread(fd, &c, 1, end - 1) == 1 && c != '\n') {
        end--;
    }
    CHECK(end == 0 || c == '\n', "read %s", path);
    CHECK(ftruncate(fd, end) == 0, "truncate %s", path);
    close(fd);
}

/*
 * Waits until the log at PATH has grown to SIZE bytes (returns false: the child
 * is still running) or the child exits first (returns true, its status in *STATUS).
 * No time limit: progress, not time, decides when a victim dies.
 */
static bool wait_for_progress(pid_t pid, const char *path, off_t size, int *status) {
    const struct timespec tick = {0, 200000}; /* 0.2 ms between looks */
    for (;;) {
        if (file_size(path) >= size) {
            return false;
        }
        pid_t done = waitpid(pid, status, WNOHANG);
        CHECK(done >= 0, "waitpid failed");
        if (done == pid) {
            return true;
        }
        nanosleep(&tick, NULL);
    }
}

/* Checks the side-effect log: no process ran a step below the one it started at. */
static long long g_last_step; /* the highest step any process executed */

/* Exit mode: the turns' ends of the uninterrupted run (step, state hash), from its log. */
enum { MAXT = 16384 };
static long long g_end_step[MAXT];
static unsigned long long g_end_hash[MAXT];
static int g_nends;

/* The uninterrupted run's first turn end after step @p after (-1000: none yet). */
static long long ref_end_after(long long after) {
    for (int i = 0; i < g_nends; i++) {
        if (g_end_step[i] > after) {
            return g_end_step[i];
        }
    }
    return -2000; /* no turn ends after it */
}

/* A state seen at step @p step must be the uninterrupted run's at the end of that turn. */
static void check_turn(int pid, long long step, unsigned long long hash, const char *what) {
    for (int i = 0; i < g_nends; i++) {
        if (g_end_step[i] == step) {
            CHECK(g_end_hash[i] == hash,
                  "process %d %s at step %lld with a state (hash %016llx) other than the "
                  "uninterrupted run's at the end of that turn (%016llx): a wrong state",
                  pid, what, step, hash, g_end_hash[i]);
            return;
        }
    }
    CHECK(0,
          "process %d %s at step %lld, where no turn of the uninterrupted run ended: a torn turn",
          pid, what, step);
}

/*
 * The exit-mode lines of a log: "end" lines (the reference's are recorded; a crashed run's
 * must match them), "start" lines of a crashed run (see the top). Returns true for an
 * "end" line, which is no node execution.
 */
static bool check_turn_line(const char *line, bool reference, int prev_pid, long long *last_end) {
    int pid;
    long long step;
    unsigned long long hash;
    if (sscanf(line, "end %d %lld %llu", &pid, &step, &hash) == 3) {
        if (reference) {
            CHECK(g_nends < MAXT, "too many turns");
            g_end_step[g_nends] = step;
            g_end_hash[g_nends++] = hash;
        } else {
            check_turn(pid, step, hash, "ended a turn");
        }
        *last_end = step;
        return true;
    }
    if (!reference && sscanf(line, "start %d %lld %llu", &pid, &step, &hash) == 3) {
        /* Only what the last invoke that ended wrote survives: the end it logged, or, for a
         * new process whose predecessor died before logging an end it had made, the turn's
         * end after it. */
        long long next = ref_end_after(*last_end);
        CHECK(step == *last_end || (pid != prev_pid && step == next),
              "process %d started a turn at step %lld, but the last invoke that ended left "
              "step %lld (or, had its end gone unlogged, %lld): with durability exit only what "
              "the last invoke that ended wrote may survive",
              pid, step, *last_end, next);
        if (step != -1000) {
            check_turn(pid, step, hash, "started a turn");
        }
        *last_end = step;
    }
    return false;
}

static long check_log(const char *path, bool reference) {
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "no side-effect log");
    enum { MAXP = 16384 };
    long long last_end = -1000; /* exit mode: the step the last invoke that ended left */
    static int pids[MAXP];
    static long long starts[MAXP], highest[MAXP]; /* each process's start, highest step run */
    int np = 0;
    long executions = 0;
    char line[128];
    while (fgets(line, sizeof line, f) != NULL) {
        int pid;
        long long step;
        char node[32];
        if (g_turns && check_turn_line(line, reference, np > 0 ? pids[np - 1] : -1, &last_end)) {
            continue;
        }
        if (sscanf(line, "start %d %lld", &pid, &step) == 2) {
            CHECK(np < MAXP, "too many processes");
            /* What a kill may cost: the superstep that was running (its checkpoint was not
             * written yet), and with async the one before it (its checkpoint in flight).
             * (Exit mode: a whole turn, checked by check_turn_line instead.) */
            long long back = g_mode == SST_DURABILITY_ASYNC ? 1 : 0;
            /* No checkpoint at all (-1000) is a start from the input: step -1's. */
            long long at = step < -1 ? -1 : step;
            CHECK(g_turns || np == 0 || highest[np - 1] < 0 || at >= highest[np - 1] - back,
                  "process %d resumed at step %lld, but its predecessor ran step %lld: more "
                  "than %lld superstep(s) whose writes were in flight were lost",
                  pid, step, highest[np - 1], back + 1);
            pids[np] = pid;
            highest[np] = -1;
            starts[np++] = step;
            continue;
        }
        CHECK(sscanf(line, "%d %lld %31s", &pid, &step, node) == 3, "bad log line: %s", line);
        executions++;
        g_last_step = step > g_last_step ? step : g_last_step;
        if (np > 0 && pids[np - 1] == pid && step > highest[np - 1]) {
            highest[np - 1] = step;
        }
        long long start = -1000;
        for (int i = np - 1; i >= 0; i--) {
            if (pids[i] == pid) {
                start = starts[i];
                break;
            }
        }
        CHECK(step >= start, "process %d re-ran committed superstep %lld (it resumed at %lld)", pid,
              step, start);
    }
    fclose(f);
    return executions;
}

/* Writes @p text to the file at @p path (replacing it). */
static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    CHECK(f != NULL && fputs(text, f) >= 0 && fclose(f) == 0, "write %s", path);
}

/*
 * "logcheck": the log of a victim killed mid-line (its line cut where a page of the log
 * ended) reads right once trimmed: the torn "2 1" (of "2 12 left") would otherwise join
 * the next process's "start 3 11" and read as process 2 re-running superstep 1.
 */
static int logcheck(void) {
    char *dir = g_dir;
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char log[256];
    snprintf(log, sizeof log, "%s/torn.log", dir);
    write_file(log, "start 1 -1000\n1 0 tick\n1 1 left\nstart 2 5\n2 5 left\n2 11 tick\n2 1");
    trim_torn_line(log);
    g_log = log;
    side_effect("start 3 11\n3 11 left\n");
    CHECK(check_log(log, false) == 5, "the trimmed log holds 5 node executions");
    off_t whole = file_size(log);
    trim_torn_line(log); /* a whole last line stays */
    CHECK(file_size(log) == whole, "a whole line was trimmed");
    write_file(log, "2 1"); /* a victim that logged only a torn line */
    trim_torn_line(log);
    CHECK(file_size(log) == 0, "a log of one torn line was not emptied");
    printf("test_crash logcheck: a killed victim's torn last line is trimmed\n");
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "logcheck") == 0) {
        return logcheck();
    }
    if (argc > 1) {
        g_iterations = strtol(argv[1], NULL, 10);
    }
    int kills = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 50;
    g_nested = argc > 3 && strcmp(argv[3], "nested") == 0;
    if (argc > 4) {
        CHECK(strcmp(argv[4], "sync") == 0 || strcmp(argv[4], "async") == 0 ||
                  strcmp(argv[4], "exit") == 0,
              "durability must be sync, async or exit, got '%s'", argv[4]);
        g_mode = strcmp(argv[4], "async") == 0  ? SST_DURABILITY_ASYNC
                 : strcmp(argv[4], "exit") == 0 ? SST_DURABILITY_EXIT
                                                : SST_DURABILITY_SYNC;
    }
    g_turns = g_mode == SST_DURABILITY_EXIT;
    CHECK(!(g_turns && g_nested), "durability exit runs the flat graph only, not nested");
    g_pg = argc > 5 && strcmp(argv[5], "pg") == 0;
    char *dir = g_dir;
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char ref_db[512], db[512], ref_log[256], log[256];
    snprintf(ref_db, sizeof ref_db, "%s/reference.db", dir);
    snprintf(db, sizeof db, "%s/crashed.db", dir);
    if (g_pg && (tu_pg_fresh("crashref", ref_db, sizeof ref_db) != 0 ||
                 tu_pg_fresh("crash", db, sizeof db) != 0)) {
        printf("test_crash: no test PostgreSQL server: skipped\n");
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : 1;
    }
    snprintf(ref_log, sizeof ref_log, "%s/reference.log", dir);
    snprintf(log, sizeof log, "%s/crashed.log", dir);

    /* The reference: one uninterrupted run. */
    g_log = ref_log;
    double t0 = now_s();
    CHECK(wait_for(spawn(ref_db)) == 0, "the reference run failed");
    double full = now_s() - t0;
    /* A process that finds the run finished (as one does after a victim killed between the
     * run's last commit and its exit) resumes past every step and re-runs nothing. */
    CHECK(wait_for(spawn(ref_db)) == 0, "a resume of the finished reference run failed");
    char *expected = final_state(ref_db);

    /* The crashed runs. */
    g_log = log;
    unsigned seed = (unsigned)getpid() ^ (unsigned)time(NULL);
    int killed = 0, finished_early = 0;
    off_t whole = file_size(ref_log); /* the side effects of a whole run */
    for (int k = 0; k < kills; k++) {
        off_t base = file_size(log);
        pid_t pid = spawn(db);
        seed = seed * 1103515245u + 12345u;
        double frac = (double)((seed >> 8) % 1000) / 1000.0;
        /* Each victim is killed once it has logged 0.2 % to 2.8 % of a whole run's side
         * effects (1.5 % on average), so fifty kills land at points spread over most of
         * the run, whatever the machine's speed, and the final resume finishes it. */
        off_t progress = (off_t)((double)whole * (0.002 + 0.026 * frac)) + 1;
        int status;
        if (wait_for_progress(pid, log, base + progress, &status)) {
            CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a run failed");
            finished_early++;
            break;
        }
        CHECK(kill(pid, SIGKILL) == 0, "kill failed");
        status = wait_for(pid);
        trim_torn_line(log);
        if (WIFSIGNALED(status)) {
            killed++;
        } else {
            CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a run failed");
            finished_early++;
            break;
        }
    }
    CHECK(wait_for(spawn(db)) == 0, "the final resume failed");
    char *got = final_state(db);
    CHECK(strcmp(expected, got) == 0, "final states differ:\n  expected %.200s\n  got      %.200s",
          expected, got);
    long ref_executions = check_log(ref_log, true); /* first: it records the turns' ends */
    long executions = check_log(log, false);
    /* How far the killed processes got: the final resume started there (its first start). */
    long long resumed_at = -1;
    {
        FILE *f = fopen(log, "r");
        char line[128];
        int pid, last_pid = -1;
        long long step;
        while (f != NULL && fgets(line, sizeof line, f) != NULL) {
            if (sscanf(line, "start %d %lld", &pid, &step) == 2 && pid != last_pid) {
                resumed_at = step;
                last_pid = pid;
            }
        }
        if (f != NULL) {
            fclose(f);
        }
    }
    CHECK(killed < 10 || resumed_at > 100, "the kills came before any progress (resumed at %lld)",
          resumed_at);

    sqlite3 *sdb;
    const char *integrity_db = g_pg ? ":memory:" : db; /* PostgreSQL checks its own pages */
    CHECK(sqlite3_open(integrity_db, &sdb) == SQLITE_OK, "sqlite open");
    sqlite3_stmt *st;
    CHECK(sqlite3_prepare_v2(sdb, "PRAGMA integrity_check", -1, &st, NULL) == SQLITE_OK &&
              sqlite3_step(st) == SQLITE_ROW,
          "integrity_check");
    char integrity[64];
    snprintf(integrity, sizeof integrity, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(sdb);
    CHECK(strcmp(integrity, "ok") == 0, "integrity_check: %s", integrity);

    printf("crash test%s, durability %s on %s: %ld iterations (%ld supersteps), one run %.2f s; %d "
           "kills%s, the "
           "last resume started at step %lld; %ld node executions vs %ld uninterrupted "
           "(re-runs of uncommitted supersteps only); final states identical; %s\n",
           g_nested ? " (in a subgraph)" : "",
           g_mode == SST_DURABILITY_ASYNC  ? "async"
           : g_mode == SST_DURABILITY_EXIT ? "exit"
                                           : "sync",
           g_pg ? "PostgreSQL" : "SQLite", g_iterations, g_iterations * 2, full, killed,
           finished_early ? " (a victim finished before its kill)" : "", resumed_at, executions,
           ref_executions, g_pg ? "(PostgreSQL: no file to check)" : "integrity ok");
    free(expected);
    free(got);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : 1;
}
