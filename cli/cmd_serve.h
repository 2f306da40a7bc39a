/* SPDX-License-Identifier: MIT */
/* The `superstep serve` command (cli/cmd_serve.c). */
#ifndef SUPERSTEP_CLI_SERVE_H
#define SUPERSTEP_CLI_SERVE_H

/*
 * Runs `superstep serve [CONFIG] [options]` (argv[1] is "serve"): LangGraph's
 * HTTP API over the graphs of CONFIG (langgraph.json) and --graph options,
 * until SIGTERM or SIGINT; returns the exit code.
 */
int sst_cli_serve(int argc, char **argv);

#endif
