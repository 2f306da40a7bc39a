/* SPDX-License-Identifier: MIT */
/* `superstep serve` of a config with Python graphs: runs `python3 -m superstep` (cli/cmd_python.c).
 */
#ifndef SUPERSTEP_CLI_PYTHON_H
#define SUPERSTEP_CLI_PYTHON_H

#include <stdbool.h>
#include <stddef.h>

/*
 * True when the langgraph.json @p config names a Python graph; @p first receives the
 * first one as "id: spec". False for a file that cannot be read (serve reports it).
 */
bool sst_cli_config_python_graph(const char *config, char *first, size_t n);

/*
 * Replaces this process with `PYTHON -m superstep argv[1..]` (@p what: the Python graph,
 * for messages). Returns only on failure, with the exit code, after naming what is
 * missing: the interpreter, or the module superstep.
 */
int sst_cli_serve_python(int argc, char **argv, const char *what);

#endif
