/* SPDX-License-Identifier: MIT */
/*
 * The usage texts of the superstep commands (cli/cmd_usage.c): one table,
 * printed by `superstep COMMAND --help`, `superstep help COMMAND` and, its
 * synopsis, by the command's usage errors.
 */
#ifndef SUPERSTEP_CLI_USAGE_H
#define SUPERSTEP_CLI_USAGE_H

#include <stdbool.h>
#include <stdio.h>

/* The exit code of a usage error, for every command. */
#define SST_CLI_EXIT_USAGE 2

/* True when @p arg asks for help: --help or -h. */
bool sst_cli_is_help(const char *arg);

/*
 * The usage text of @p command: "run", "serve", ..., or a store command as
 * "store put"; NULL when there is no such command. A static string.
 */
const char *sst_cli_usage(const char *command);

/* Prints the overview (every command and what it does) on @p out. */
void sst_cli_print_overview(FILE *out);

/*
 * A usage error of @p command ("" for none: the tool itself): on stderr
 * "superstep COMMAND: " and @p fmt with @p arg, then the command's synopsis
 * (its usage up to the first blank line) and where the rest is. Returns
 * SST_CLI_EXIT_USAGE.
 */
int sst_cli_usage_error(const char *command, const char *fmt, const char *arg);

/*
 * When argv (argv[1] a command) asks for help anywhere after the command,
 * prints the command's usage on stdout (a store command's own, e.g. for
 * `store put --help`) and returns true.
 */
bool sst_cli_help_asked(int argc, char **argv);

/* Runs `superstep help [COMMAND [SUBCOMMAND]]`; returns the exit code. */
int sst_cli_help(int argc, char **argv);

#endif
