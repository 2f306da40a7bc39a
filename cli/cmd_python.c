/* SPDX-License-Identifier: MIT */
/*
 * `superstep serve CONFIG` (and `worker`) where CONFIG names a Python graph
 * ("./agent.py:graph"): the process that hosts Python graphs is Python, so
 * this replaces itself with `PYTHON -m superstep serve ARGS...` (the same
 * arguments). PYTHON is $SUPERSTEP_PYTHON, else the interpreter the build
 * was configured with, else python3. The module is found on that
 * interpreter's path (installed: pip install ./python), and when this binary
 * runs from its build tree, in that tree's python/ folder (put in front of
 * PYTHONPATH). docs/python.md, "Serving".
 */
#define _POSIX_C_SOURCE 200809L
#include "cmd_python.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "superstep/json.h"
#include "superstep/server.h"

#ifndef SST_PYTHON_EXECUTABLE
#define SST_PYTHON_EXECUTABLE "python3"
#endif

extern char **environ;

bool sst_cli_config_python_graph(const char *config, char *first, size_t n) {
    sst_error err = {0};
    sst_value *cfg = config != NULL ? sst_json_read_file(config, NULL, &err) : NULL;
    const sst_value *graphs = sst_object_get(cfg, "graphs");
    bool found = false;
    for (size_t i = 0; !found && i < sst_object_len(graphs); i++) {
        const sst_value *spec = sst_object_value_at(graphs, i);
        if (sst_is_string(spec) && sst_graph_spec_is_python(sst_string_cstr(spec))) {
            found = true;
            snprintf(first, n, "%s: %s", sst_string_cstr(sst_object_key_at(graphs, i)),
                     sst_string_cstr(spec));
        }
    }
    sst_value_unref(cfg);
    return found;
}

static const char *python_of(void) {
    const char *p = getenv("SUPERSTEP_PYTHON");
    return p != NULL && p[0] != '\0' ? p : SST_PYTHON_EXECUTABLE;
}

/* The build tree's python/ folder, put in front of PYTHONPATH when it holds the module. */
static void build_tree_path(void) {
#ifdef SST_PYTHON_BUILD_DIR
    struct stat st;
    if (stat(SST_PYTHON_BUILD_DIR "/superstep/__init__.py", &st) != 0) {
        return;
    }
    const char *old = getenv("PYTHONPATH");
    size_t n = strlen(SST_PYTHON_BUILD_DIR) + (old != NULL ? strlen(old) : 0) + 2;
    char *v = malloc(n);
    if (v == NULL) {
        return;
    }
    snprintf(v, n, "%s%s%s", SST_PYTHON_BUILD_DIR, old != NULL && old[0] != '\0' ? ":" : "",
             old != NULL ? old : "");
    setenv("PYTHONPATH", v, 1);
    free(v);
#endif
}

/* 0: PYTHON imports superstep._core; 1: it cannot; 127: PYTHON does not run. */
static int probe(const char *python) {
    char *const args[] = {(char *)python, "-c", "import superstep._core", NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int status = 0;
    int rc = posix_spawnp(&pid, python, &fa, NULL, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        return 127;
    }
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
        return 1;
    }
    return WEXITSTATUS(status) == 0 ? 0 : WEXITSTATUS(status) == 127 ? 127 : 1;
}

int sst_cli_serve_python(int argc, char **argv, const char *what) {
    const char *python = python_of();
    build_tree_path();
    int found = probe(python);
    if (found == 127) {
        fprintf(stderr,
                "superstep %s: the config has a Python graph (%s), and the Python interpreter "
                "'%s' cannot be run (set SUPERSTEP_PYTHON to one)\n",
                argv[1], what, python);
        return 1;
    }
    if (found != 0) {
        fprintf(stderr,
                "superstep %s: the config has a Python graph (%s), and %s cannot import the "
                "Python module superstep: build it (cmake -DSST_BUILD_PYTHON=ON; Debian's "
                "python3-dev) and run this binary from that build tree or set "
                "PYTHONPATH=BUILD/python, or install it (pip install ./python)\n",
                argv[1], what, python);
        return 1;
    }
    char **args = calloc((size_t)argc + 3, sizeof *args);
    if (args == NULL) {
        fprintf(stderr, "superstep %s: out of memory\n", argv[1]);
        return 1;
    }
    args[0] = (char *)python;
    args[1] = "-m";
    args[2] = "superstep";
    for (int i = 1; i < argc; i++) {
        args[i + 2] = argv[i];
    }
    fflush(stdout);
    execvp(python, args);
    fprintf(stderr, "superstep %s: cannot run %s: ", argv[1], python);
    perror(NULL);
    free(args);
    return 1;
}
