/* SPDX-License-Identifier: MIT */
/*
 * superstep worker CONFIG --db postgresql://... [--workers N]: the same
 * server without HTTP, running the runs that API processes enqueue.
 *
 * superstep serve [CONFIG] [options]: LangGraph's Agent Server API over the
 * graphs of a langgraph.json-shaped file and of --graph NAME=script.lua
 * options, until SIGTERM or SIGINT (a graceful stop: running runs stop at a
 * superstep boundary and resume on the next start). Prints
 * "listening on http://HOST:PORT" on stdout once it serves.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cmd_args.h"
#include "cmd_python.h"
#include "cmd_serve.h"
#include "cmd_trace.h"
#include "cmd_usage.h"
#include "superstep/postgres.h"
#include "superstep/server.h"

/* "serve" or "worker": the command being run, for messages. */
static const char *g_cmd = "serve";

static void log_line(const char *line, void *ud) {
    (void)ud;
    fprintf(stderr, "superstep %s: %s\n", g_cmd, line);
}

static int bad(const char *fmt, const char *arg) {
    return sst_cli_usage_error(g_cmd, fmt, arg);
}

/*
 * The options a worker takes (the rest are about HTTP): one parser reads
 * both commands, and an option a worker would ignore is a usage error.
 */
static bool worker_takes(const char *opt) {
    static const char *const opts[] = {
        "--graph",         "--db",    "--workers",    "--lease", "--otlp-endpoint",
        "--trace-content", "--quiet", "--durability", "--flush"};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        if (strcmp(opts[i], opt) == 0) {
            return true;
        }
    }
    return false;
}

/* A whole number from @p min to @p max; false for anything else. */
static bool number(const char *s, unsigned long min, unsigned long max, unsigned *out) {
    char *end;
    errno = 0;
    unsigned long n = strtoul(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || n < min || n > max) {
        return false;
    }
    *out = (unsigned)n;
    return true;
}

typedef struct serve_args {
    sst_server_opts o;
    const char *config;
    const char *graphs[64];
    size_t n_graphs;
    const char *token_env;
    bool quiet;
    bool open;                 /* --open */
    const char *otlp_endpoint; /* --otlp-endpoint URL */
    bool trace_content;
} serve_args;

/* Options with a value; -1 when @p a was one and it was good, 0 when @p a is not one. */
static int valued(serve_args *a, const char *opt, const char *val) {
    unsigned n = 0;
    size_t bytes = 0;
    if (strcmp(opt, "--graph") == 0) {
        if (strchr(val, '=') == NULL || val[0] == '=' || a->n_graphs == 64) {
            return bad("--graph: expected NAME=SCRIPT.lua, got '%s'", val);
        }
        a->graphs[a->n_graphs++] = val;
    } else if (strcmp(opt, "--host") == 0) {
        a->o.host = val;
    } else if (strcmp(opt, "--db") == 0) {
        a->o.db = val;
    } else if (strcmp(opt, "--durability") == 0) {
        if (!sst_cli_parse_durability(val, &a->o.durability)) {
            return bad("--durability: expected sync, async or exit, got '%s'", val);
        }
    } else if (strcmp(opt, "--flush") == 0) {
        if (!sst_cli_parse_flush(val, &a->o.flush)) {
            return bad("--flush: expected on or off, got '%s'", val);
        }
    } else if (strcmp(opt, "--auth-token-env") == 0) {
        a->token_env = val;
    } else if (strcmp(opt, "--web-dir") == 0) {
        a->o.web_dir = val;
    } else if (strcmp(opt, "--otlp-endpoint") == 0) {
        a->otlp_endpoint = val;
    } else if (strcmp(opt, "--max-body") == 0) {
        if (!sst_cli_parse_bytes(val, &bytes)) {
            return bad("--max-body: expected a number of bytes (K, M, G allowed), got '%s'", val);
        }
        a->o.max_body_bytes = bytes;
    } else {
        static const struct {
            const char *name;
            unsigned long min, max;
        } nums[] = {{"--port", 0, 65535},
                    {"--workers", 0, 256},
                    {"--max-connections", 1, 1000000},
                    {"--timeout", 1, 86400},
                    {"--stream-backlog", 1, 100000000},
                    {"--runs-per-thread", 1, 1000000},
                    {"--http-threads", 1, 256},
                    {"--lease", 1, 86400}};
        size_t k = 0;
        while (k < sizeof nums / sizeof nums[0] && strcmp(nums[k].name, opt) != 0) {
            k++;
        }
        if (k == sizeof nums / sizeof nums[0]) {
            return 0;
        }
        if (!number(val, nums[k].min, nums[k].max, &n)) {
            char msg[160];
            snprintf(msg, sizeof msg, "%s: expected a number from %lu to %lu, got '%.60s'", opt,
                     nums[k].min, nums[k].max, val);
            return bad("%s", msg);
        }
        unsigned *dst[] = {
            &a->o.port, &a->o.workers,         &a->o.max_connections, &a->o.connection_timeout,
            NULL,       &a->o.runs_per_thread, &a->o.http_threads,    &a->o.lease_s};
        if (dst[k] != NULL) {
            *dst[k] = n;
        } else {
            a->o.stream_backlog = n;
        }
    }
    return -1;
}

static bool dir_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int parse(int argc, char **argv, serve_args *a) {
    memset(a, 0, sizeof *a);
    sst_server_opts_init(&a->o);
    a->o.db = NULL;
    a->o.workers_only = strcmp(argv[1], "worker") == 0;
    for (int i = 2; i < argc; i++) {
        const char *opt = argv[i];
        if (a->o.workers_only && opt[0] == '-' && !worker_takes(opt)) {
            return bad("unknown option '%s' (a worker serves no HTTP)", opt);
        }
        if (strcmp(opt, "--insecure-listen-any") == 0) {
            a->o.insecure_listen_any = true;
        } else if (strcmp(opt, "--quiet") == 0) {
            a->quiet = true;
        } else if (strcmp(opt, "--shared-db") == 0) {
            a->o.shared_db = true;
        } else if (strcmp(opt, "--trace-content") == 0) {
            a->trace_content = true;
        } else if (strcmp(opt, "--no-web") == 0) {
            a->o.no_web = true;
        } else if (strcmp(opt, "--open") == 0) {
            a->open = true;
        } else if (opt[0] == '-' && opt[1] == '-') {
            if (i + 1 >= argc) {
                return bad("%s needs a value", opt);
            }
            int rc = valued(a, opt, argv[++i]);
            if (rc == 0) {
                return bad("unknown option '%s'", opt);
            }
            if (rc != -1) {
                return rc;
            }
        } else if (a->config == NULL) {
            a->config = opt;
        } else {
            return bad("unexpected argument '%s' (one CONFIG file at most)", opt);
        }
    }
    if (a->config == NULL && a->n_graphs == 0) {
        return bad("%s", "nothing to serve: give a CONFIG file (langgraph.json) or --graph "
                         "NAME=SCRIPT.lua");
    }
    if (a->o.workers_only && (a->o.db == NULL || !sst_pg_is_url(a->o.db))) {
        return bad("--db: a worker needs a PostgreSQL database (postgresql://...), got '%s'",
                   a->o.db != NULL ? a->o.db : "(none)");
    }
    a->o.db = sst_cli_default_db(a->o.db);
    const char *env_dir = getenv("SST_WEB_DIR");
    if (a->o.web_dir == NULL && env_dir != NULL && env_dir[0] != '\0') {
        a->o.web_dir = env_dir;
    }
    if (a->o.web_dir != NULL && !dir_exists(a->o.web_dir)) {
        return bad("--web-dir: '%s' is not a directory", a->o.web_dir);
    }
    if (a->token_env != NULL) {
        a->o.auth_token = getenv(a->token_env);
        if (a->o.auth_token == NULL || a->o.auth_token[0] == '\0') {
            return bad("--auth-token-env: the environment variable %s is not set or empty",
                       a->token_env);
        }
    }
    a->o.log = a->quiet ? NULL : log_line;
    return -1;
}

/* Adds the config's and the --graph options' graphs. */
static bool add_graphs(sst_server *s, const serve_args *a) {
    sst_error err = {0};
    if (a->config != NULL && sst_server_load_config(s, a->config, &err) != SST_OK) {
        fprintf(stderr, "superstep %s: %s\n", g_cmd, err.msg);
        return false;
    }
    for (size_t i = 0; i < a->n_graphs; i++) {
        char name[256];
        const char *eq = strchr(a->graphs[i], '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq - a->graphs[i]), a->graphs[i]);
        if (sst_server_add_graph(s, name, eq + 1, &err) != SST_OK) {
            fprintf(stderr, "superstep %s: %s\n", g_cmd, err.msg);
            return false;
        }
    }
    return true;
}

extern char **environ;

/*
 * --open: starts $BROWSER (else xdg-open) on @p url without waiting for it (a shell
 * starts it in the background and exits), with the signals this process blocks or
 * ignores back to normal. Says where the page is when no browser can be started.
 */
static void open_browser(const char *url) {
    const char *browser = getenv("BROWSER");
    if (browser == NULL || browser[0] == '\0') {
        browser = "xdg-open";
    }
    static const char script[] = "command -v \"$0\" >/dev/null 2>&1 || exit 127; "
                                 "\"$0\" \"$1\" </dev/null >/dev/null 2>&1 & exit 0";
    char *const args[] = {"sh", "-c", (char *)script, (char *)browser, (char *)url, NULL};
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, dfl;
    sigemptyset(&none);
    sigemptyset(&dfl);
    sigaddset(&dfl, SIGPIPE);
    sigaddset(&dfl, SIGTERM);
    sigaddset(&dfl, SIGINT);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &dfl);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid;
    int status = 0;
    bool started = posix_spawnp(&pid, "sh", NULL, &attr, args, environ) == 0 &&
                   waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    posix_spawnattr_destroy(&attr);
    if (!started) {
        fprintf(stderr, "superstep %s: --open: cannot start '%s': open %s in a browser\n", g_cmd,
                browser, url);
    }
}

int sst_cli_serve(int argc, char **argv) {
    g_cmd = strcmp(argv[1], "worker") == 0 ? "worker" : "serve";
    serve_args a;
    int rc = parse(argc, argv, &a);
    if (rc != -1) {
        return rc;
    }
    char py[300];
    bool python = sst_cli_config_python_graph(a.config, py, sizeof py);
    for (size_t i = 0; !python && i < a.n_graphs; i++) {
        python = sst_graph_spec_is_python(strchr(a.graphs[i], '=') + 1);
        snprintf(py, sizeof py, "--graph %s", a.graphs[i]);
    }
    if (python) {
        return sst_cli_serve_python(argc, argv, py); /* Python hosts Python graphs */
    }
    /* SIGTERM and SIGINT are taken by this thread (sigwait): every thread the server
     * starts inherits the mask, so none of them is interrupted. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    sst_error err = {0};
    bool trace_failed;
    sst_otlp_tracer *tracer = sst_cli_tracer(a.otlp_endpoint, a.trace_content, &trace_failed);
    if (trace_failed) {
        return 1;
    }
    a.o.tracer = sst_otlp_tracer_hooks(tracer);
    sst_server *s = sst_server_new(&a.o, &err);
    if (s == NULL) {
        fprintf(stderr, "superstep %s: %s\n", g_cmd, err.msg);
        sst_cli_tracer_done(tracer);
        return 1;
    }
    if (!add_graphs(s, &a) || sst_server_start(s, &err) != SST_OK) {
        if (err.code != SST_OK) {
            fprintf(stderr, "superstep %s: %s\n", g_cmd, err.msg);
        }
        sst_server_free(s);
        sst_cli_tracer_done(tracer);
        return 1;
    }
    if (a.o.workers_only) {
        printf("working\n");
    } else {
        printf("listening on http://%s:%u\n", a.o.host, sst_server_port(s));
    }
    fflush(stdout);
    if (a.open && !a.o.workers_only) {
        char url[300];
        bool any = strcmp(a.o.host, "0.0.0.0") == 0 || strcmp(a.o.host, "::") == 0;
        bool v6 = strchr(a.o.host, ':') != NULL && !any;
        snprintf(url, sizeof url, "http://%s%s%s:%u/", v6 ? "[" : "", any ? "127.0.0.1" : a.o.host,
                 v6 ? "]" : "", sst_server_port(s));
        open_browser(url);
    }
    int sig = 0;
    sigwait(&set, &sig);
    if (!a.quiet) {
        fprintf(stderr,
                "superstep %s: %s: stopping (running runs stop at a superstep "
                "boundary)\n",
                g_cmd, sig == SIGINT ? "SIGINT" : "SIGTERM");
    }
    sst_server_stop(s);
    sst_server_wait(s);
    sst_server_free(s);
    sst_cli_tracer_done(tracer);
    return 0;
}
