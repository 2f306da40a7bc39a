/* SPDX-License-Identifier: MIT */
/* The `superstep check` command (cli/cmd_check.c). */
#ifndef SUPERSTEP_CLI_CHECK_H
#define SUPERSTEP_CLI_CHECK_H

/* Runs `superstep check [--db PATH] [--repair]` (argv[1] is "check"); returns the exit code. */
int sst_cli_check(int argc, char **argv);

#endif
