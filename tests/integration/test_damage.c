/* SPDX-License-Identifier: MIT */
/*
 * Damaged and oversized records (issue 13):
 *   - the flip probe: 200 seeds, each flipping 8 random bytes inside the stored
 *     records of a thread (checkpoint headers and bodies, history chunks, pending
 *     writes). Every outcome must be the right state, an older committed state, or
 *     an error naming the problem; never a wrong state. sst_sqlite_check finds the
 *     damage that reading found, and its repair leaves a readable thread;
 *   - a checkpoint too large to be read back is refused before anything is written,
 *     and the last committed state stays readable.
 */
#define _GNU_SOURCE
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

static char g_dir[64];

static sst_code tick(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    int64_t c = sst_int_value(sst_object_get(sst_node_state(ctx), "counter"));
    char text[200];
    snprintf(text, sizeof text, "[\"m%lld-a\",\"m%lld-b\",\"m%lld-c\"]", (long long)c, (long long)c,
             (long long)c);
    sst_code rc = sst_node_update(ctx, "counter", sst_int_new(1, NULL), NULL);
    return rc == SST_OK ? sst_node_update(ctx, "log", tu_json(text), NULL) : rc;
}

static sst_value *again(const sst_value *state, void *ud, sst_error *err) {
    (void)ud;
    int64_t c = sst_int_value(sst_object_get(state, "counter"));
    return sst_string_new(c >= 40 ? SST_END : "tick", err);
}

typedef struct app {
    sst_graph *g;
    sst_compiled_graph *cg;
    sst_checkpointer *cp;
    sst_graph_thread *th;
} app;

static void build(app *a) {
    sst_error err;
    a->g = sst_graph_new(&err);
    assert_int_equal(
        sst_graph_add_field(a->g, "counter", sst_reducer_sum(), sst_int_new(0, NULL), &err), 0);
    assert_int_equal(
        sst_graph_add_field(a->g, "log", sst_reducer_append(), sst_array_empty(), &err), 0);
    assert_int_equal(sst_graph_add_node(a->g, "tick", tick, NULL, NULL, &err), 0);
    assert_int_equal(sst_graph_add_edge(a->g, SST_START, "tick", &err), 0);
    assert_int_equal(sst_graph_add_conditional_edges(a->g, "tick", again, NULL, NULL, &err), 0);
    a->cg = sst_graph_compile(a->g, NULL, &err);
    assert_non_null(a->cg);
}

/* Opens @p db; false (err filled) when the saver or the thread cannot be opened. */
static bool app_open(app *a, const char *db, const sst_sqlite_opts *o, sst_error *err) {
    build(a);
    a->cp = sst_sqlite_saver_open(db, o, err);
    a->th = a->cp != NULL ? sst_graph_thread_open(a->cg, a->cp, "d", err) : NULL;
    return a->th != NULL;
}

static void app_close(app *a) {
    sst_graph_thread_free(a->th);
    sst_checkpointer_free(a->cp);
    sst_compiled_graph_free(a->cg);
    sst_graph_free(a->g);
    memset(a, 0, sizeof *a);
}

/* Canonical JSON of a state's "values" (malloc'd). */
static char *values_text(const sst_value *snapshot) {
    char *t = sst_json_write(sst_object_get(snapshot, "values"), SST_JSON_CANONICAL, NULL, NULL);
    char *copy = strdup(t);
    sst_free(t);
    return copy;
}

/* ---- where the records are in the file ---- */

typedef struct region {
    long off, len;
} region;

static size_t find_regions(const char *db, const char *file, size_t flen, region *out, size_t max) {
    static const char *const q[] = {"SELECT header FROM checkpoints",
                                    "SELECT body FROM checkpoints", "SELECT body FROM chunks",
                                    "SELECT body FROM writes"};
    sqlite3 *h;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    size_t n = 0;
    for (size_t k = 0; k < sizeof q / sizeof q[0]; k++) {
        sqlite3_stmt *st;
        assert_int_equal(sqlite3_prepare_v2(h, q[k], -1, &st, NULL), SQLITE_OK);
        while (sqlite3_step(st) == SQLITE_ROW && n < max) {
            const char *t = (const char *)sqlite3_column_text(st, 0);
            int len = sqlite3_column_bytes(st, 0);
            const char *at = len > 8 ? memmem(file, flen, t, (size_t)len) : NULL;
            if (at != NULL) { /* texts split over overflow pages are not found: skipped */
                out[n++] = (region){at - file, len};
            }
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(h);
    return n;
}

static void write_file(const char *path, const char *data, size_t len) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

typedef struct outcome {
    int right, older, error, open_error, repaired;
} outcome;

static bool in_list(char **list, size_t n, const char *s) {
    for (size_t i = 0; i < n; i++) {
        if (strcmp(list[i], s) == 0) {
            return true;
        }
    }
    return false;
}

/* After a read failed on a damaged record: check finds it, repair makes the thread readable. */
static void check_and_repair(const char *probe, char **states, size_t n_states, outcome *o) {
    sst_sqlite_check_report rep;
    sst_error err = {0};
    assert_sst_ok(sst_sqlite_check(probe, false, NULL, NULL, &rep, &err), &err);
    assert_true(rep.damaged > 0);
    if (!rep.file_ok) {
        return; /* SQLite's own structures: reported, not repaired */
    }
    assert_sst_ok(sst_sqlite_check(probe, true, NULL, NULL, &rep, &err), &err);
    if (rep.threads_repaired == 0) {
        return; /* nothing could be rebuilt, or only an older record was damaged */
    }
    assert_int_equal(access(rep.backup, F_OK), 0);
    remove(rep.backup);
    app a = {0};
    assert_true(app_open(&a, probe, NULL, &err));
    sst_value *st = sst_graph_get_state(a.th, NULL, &err);
    if (st == NULL) {
        print_error("after repair: %s\n", err.msg);
        fail();
    }
    char *got = values_text(st);
    assert_true(in_list(states, n_states, got));
    o->repaired++;
    free(got);
    sst_value_unref(st);
    app_close(&a);
}

/* One seed: flip 8 bytes, read the state back, classify. */
static void probe_one(const char *file, size_t flen, const region *regs, size_t n_regs,
                      char **states, size_t n_states, tu_rng *rng, outcome *o) {
    char probe[128];
    snprintf(probe, sizeof probe, "%s/probe.db", g_dir);
    char *copy = malloc(flen);
    memcpy(copy, file, flen);
    for (int k = 0; k < 8; k++) {
        const region *r = &regs[tu_rand(rng) % n_regs];
        long at = r->off + (long)(tu_rand(rng) % (uint64_t)r->len);
        copy[at] ^= (char)(1 + tu_rand(rng) % 255);
    }
    write_file(probe, copy, flen);
    free(copy);
    app a = {0};
    sst_error err = {0};
    if (!app_open(&a, probe, NULL, &err)) {
        assert_true(strstr(err.msg, probe) != NULL || strstr(err.msg, "thread") != NULL);
        o->open_error++;
        app_close(&a);
        remove(probe);
        return;
    }
    sst_value *st = sst_graph_get_state(a.th, NULL, &err);
    app_close(&a);
    if (st == NULL) {
        assert_true(err.code != SST_OK);
        assert_non_null(strstr(err.msg, "checkpoint store"));
        o->error++;
        check_and_repair(probe, states, n_states, o);
    } else {
        char *got = values_text(st);
        if (!in_list(states, n_states, got)) {
            print_error("a flip gave a wrong state with no error: %.300s\n", got);
            fail();
        }
        if (strcmp(got, states[0]) == 0) {
            o->right++;
        } else {
            o->older++;
        }
        free(got);
        sst_value_unref(st);
    }
    remove(probe);
}

static void test_flip_probe(void **state) {
    (void)state;
    char db[128];
    snprintf(db, sizeof db, "%s/flip.db", g_dir);
    app a = {0};
    sst_error err = {0};
    assert_true(app_open(&a, db, NULL, &err));
    sst_invoke_opts io;
    sst_invoke_opts_init(&io);
    io.recursion_limit = 100;
    io.snapshot_every = 8; /* snapshots, deltas and a history chunk (120 log entries) */
    sst_value *in = tu_json("{}");
    sst_graph_result *r = sst_graph_invoke(a.cg, a.th, in, &io, &err);
    sst_value_unref(in);
    assert_non_null(r);
    assert_int_equal(sst_graph_result_status(r), SST_RUN_COMPLETED);
    sst_graph_result_free(r);
    /* Every committed state, newest first. */
    sst_value *hist = sst_graph_get_state_history(a.th, NULL, 0, &err);
    assert_non_null(hist);
    size_t n_states = sst_array_len(hist);
    char **states = calloc(n_states, sizeof *states);
    for (size_t i = 0; i < n_states; i++) {
        states[i] = values_text(sst_array_get(hist, i));
    }
    sst_value_unref(hist);
    app_close(&a);
    sqlite3 *h; /* fold the WAL into the file, so the file alone holds every record */
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL), 0);
    sqlite3_close(h);
    size_t flen;
    char *file = tu_read_file(db, &flen);
    region regs[512];
    size_t n_regs = find_regions(db, file, flen, regs, 512);
    assert_true(n_regs > 20);
    outcome o = {0};
    tu_rng rng = {0x5eed};
    for (int seed = 0; seed < 200; seed++) {
        probe_one(file, flen, regs, n_regs, states, n_states, &rng, &o);
    }
    printf("flip probe: 200 seeds over %zu records: %d right state, %d older committed state, "
           "%d named read errors (%d repaired to a readable thread), %d refused at open\n",
           n_regs, o.right, o.older, o.error, o.repaired, o.open_error);
    assert_int_equal(o.right + o.older + o.error + o.open_error, 200);
    assert_true(o.error > 0);
    for (size_t i = 0; i < n_states; i++) {
        free(states[i]);
    }
    free(states);
    free(file);
}

/* A big node: a string over the store's limit. */
static sst_code big(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    size_t n = 100000;
    char *s = malloc(n + 1);
    memset(s, 'x', n);
    s[n] = '\0';
    sst_value *v = sst_string_new(s, NULL);
    free(s);
    return sst_node_update(ctx, "blob", v, NULL);
}

/* Records the problems sst_sqlite_check reports, one per line. */
static void note_damage(const sst_sqlite_damage *d, void *user_data) {
    char *out = user_data;
    size_t n = strlen(out);
    snprintf(out + n, 1000 - n, "%s %s: %s\n", d->thread != NULL ? d->thread : "-",
             d->checkpoint_id != NULL ? d->checkpoint_id : "-", d->problem);
}

/*
 * A delta whose parent is gone cannot be rebuilt: the check reports it
 * without --repair too (and nothing else), and repair cannot move the head.
 */
static void test_missing_parent_reported(void **state) {
    (void)state;
    char db[300];
    snprintf(db, sizeof db, "%s/orphan.db", g_dir);
    sst_error err = {0};
    sst_checkpointer *cp = sst_sqlite_saver_open(db, NULL, &err);
    assert_non_null(cp);
    sst_checkpoint r = {.format = SST_CHECKPOINT_FORMAT,
                        .thread_id = "o",
                        .ns = "",
                        .id = "c1",
                        .source = "loop",
                        .kind = SST_CHECKPOINT_SNAPSHOT,
                        .body = {.data = "{}", .len = 2}};
    assert_sst_ok(sst_checkpointer_put(cp, &r, false, &err), &err);
    r.id = "c3";
    r.parent_id = "c2"; /* never stored */
    r.kind = SST_CHECKPOINT_DELTA;
    r.fork = true;
    r.body = (sst_payload){.data = "[]", .len = 2};
    assert_sst_ok(sst_checkpointer_put(cp, &r, false, &err), &err);
    sst_checkpointer_free(cp);
    char seen[1000] = "";
    sst_sqlite_check_report rep;
    assert_sst_ok(sst_sqlite_check(db, false, note_damage, seen, &rep, &err), &err);
    assert_int_equal(rep.checkpoints, 2);
    assert_int_equal(rep.damaged, 1);
    assert_string_equal(seen, "o c3: its parent checkpoint is missing: it cannot be rebuilt\n");
}

static void test_oversized_refused(void **state) {
    (void)state;
    char db[128];
    snprintf(db, sizeof db, "%s/big.db", g_dir);
    sst_error err = {0};
    sst_graph *g = sst_graph_new(&err);
    assert_int_equal(
        sst_graph_add_field(g, "blob", sst_reducer_replace(), sst_string_new("small", NULL), &err),
        0);
    assert_int_equal(sst_graph_add_node(g, "big", big, NULL, NULL, &err), 0);
    assert_int_equal(sst_graph_add_edge(g, SST_START, "big", &err), 0);
    sst_compiled_graph *cg = sst_graph_compile(g, NULL, &err);
    sst_sqlite_opts so;
    sst_sqlite_opts_init(&so);
    so.max_record_bytes = 64 * 1024;
    sst_checkpointer *cp = sst_sqlite_saver_open(db, &so, &err);
    assert_non_null(cp);
    sst_graph_thread *th = sst_graph_thread_open(cg, cp, "big", &err);
    sst_invoke_opts io;
    sst_invoke_opts_init(&io);
    sst_value *in = tu_json("{\"blob\":\"before\"}");
    sst_graph_result *r = sst_graph_invoke(cg, th, in, &io, &err);
    sst_value_unref(in);
    const sst_error *e = r != NULL ? sst_graph_result_error(r) : &err;
    assert_true(r == NULL || sst_graph_result_status(r) == SST_RUN_FAILED);
    assert_int_equal(e->code, SST_ELIMIT);
    assert_non_null(strstr(e->msg, "over the limit of 65536 bytes"));
    assert_non_null(strstr(e->msg, "nothing was written"));
    sst_graph_result_free(r);
    /* The last committed state (the input) is still readable, in a new saver too. */
    sst_graph_thread_free(th);
    sst_checkpointer_free(cp);
    cp = sst_sqlite_saver_open(db, &so, &err);
    th = sst_graph_thread_open(cg, cp, "big", &err);
    sst_value *st = sst_graph_get_state(th, NULL, &err);
    assert_non_null(st);
    assert_json_eq(sst_object_get(st, "values"), "{\"blob\":\"before\"}");
    sst_value_unref(st);
    sst_graph_thread_free(th);
    sst_checkpointer_free(cp);
    sst_compiled_graph_free(cg);
    sst_graph_free(g);
}

static int setup(void **state) {
    (void)state;
    return tu_temp_dir("damage", g_dir, sizeof g_dir);
}

static int teardown(void **state) {
    (void)state;
    return tu_rm_rf(g_dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oversized_refused),
        cmocka_unit_test(test_missing_parent_reported),
        cmocka_unit_test(test_flip_probe),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
