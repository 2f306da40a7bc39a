/* SPDX-License-Identifier: MIT */
/* The `superstep store` command (cli/cmd_store.c). */
#ifndef SUPERSTEP_CLI_STORE_H
#define SUPERSTEP_CLI_STORE_H

/*
 * Runs `superstep store put|get|delete|search|ls ...` (argv[1] is "store")
 * on the long-term memory store of a SQLite file; returns the exit code.
 */
int sst_cli_store(int argc, char **argv);

#endif
