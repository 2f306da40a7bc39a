/* SPDX-License-Identifier: MIT */
/*
 * superstep: run Lua graph scripts durably from the command line.
 *
 *   superstep run SCRIPT.lua [options]     run (or resume) a thread
 *   superstep state SCRIPT.lua --thread ID  the thread's latest state
 *   superstep history SCRIPT.lua --thread ID
 *   superstep threads SCRIPT.lua [--db PATH]
 *   superstep graph SCRIPT.lua --mermaid|--dot|--svg [--xray[=N]]
 *
 * and hands agent, check, serve, worker and store to their files. Every
 * command's usage text is in cmd_usage.c (superstep help COMMAND).
 *
 * Exit codes: 0 completed, 1 the run failed or an input was bad, 2 usage
 * error, 3 interrupted (resume with --resume). Uses the public API only.
 */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE   700 /* realpath */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd_agent.h"
#include "cmd_args.h"
#include "cmd_check.h"
#include "cmd_db.h"
#include "cmd_serve.h"
#include "cmd_store.h"
#include "cmd_trace.h"
#include "cmd_usage.h"
#include "superstep/checkpoint.h"
#include "superstep/json.h"
#include "superstep/lua.h"
#include "superstep/server.h"
#include "superstep/superstep.h"

enum { EXIT_DONE = 0, EXIT_FAILED = 1, EXIT_USAGE = 2, EXIT_INTERRUPTED = 3 };

typedef struct cli {
    const char *command, *script, *input, *thread, *db, *checkpoint, *resume;
    unsigned stream; /* --stream: sst_stream_mode bits (0: none) */
    unsigned workers;
    size_t memory_limit; /* 0: not given */
    const char *before;  /* history: start below this checkpoint */
    size_t limit;        /* history: at most this many entries (0: all) */
    unsigned xray;       /* graph: levels of subgraphs drawn expanded (0: none) */
    bool json, mermaid, dot, svg, values;
    bool subgraphs;            /* run --stream: the subgraphs' events too */
    const char *otlp_endpoint; /* run: --otlp-endpoint URL */
    bool trace_content;        /* run: --trace-content */
    const char *durability;    /* run: --durability sync|async|exit, or NULL */
    const char *flush;         /* run: --flush on|off, or NULL: the database's default */
} cli;

/* The command being parsed, for usage errors ("" before it is known). */
static const char *g_command = "";

static int usage_error(const char *fmt, const char *arg) {
    return sst_cli_usage_error(g_command, fmt, arg);
}

static int fail(const char *what, const sst_error *err) {
    fprintf(stderr, "superstep: %s%s%s\n", what, what[0] != '\0' ? ": " : "", err->msg);
    return EXIT_FAILED;
}

/* The stream modes by name, as LangGraph's stream_mode values. */
static const struct {
    const char *name;
    sst_stream_mode bit;
} STREAM_MODES[] = {
    {"values", SST_STREAM_VALUES}, {"updates", SST_STREAM_UPDATES},
    {"custom", SST_STREAM_CUSTOM}, {"messages", SST_STREAM_MESSAGES},
    {"tasks", SST_STREAM_TASKS},   {"checkpoints", SST_STREAM_CHECKPOINTS},
    {"debug", SST_STREAM_DEBUG},
};

/* --stream MODE[,MODE...]: adds the modes to *bits; -1 when good, else a usage error. */
static int stream_option(const char *val, unsigned *bits) {
    for (const char *p = val;; p++) {
        size_t n = strcspn(p, ",");
        size_t k = 0;
        while (k < sizeof STREAM_MODES / sizeof STREAM_MODES[0] &&
               (strlen(STREAM_MODES[k].name) != n || strncmp(STREAM_MODES[k].name, p, n) != 0)) {
            k++;
        }
        if (k == sizeof STREAM_MODES / sizeof STREAM_MODES[0]) {
            char *bad = strndup(p, n);
            int rc = usage_error("--stream: unknown mode '%s' (values, updates, custom, messages, "
                                 "tasks, checkpoints or debug)",
                                 bad != NULL ? bad : val);
            free(bad);
            return rc;
        }
        *bits |= (unsigned)STREAM_MODES[k].bit;
        p += n;
        if (*p == '\0') {
            return -1;
        }
    }
}

static const char *stream_mode_name(sst_stream_mode m) {
    for (size_t k = 0; k < sizeof STREAM_MODES / sizeof STREAM_MODES[0]; k++) {
        if (STREAM_MODES[k].bit == m) {
            return STREAM_MODES[k].name;
        }
    }
    return "?";
}

/* --workers, --memory-limit and --limit: -1 when @p val is good, else a usage error. */
static int number_option(const char *a, const char *val, cli *c) {
    char *end;
    errno = 0;
    if (strcmp(a, "--workers") == 0) {
        long n = strtol(val, &end, 10);
        if (errno != 0 || *end != '\0' || n < 1 || n > 256) {
            return usage_error("--workers: expected a number from 1 to 256, got '%s'", val);
        }
        c->workers = (unsigned)n;
    } else if (strcmp(a, "--memory-limit") == 0) {
        if (!sst_cli_parse_bytes(val, &c->memory_limit)) {
            return usage_error("--memory-limit: expected a number of bytes above 0, "
                               "optionally with K, M or G (e.g. 500M), got '%s'",
                               val);
        }
    } else {
        unsigned long long n = strtoull(val, &end, 10);
        if (n == 0 || errno != 0 || *end != '\0' || val[0] == '-') {
            return usage_error("--limit: expected a number above 0, got '%s'", val);
        }
        c->limit = (size_t)n;
    }
    return -1;
}

/* --xray (every level) or --xray=N: -1 when good, else a usage error. */
static int xray_option(const char *a, cli *c) {
    c->xray = SST_XRAY_ALL;
    if (a[6] == '\0') {
        return -1;
    }
    char *end;
    errno = 0;
    unsigned long n = strtoul(a + 7, &end, 10);
    if (errno != 0 || end == a + 7 || *end != '\0' || a[7] == '-' || n >= SST_XRAY_ALL) {
        return usage_error("--xray: expected --xray or --xray=N, N a number of levels, got '%s'",
                           a);
    }
    c->xray = (unsigned)n;
    return -1;
}

/*
 * The commands each option of run, state, history, threads and graph goes
 * with: one parser reads them all, and an option given to a command that
 * would ignore it is a usage error, so each command's usage lists every
 * option it takes.
 */
static const struct {
    const char *name;
    const char *cmds;
} OPTION_COMMANDS[] = {
    {"--input", "run"},
    {"--resume", "run"},
    {"--stream", "run"},
    {"--subgraphs", "run"},
    {"--workers", "run"},
    {"--otlp-endpoint", "run"},
    {"--trace-content", "run"},
    {"--durability", "run"},
    {"--flush", "run"},
    {"--thread", "run state history"},
    {"--db", "run state history threads"},
    {"--json", "run state history threads"},
    {"--checkpoint", "run state"},
    {"--limit", "history"},
    {"--before", "history"},
    {"--values", "history"},
    {"--mermaid", "graph"},
    {"--dot", "graph"},
    {"--svg", "graph"},
    {"--xray", "graph"},
    {"--memory-limit", "run state history threads graph"},
};

/* -1 when option @p a (--xray=N counts as --xray) goes with @p cmd, else a usage error. */
static int option_applies(const char *cmd, const char *a) {
    size_t n = strcspn(a, "=");
    for (size_t k = 0; k < sizeof OPTION_COMMANDS / sizeof OPTION_COMMANDS[0]; k++) {
        const char *name = OPTION_COMMANDS[k].name;
        if (strlen(name) != n || strncmp(name, a, n) != 0) {
            continue;
        }
        for (const char *p = OPTION_COMMANDS[k].cmds; *p != '\0';) {
            size_t len = strcspn(p, " ");
            if (len == strlen(cmd) && strncmp(p, cmd, len) == 0) {
                return -1;
            }
            p += len + (p[len] == ' ');
        }
        char msg[160];
        snprintf(msg, sizeof msg, "%.40s: not an option of '%s' (only of: %s)", name, cmd,
                 OPTION_COMMANDS[k].cmds);
        return usage_error("%s", msg);
    }
    return -1; /* not one of them: the parser says what is wrong */
}

/* Parses argv into @p c; returns -1 on success, else the exit code. */
static int parse_args(int argc, char **argv, cli *c) {
    memset(c, 0, sizeof *c);
    c->command = argv[1];
    if (strcmp(c->command, "run") != 0 && strcmp(c->command, "state") != 0 &&
        strcmp(c->command, "history") != 0 && strcmp(c->command, "graph") != 0 &&
        strcmp(c->command, "threads") != 0) {
        return usage_error("unknown command '%s' (expected run, state, history, threads, graph, "
                           "check, agent, serve, worker, store or help)",
                           c->command);
    }
    g_command = c->command;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = NULL;
        int applies = a[0] == '-' ? option_applies(c->command, a) : -1;
        if (applies >= 0) {
            return applies;
        }
        if (strcmp(a, "--json") == 0) {
            c->json = true;
            continue;
        } else if (strcmp(a, "--mermaid") == 0) {
            c->mermaid = true;
            continue;
        } else if (strcmp(a, "--dot") == 0) {
            c->dot = true;
            continue;
        } else if (strcmp(a, "--svg") == 0) {
            c->svg = true;
            continue;
        } else if (strcmp(a, "--values") == 0) {
            c->values = true;
            continue;
        } else if (strcmp(a, "--subgraphs") == 0) {
            c->subgraphs = true;
            continue;
        } else if (strcmp(a, "--trace-content") == 0) {
            c->trace_content = true;
            continue;
        } else if (strcmp(a, "--otlp-endpoint") == 0) {
            slot = &c->otlp_endpoint;
        } else if (strncmp(a, "--xray", 6) == 0 && (a[6] == '\0' || a[6] == '=')) {
            int rc = xray_option(a, c);
            if (rc >= 0) {
                return rc;
            }
            continue;
        } else if (strcmp(a, "--before") == 0) {
            slot = &c->before;
        } else if (strcmp(a, "--input") == 0) {
            slot = &c->input;
        } else if (strcmp(a, "--thread") == 0) {
            slot = &c->thread;
        } else if (strcmp(a, "--db") == 0) {
            slot = &c->db;
        } else if (strcmp(a, "--durability") == 0) {
            slot = &c->durability;
        } else if (strcmp(a, "--flush") == 0) {
            slot = &c->flush;
        } else if (strcmp(a, "--checkpoint") == 0) {
            slot = &c->checkpoint;
        } else if (strcmp(a, "--resume") == 0) {
            slot = &c->resume;
        } else if (strcmp(a, "--stream") == 0) {
            if (i + 1 >= argc) {
                return usage_error("option '%s' needs a value", a);
            }
            int rc = stream_option(argv[++i], &c->stream);
            if (rc >= 0) {
                return rc;
            }
            continue;
        } else if (strcmp(a, "--workers") == 0 || strcmp(a, "--memory-limit") == 0 ||
                   strcmp(a, "--limit") == 0) {
            if (i + 1 >= argc) {
                return usage_error("option '%s' needs a value", a);
            }
            int rc = number_option(a, argv[++i], c);
            if (rc >= 0) {
                return rc;
            }
            continue;
        } else if (a[0] == '-' && a[1] != '\0') {
            return usage_error("unknown option '%s'", a);
        } else if (c->script == NULL) {
            c->script = a;
            continue;
        } else {
            return usage_error("unexpected argument '%s'", a);
        }
        if (i + 1 >= argc) {
            return usage_error("option '%s' needs a value", a);
        }
        *slot = argv[++i];
    }
    if (c->script == NULL) {
        return usage_error("%s", "missing SCRIPT.lua");
    }
    if ((strcmp(c->command, "state") == 0 || strcmp(c->command, "history") == 0) &&
        c->thread == NULL) {
        return usage_error("%s", "--thread ID is required");
    }
    if (c->subgraphs && c->stream == 0) {
        return usage_error("%s", "--subgraphs needs --stream MODE");
    }
    sst_durability d;
    sst_flush_policy f;
    if (c->durability != NULL && !sst_cli_parse_durability(c->durability, &d)) {
        return usage_error("--durability: expected sync, async or exit, got '%s'", c->durability);
    }
    if (c->flush != NULL && !sst_cli_parse_flush(c->flush, &f)) {
        return usage_error("--flush: expected on or off, got '%s'", c->flush);
    }
    return -1;
}

/* Parses JSON given inline or as @file; NULL with a message printed. */
static sst_value *json_arg(const char *opt, const char *text) {
    sst_error err = {0};
    sst_value *v;
    if (text[0] == '@') {
        v = sst_json_read_file(text + 1, NULL, &err);
    } else {
        v = sst_json_parse(text, &err);
    }
    if (v == NULL) {
        if (err.line > 0) {
            fprintf(stderr, "superstep: %s: bad JSON at line %zu, column %zu: %s\n", opt, err.line,
                    err.column, err.msg);
        } else {
            fprintf(stderr, "superstep: %s: %s\n", opt, err.msg);
        }
    }
    return v;
}

static void print_json(FILE *f, const sst_value *v, unsigned flags) {
    sst_error err = {0};
    char *text = sst_json_write(v, flags, NULL, &err);
    if (text != NULL) {
        fprintf(f, "%s\n", text);
        sst_free(text);
    }
}

/* ---- streaming and progress ---- */

typedef struct run_ui {
    bool progress;   /* stderr is a terminal */
    size_t step;     /* supersteps reported so far */
    size_t started;  /* tasks of the superstep being run */
    size_t finished; /* of those, the ones that ended */
    double t0;
    unsigned stream_mode; /* the modes asked for with --stream */
} run_ui;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* True when @p bits has more than one mode: lines are then [mode, chunk], as LangGraph's
 * (mode, chunk) pairs. */
static bool several_modes(unsigned bits) {
    return (bits & (bits - 1)) != 0;
}

/* The progress line: a superstep is shown once all the tasks it started have ended. */
static void progress(run_ui *ui, const sst_value *event) {
    if (sst_object_get(event, "input") != NULL) { /* a task starts */
        if (ui->started > 0 && ui->finished == ui->started) {
            ui->step++;
            ui->started = ui->finished = 0;
        }
        ui->started++;
        return;
    }
    if (++ui->finished == ui->started) {
        fprintf(stderr, "\r\033[Ksuperstep %zu  %zu task%s  %.1fs", ui->step, ui->started,
                ui->started == 1 ? "" : "s", now_s() - ui->t0);
    }
}

/* The namespace "a:id|b:id" as LangGraph's tuple: ["a:id", "b:id"], [] for the root (new). */
static sst_value *ns_list(const char *ns) {
    sst_value *list = sst_array_empty();
    for (const char *p = ns; *p != '\0' && list != NULL;) {
        size_t n = strcspn(p, "|");
        list = sst_array_push_take(list, sst_string_newn(p, n, NULL), NULL);
        p += n + (p[n] == '|');
    }
    return list;
}

/*
 * One --stream line: the chunk; [mode, chunk] with several modes; with
 * --subgraphs the namespace first, [ns, chunk] or [ns, mode, chunk].
 */
static sst_code print_event(const run_ui *ui, sst_stream_mode mode, const char *ns,
                            const sst_value *event) {
    if (!several_modes(ui->stream_mode) && ns == NULL) {
        print_json(stdout, event, SST_JSON_COMPACT);
        fflush(stdout);
        return SST_OK;
    }
    sst_value *line =
        ns != NULL ? sst_array_push_take(sst_array_empty(), ns_list(ns), NULL) : sst_array_empty();
    if (several_modes(ui->stream_mode)) {
        line = sst_array_push_take(line, sst_string_new(stream_mode_name(mode), NULL), NULL);
    }
    line = sst_array_push_take(line, sst_value_ref(event), NULL);
    if (line == NULL) {
        return SST_ENOMEM;
    }
    print_json(stdout, line, SST_JSON_COMPACT);
    sst_value_unref(line);
    fflush(stdout);
    return SST_OK;
}

static sst_code on_event(sst_stream_mode mode, const char *node, const sst_value *event, void *ud) {
    (void)node;
    run_ui *ui = ud;
    sst_code rc = (mode & ui->stream_mode) ? print_event(ui, mode, NULL, event) : SST_OK;
    if (ui->progress && mode == SST_STREAM_TASKS) {
        progress(ui, event);
    }
    return rc;
}

/* --subgraphs: every event with its namespace; the progress line counts the root's tasks. */
static sst_code on_ns_event(sst_stream_mode mode, const char *ns, const char *node,
                            const sst_value *event, void *ud) {
    (void)node;
    run_ui *ui = ud;
    sst_code rc = (mode & ui->stream_mode) ? print_event(ui, mode, ns, event) : SST_OK;
    if (ui->progress && mode == SST_STREAM_TASKS && ns[0] == '\0') {
        progress(ui, event);
    }
    return rc;
}

/* ---- commands ---- */

typedef struct session {
    sst_lua_script *script;
    sst_checkpointer *own_saver; /* opened here for --db or the default path */
    sst_checkpointer *saver;     /* the one in use */
} session;

static void close_session(session *s);

/* Loads the script and opens the database; on failure closes what it opened. */
static int open_session(const cli *c, session *s) {
    sst_error err = {0};
    memset(s, 0, sizeof *s);
    sst_lua_opts lo;
    sst_lua_opts_init(&lo);
    lo.memory_limit = c->memory_limit;
    if ((s->script = sst_lua_script_load_opts(c->script, &lo, &err)) == NULL) {
        fprintf(stderr, "superstep: %s\n", err.msg);
        return EXIT_FAILED;
    }
    s->saver = sst_lua_script_checkpointer(s->script);
    /* --flush is the policy of the database this opens: the script's saver has its own. */
    sst_flush_policy flush = SST_FLUSH_DEFAULT;
    if (c->flush != NULL) {
        (void)sst_cli_parse_flush(c->flush, &flush); /* checked when parsed */
    }
    if (c->db != NULL || c->flush != NULL || s->saver == NULL) {
        const char *db = sst_cli_default_db(c->db);
        s->own_saver = sst_cli_open_saver(db, flush, &err);
        if (s->own_saver == NULL) {
            close_session(s);
            return fail("", &err);
        }
        s->saver = s->own_saver;
    }
    return -1;
}

static void close_session(session *s) {
    sst_checkpointer_free(s->own_saver);
    sst_lua_script_free(s->script);
}

static sst_value *result_json(const sst_graph_result *r, const char *thread, sst_graph_thread *t) {
    sst_value *o = sst_object_empty();
    sst_error err = {0};
    o = sst_object_set_take(
        o, "status", sst_string_new(sst_run_status_name(sst_graph_result_status(r)), NULL), &err);
    if (o != NULL) {
        o = sst_object_set_take(o, "thread_id", sst_string_new(thread, NULL), &err);
    }
    if (o != NULL) {
        o = sst_object_set_take(o, "state", sst_value_ref(sst_graph_result_state(r)), &err);
    }
    if (o != NULL) {
        o = sst_object_set_take(o, "interrupts", sst_value_ref(sst_graph_result_interrupts(r)),
                                &err);
    }
    const sst_error *e = sst_graph_result_error(r);
    if (o != NULL) {
        o = sst_object_set_take(
            o, "error", e->code != SST_OK ? sst_string_new(e->msg, NULL) : sst_null(), &err);
    }
    sst_value *st = sst_graph_get_state(t, NULL, &err);
    const sst_value *cid = st != NULL ? sst_object_get(st, "checkpoint_id") : NULL;
    if (o != NULL) {
        o = sst_object_set_take(o, "checkpoint_id", sst_value_ref(cid != NULL ? cid : sst_null()),
                                &err);
    }
    sst_value_unref(st);
    return o;
}

/*
 * Before a run: --checkpoint must exist, and a --thread given without input
 * must have checkpoints. -1 when fine, else the exit code (message printed).
 */
static int check_target(const cli *c, sst_graph_thread *t, const char *thread, bool has_input) {
    sst_error err = {0};
    if (c->checkpoint != NULL) {
        sst_value *st = sst_graph_get_state(t, c->checkpoint, &err);
        if (st == NULL) {
            return err.code == SST_ENOTFOUND
                       ? (fprintf(stderr, "superstep: unknown checkpoint '%s' in thread '%s'\n",
                                  c->checkpoint, thread),
                          EXIT_FAILED)
                       : fail("", &err);
        }
        sst_value_unref(st);
        return -1;
    }
    if (c->thread == NULL || has_input) {
        return -1;
    }
    sst_value *hist = sst_graph_get_state_history(t, NULL, 1, &err);
    if (hist == NULL) { /* a storage error is not an unknown thread */
        return fail("", &err);
    }
    size_t n = sst_array_len(hist);
    sst_value_unref(hist);
    if (n == 0) {
        fprintf(stderr,
                "superstep: unknown thread '%s' (give --input to start it, or check --db)\n",
                thread);
        return EXIT_FAILED;
    }
    return -1;
}

/* After a run: the state or JSON on stdout, the outcome on stderr. */
static void print_run_result(const cli *c, const sst_graph_result *r, sst_graph_thread *t,
                             const char *thread, double t0) {
    sst_run_status status = sst_graph_result_status(r);
    if (c->json) {
        sst_value *j = result_json(r, thread, t);
        if (j != NULL) {
            print_json(stdout, j, SST_JSON_COMPACT);
        }
        sst_value_unref(j);
        return;
    }
    if (c->stream == 0) {
        print_json(stdout, sst_graph_result_state(r), SST_JSON_PRETTY);
    }
    if (status == SST_RUN_FAILED) {
        fprintf(stderr, "superstep: run failed after %llu supersteps: %s\n",
                (unsigned long long)sst_graph_result_steps(r), sst_graph_result_error(r)->msg);
    } else if (status == SST_RUN_INTERRUPTED) {
        fprintf(stderr, "interrupted after %llu supersteps; pending:\n",
                (unsigned long long)sst_graph_result_steps(r));
        print_json(stderr, sst_graph_result_interrupts(r), SST_JSON_PRETTY);
        fprintf(stderr, "resume with: superstep run %s%s%s --thread %s --resume JSON\n", c->script,
                c->db != NULL ? " --db " : "", c->db != NULL ? c->db : "", thread);
    } else {
        fprintf(stderr, "completed in %llu supersteps (%.3f s), thread %s\n",
                (unsigned long long)sst_graph_result_steps(r), now_s() - t0, thread);
    }
}

/* The compile warnings of the script's graph (e.g. an unreachable node), on stderr. */
static void print_warnings(const sst_compiled_graph *cg) {
    for (size_t i = 0; i < sst_compiled_graph_warning_count(cg); i++) {
        fprintf(stderr, "superstep: warning: %s\n", sst_compiled_graph_warning(cg, i));
    }
}

typedef struct meta_read {
    sst_value *metadata; /* new, or NULL */
    sst_code rc;
} meta_read;

static bool got_metadata(const sst_thread_info *t, void *ud) {
    meta_read *m = ud;
    sst_error err = {0};
    m->metadata = t->metadata.data != NULL || t->metadata.value != NULL
                      ? sst_payload_value(&t->metadata, &err)
                      : sst_object_empty();
    m->rc = m->metadata != NULL ? SST_OK : err.code;
    return false;
}

/*
 * Names the thread's graph in its metadata as `superstep serve` stamps its
 * threads: graph_id, the script's file name without ".lua", and script, its
 * absolute path, which lets a server that serves the same file under another
 * name find it (docs/web.md). A thread that names a graph already (made or
 * run by a server) keeps it; a saver without thread metadata (a user's own)
 * is left alone. false with a message printed when the database fails.
 */
static bool stamp_graph(sst_checkpointer *saver, const char *thread, const char *script) {
    meta_read m = {0};
    sst_error err = {0};
    sst_code rc = sst_checkpointer_thread_get(saver, thread, got_metadata, &m, &err);
    if (rc == SST_ENOTSUP) {
        return true;
    }
    if (rc == SST_OK && m.rc != SST_OK) {
        rc = m.rc;
        snprintf(err.msg, sizeof err.msg, "thread '%s': unreadable metadata", thread);
    }
    if (rc != SST_OK && rc != SST_ENOTFOUND) {
        sst_value_unref(m.metadata);
        fail("", &err);
        return false;
    }
    if (m.metadata != NULL && sst_object_get(m.metadata, "graph_id") != NULL) {
        sst_value_unref(m.metadata);
        return true;
    }
    const char *base = strrchr(script, '/') != NULL ? strrchr(script, '/') + 1 : script;
    size_t n = strlen(base);
    if (n > 4 && strcmp(base + n - 4, ".lua") == 0) {
        n -= 4;
    }
    char *abs = realpath(script, NULL);
    char *name = strndup(base, n);
    sst_value *meta = m.metadata != NULL ? m.metadata : sst_object_empty();
    meta = name != NULL ? sst_object_set_take(meta, "graph_id", sst_string_new(name, &err), &err)
                        : (sst_value_unref(meta), NULL);
    if (meta != NULL && abs != NULL) {
        meta = sst_object_set_take(meta, "script", sst_string_new(abs, &err), &err);
    }
    free(abs);
    free(name);
    rc = meta != NULL ? sst_checkpointer_thread_put(saver, thread, meta, &err) : SST_ENOMEM;
    sst_value_unref(meta);
    if (rc != SST_OK && rc != SST_ENOTSUP) {
        if (err.msg[0] == '\0') {
            snprintf(err.msg, sizeof err.msg, "out of memory");
        }
        fail("", &err);
        return false;
    }
    return true;
}

static int cmd_run(const cli *c) {
    session s;
    int rc = open_session(c, &s);
    if (rc >= 0) {
        return rc;
    }
    print_warnings(sst_lua_script_graph(s.script));
    sst_value *input = NULL, *resume = NULL;
    if ((c->input != NULL && (input = json_arg("--input", c->input)) == NULL) ||
        (c->resume != NULL && (resume = json_arg("--resume", c->resume)) == NULL)) {
        sst_value_unref(input);
        close_session(&s);
        return EXIT_FAILED;
    }
    char fresh[37];
    const char *thread = c->thread;
    if (thread == NULL) {
        sst_cli_new_thread_id(fresh);
        thread = fresh;
    }
    sst_error err = {0};
    const sst_compiled_graph *cg = sst_lua_script_graph(s.script);
    if (input != NULL && !sst_is_object(input) && sst_compiled_graph_is_entrypoint(cg)) {
        /* an entrypoint takes any value: --input 5 is {SST_ROOT: 5} */
        input = sst_object_set_take(sst_object_empty(), SST_ROOT, input, &err);
        if (input == NULL) {
            fprintf(stderr, "superstep: --input: %s\n", err.msg);
            close_session(&s);
            return EXIT_FAILED;
        }
    }
    sst_graph_thread *t = sst_graph_thread_open(cg, s.saver, thread, &err);
    sst_engine *engine = NULL;
    sst_otlp_tracer *tracer = NULL;
    unsigned workers = c->workers != 0 ? c->workers : sst_lua_script_workers(s.script);
    if (t != NULL && workers > 1) {
        sst_engine_opts eo;
        sst_engine_opts_init(&eo);
        eo.workers = workers;
        engine = sst_engine_new(&eo, &err);
    }
    if (t == NULL || (workers > 1 && engine == NULL)) {
        rc = fail("", &err);
        goto out;
    }
    if ((rc = check_target(c, t, thread, input != NULL || resume != NULL)) >= 0) {
        goto out;
    }
    if (!stamp_graph(s.saver, thread, c->script)) {
        rc = EXIT_FAILED;
        goto out;
    }
    if (c->thread == NULL && !c->json) {
        fprintf(stderr, "thread %s\n", thread);
    }
    run_ui ui = {.progress = isatty(2) && !c->json, .t0 = now_s(), .stream_mode = c->stream};
    bool trace_failed;
    tracer = sst_cli_tracer(c->otlp_endpoint, c->trace_content, &trace_failed);
    if (trace_failed) {
        rc = EXIT_FAILED;
        goto out;
    }
    sst_invoke_opts o;
    sst_invoke_opts_init(&o);
    sst_lua_script_invoke_opts(s.script, &o);
    if (c->durability != NULL) {
        (void)sst_cli_parse_durability(c->durability, &o.durability); /* checked when parsed */
    }
    o.tracer = sst_otlp_tracer_hooks(tracer);
    o.engine = engine;
    o.checkpoint_id = c->checkpoint;
    o.resume = resume;
    o.stream_modes = ui.stream_mode | (ui.progress ? SST_STREAM_TASKS : 0);
    if (o.stream_modes != 0) {
        o.stream = on_event;
        o.stream_ns = c->subgraphs ? on_ns_event : NULL;
        o.subgraphs = c->subgraphs;
        o.stream_user_data = &ui;
    }
    sst_graph_result *r = sst_graph_invoke(cg, t, input, &o, &err);
    if (ui.progress) {
        fprintf(stderr, "\r\033[K");
    }
    if (r == NULL) {
        rc = fail("", &err);
        goto out;
    }
    sst_run_status status = sst_graph_result_status(r);
    rc = status == SST_RUN_COMPLETED     ? EXIT_DONE
         : status == SST_RUN_INTERRUPTED ? EXIT_INTERRUPTED
                                         : EXIT_FAILED;
    print_run_result(c, r, t, thread, ui.t0);
    sst_graph_result_free(r);
out:
    sst_cli_tracer_done(tracer);
    sst_engine_free(engine);
    sst_graph_thread_free(t);
    sst_value_unref(input);
    sst_value_unref(resume);
    close_session(&s);
    return rc;
}

/* Prints one page of history entries after @p printed others; returns the last id (new). */
static char *print_page(const cli *c, const sst_value *page, size_t *printed) {
    char *last = NULL;
    for (size_t i = 0; i < sst_array_len(page) && (c->limit == 0 || *printed < c->limit); i++) {
        const sst_value *e = sst_array_get(page, i);
        fputs(*printed > 0 ? "," : "[", stdout);
        print_json(stdout, e, c->json ? SST_JSON_COMPACT : SST_JSON_PRETTY);
        (*printed)++;
        free(last);
        last = strdup(sst_string_cstr(sst_object_get(e, "checkpoint_id")));
    }
    return last;
}

/*
 * superstep history: pages of 100 checkpoints printed as they are read, so
 * the memory used does not grow with the history. Each entry is the
 * checkpoint's metadata and what it changed; --values prints whole states.
 */
static int cmd_history(const cli *c, sst_graph_thread *t) {
    sst_error err = {0};
    size_t printed = 0;
    char *before = c->before != NULL ? strdup(c->before) : NULL;
    int rc = EXIT_DONE;
    for (;;) {
        size_t want = c->limit > 0 && c->limit - printed < 100 ? c->limit - printed : 100;
        sst_value *page = sst_graph_history_page(t, NULL, before, want, c->values, &err);
        if (page == NULL) {
            rc = err.code == SST_ENOTFOUND && printed == 0
                     ? (fprintf(stderr, "superstep: unknown thread '%s'\n", c->thread), EXIT_FAILED)
                     : fail("", &err);
            break;
        }
        size_t n = sst_array_len(page);
        char *last = print_page(c, page, &printed);
        sst_value_unref(page);
        free(before);
        before = last;
        if (n < want || (c->limit > 0 && printed >= c->limit)) {
            break;
        }
    }
    free(before);
    if (printed > 0) {
        fputs("]\n", stdout);
    } else if (rc == EXIT_DONE) {
        fprintf(stderr, "superstep: unknown thread '%s'%s\n", c->thread,
                c->before != NULL ? " (or nothing before that checkpoint)" : "");
        rc = EXIT_FAILED;
    }
    return rc;
}

static int cmd_state(const cli *c, bool history) {
    session s;
    int rc = open_session(c, &s);
    if (rc >= 0) {
        return rc;
    }
    sst_error err = {0};
    sst_graph_thread *t =
        sst_graph_thread_open(sst_lua_script_graph(s.script), s.saver, c->thread, &err);
    if (t != NULL && history) {
        rc = cmd_history(c, t);
        sst_graph_thread_free(t);
        close_session(&s);
        return rc;
    }
    sst_value *v = t != NULL ? sst_graph_get_state(t, c->checkpoint, &err) : NULL;
    if (v == NULL) {
        if (err.code == SST_ENOTFOUND && c->checkpoint != NULL) {
            fprintf(stderr, "superstep: unknown checkpoint '%s'\n", c->checkpoint);
            rc = EXIT_FAILED;
        } else if (err.code == SST_ENOTFOUND) {
            fprintf(stderr, "superstep: unknown thread '%s'\n", c->thread);
            rc = EXIT_FAILED;
        } else {
            rc = fail("", &err);
        }
    } else if (sst_is_null(sst_object_get(v, "checkpoint_id"))) {
        fprintf(stderr, "superstep: unknown thread '%s'\n", c->thread);
        rc = EXIT_FAILED;
    } else {
        print_json(stdout, v, c->json ? SST_JSON_COMPACT : SST_JSON_PRETTY);
        rc = EXIT_DONE;
    }
    sst_value_unref(v);
    sst_graph_thread_free(t);
    close_session(&s);
    return rc;
}

static int cmd_threads(const cli *c) {
    session s;
    int rc = open_session(c, &s);
    if (rc >= 0) {
        return rc;
    }
    sst_error err = {0};
    sst_value *list = sst_checkpointer_search_threads(s.saver, NULL, &err);
    if (list == NULL) {
        rc = fail("", &err);
    } else if (c->json) {
        print_json(stdout, list, SST_JSON_COMPACT);
        rc = EXIT_DONE;
    } else {
        printf("%-40s %-12s %12s %8s  %s\n", "THREAD", "STATUS", "CHECKPOINTS", "STEP", "LATEST");
        for (size_t i = 0; i < sst_array_len(list); i++) {
            const sst_value *t = sst_array_get(list, i);
            const sst_value *latest = sst_object_get(t, "latest");
            printf("%-40s %-12s %12lld %8lld  %s\n",
                   sst_string_cstr(sst_object_get(t, "thread_id")),
                   sst_string_cstr(sst_object_get(t, "status")),
                   (long long)sst_int_value(sst_object_get(t, "checkpoints")),
                   (long long)sst_int_value(sst_object_get(t, "step")),
                   sst_is_string(latest) ? sst_string_cstr(latest) : "-");
        }
        rc = EXIT_DONE;
    }
    sst_value_unref(list);
    close_session(&s);
    return rc;
}

static int cmd_graph(const cli *c) {
    sst_error err = {0};
    sst_lua_opts lo;
    sst_lua_opts_init(&lo);
    lo.memory_limit = c->memory_limit;
    sst_lua_script *s = sst_lua_script_load_opts(c->script, &lo, &err);
    if (s == NULL) {
        fprintf(stderr, "superstep: %s\n", err.msg);
        return EXIT_FAILED;
    }
    print_warnings(sst_lua_script_graph(s));
    char *text = c->dot || c->svg
                     ? sst_compiled_graph_dot_xray(sst_lua_script_graph(s), c->xray, &err)
                     : sst_compiled_graph_mermaid_xray(sst_lua_script_graph(s), c->xray, &err);
    if (text != NULL && c->svg) {
        char *svg = sst_dot_to_svg(text, NULL, &err);
        sst_free(text);
        text = svg;
    }
    int rc = text != NULL ? (fputs(text, stdout), EXIT_DONE) : fail("", &err);
    sst_free(text);
    sst_lua_script_free(s);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 2 || sst_cli_is_help(argv[1])) {
        sst_cli_print_overview(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : EXIT_DONE;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("superstep %s\n", sst_version());
        return EXIT_DONE;
    }
    if (sst_cli_help_asked(argc, argv)) {
        return EXIT_DONE;
    }
    if (strcmp(argv[1], "help") == 0) {
        return sst_cli_help(argc, argv);
    }
    if (strcmp(argv[1], "agent") == 0) {
        return sst_cli_agent(argc, argv);
    }
    if (strcmp(argv[1], "check") == 0) {
        return sst_cli_check(argc, argv);
    }
    if (strcmp(argv[1], "serve") == 0 || strcmp(argv[1], "worker") == 0) {
        return sst_cli_serve(argc, argv);
    }
    if (strcmp(argv[1], "store") == 0) {
        return sst_cli_store(argc, argv);
    }
    cli c;
    int rc = parse_args(argc, argv, &c);
    if (rc >= 0) {
        return rc;
    }
    if (strcmp(c.command, "run") == 0) {
        return cmd_run(&c);
    } else if (strcmp(c.command, "graph") == 0) {
        return cmd_graph(&c);
    } else if (strcmp(c.command, "threads") == 0) {
        return cmd_threads(&c);
    }
    return cmd_state(&c, strcmp(c.command, "history") == 0);
}
