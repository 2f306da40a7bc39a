/* SPDX-License-Identifier: MIT */
/*
 * Runs LangGraph's own tests restated in Lua (the test_*.lua files of tests/lua/langgraph),
 * each in a child process with a fresh Lua state, a timeout and the
 * `superstep` module, and prints the count: ported, passing, pending,
 * deliberate.
 *
 * A test file's header says what it is:
 *
 *   -- langgraph: test_pregel.py::test_invoke_two_processes_in_out
 *   -- pending: subgraphs       (optional: needs a feature of a later issue)
 *   -- deliberate: why          (optional: asserts superstep's own behaviour)
 *   -- script: why              (optional: loaded with sst_lua_script_load, so
 *                                that compile{workers = N} works; returns its graph)
 *
 * A test passes when the file runs to its end without an error (checks.lua's
 * finish() raises the failed checks). A pending test is run too and must
 * fail: one that passes is reported, so the mark is removed when its issue
 * lands. A test marked "-- failing: reason" fails on a known gap that is
 * not fixed yet: it counts as failing without failing the run, and is
 * reported when it passes. Usage: langgraph_runner DIR [NAME...] (names limit the run).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "superstep/lua.h"

enum { TEST_TIMEOUT_S = 60, MAX_TESTS = 1024 };

typedef struct port {
    char *name;         /* file name */
    char pending[64];   /* the feature it waits for, "" when none */
    bool deliberate;    /* asserts a deliberate difference */
    bool known_failing; /* fails on a known gap not fixed yet */
    bool script;        /* loaded as a script (sst_lua_script_load): workers allowed */
    bool has_origin;    /* names its LangGraph test */
} port;

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Reads the header comment lines of @p path into @p p. */
static void read_header(const char *path, port *p) {
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    char line[512];
    while (fgets(line, sizeof line, f) != NULL && strncmp(line, "--", 2) == 0) {
        if (strncmp(line, "-- langgraph:", 13) == 0)
            p->has_origin = true;
        else if (strncmp(line, "-- script:", 10) == 0)
            p->script = true;
        else if (strncmp(line, "-- failing:", 11) == 0)
            p->known_failing = true;
        else if (strncmp(line, "-- deliberate:", 14) == 0)
            p->deliberate = true;
        else if (strncmp(line, "-- pending:", 11) == 0) {
            const char *w = line + 11;
            while (*w == ' ')
                w++;
            size_t n = strcspn(w, " \n(");
            if (n >= sizeof p->pending)
                n = sizeof p->pending - 1;
            memcpy(p->pending, w, n);
            p->pending[n] = '\0';
        }
    }
    fclose(f);
}

/*
 * In the child: a file marked "-- script:" is loaded as a script, so that
 * compile{workers = N} works (each worker state runs the file again with
 * superstep.worker set; the file returns its graph).
 */
static int run_script(const char *dir, const char *file) {
    char path[4096], lua_path[8300];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    snprintf(lua_path, sizeof lua_path, "%s/?.lua;%s/../?.lua;;", dir, dir);
    setenv("LUA_PATH_5_4", lua_path, 1);
    sst_error err = {0};
    sst_lua_script *s = sst_lua_script_load(path, &err);
    if (s == NULL) {
        fprintf(stderr, "%s: %s\n", file, err.msg);
        return 1;
    }
    sst_lua_script_free(s);
    return 0;
}

/* In the child: runs one file; exit 0 when it passed. */
static int run_child(const char *dir, const char *file, bool quiet, bool script) {
    if (quiet) {
        if (freopen("/dev/null", "w", stderr) == NULL)
            return 3;
    }
    alarm(TEST_TIMEOUT_S);
    if (script) {
        return run_script(dir, file);
    }
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    luaL_requiref(L, "superstep", luaopen_superstep, 1);
    lua_pop(L, 1);
    /* require("checks") finds tests/lua/checks.lua, require("lg") the ports' helpers */
    lua_getglobal(L, "package");
    lua_pushfstring(L, "%s/?.lua;%s/../?.lua", dir, dir);
    lua_setfield(L, -2, "path");
    lua_pop(L, 1);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int rc = luaL_dofile(L, path);
    if (rc != LUA_OK)
        fprintf(stderr, "%s: %s\n", file, luaL_tolstring(L, -1, NULL));
    lua_close(L);
    return rc == LUA_OK ? 0 : 1;
}

/* Runs @p file in a child process; returns 0 when it passed. */
static int run_one(const char *dir, const char *file, bool quiet, bool script) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0)
        _exit(run_child(dir, file, quiet, script));
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
    }
    if (WIFSIGNALED(status)) {
        if (!quiet)
            fprintf(stderr, "%s: killed by signal %d%s\n", file, WTERMSIG(status),
                    WTERMSIG(status) == SIGALRM ? " (timeout)" : "");
        return 1;
    }
    return WEXITSTATUS(status) == 0 ? 0 : 1;
}

static bool selected(const char *file, int argc, char **argv) {
    if (argc <= 2)
        return true;
    for (int i = 2; i < argc; i++) {
        size_t n = strlen(argv[i]);
        if (strncmp(file, argv[i], n) == 0 && (file[n] == '\0' || strcmp(file + n, ".lua") == 0))
            return true;
    }
    return false;
}

static int list_ports(const char *dir, int argc, char **argv, char **names) {
    DIR *d = opendir(dir);
    if (d == NULL) {
        fprintf(stderr, "langgraph_runner: cannot open %s\n", dir);
        return -1;
    }
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < MAX_TESTS) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, "test_", 5) == 0 && len > 4 &&
            strcmp(e->d_name + len - 4, ".lua") == 0 && selected(e->d_name, argc, argv))
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, by_name);
    return n;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: langgraph_runner DIR [NAME...]\n");
        return 2;
    }
    const char *dir = argv[1];
    static char *names[MAX_TESTS];
    int n = list_ports(dir, argc, argv, names);
    if (n < 0)
        return 2;
    setvbuf(stdout, NULL, _IOLBF, 0);
    int passing = 0, pending = 0, deliberate = 0, known = 0, bad = 0;
    for (int i = 0; i < n; i++) {
        port p = {.name = names[i]};
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, p.name);
        read_header(path, &p);
        bool is_pending = p.pending[0] != '\0';
        /* LANGGRAPH_VERBOSE=1 shows the errors of marked tests too. */
        bool quiet = (is_pending || p.known_failing) && getenv("LANGGRAPH_VERBOSE") == NULL;
        int rc = run_one(dir, p.name, quiet, p.script);
        if (!p.has_origin) {
            printf("BAD      %s: no '-- langgraph: FILE::TEST' header\n", p.name);
            bad++;
        } else if (is_pending) {
            pending++;
            if (rc == 0) {
                printf("UNEXPECTED PASS %s (pending: %s): remove the mark\n", p.name, p.pending);
                bad++;
            } else {
                printf("pending  %s (%s)\n", p.name, p.pending);
            }
        } else if (p.known_failing) {
            known++;
            if (rc == 0) {
                printf("UNEXPECTED PASS %s (marked failing): remove the mark\n", p.name);
                bad++;
            } else {
                printf("failing  %s (known)\n", p.name);
            }
        } else if (rc == 0) {
            passing++;
            deliberate += p.deliberate;
            printf("ok       %s%s\n", p.name, p.deliberate ? " (deliberate)" : "");
        } else {
            printf("FAIL     %s\n", p.name);
            bad++;
        }
        free(names[i]);
    }
    printf("langgraph ports: %d ported, %d passing (%d deliberate), %d pending, %d failing (%d "
           "known)\n",
           n, passing, deliberate, pending, n - passing - pending, known);
    return bad == 0 ? 0 : 1;
}
