/* SPDX-License-Identifier: MIT */
/* Argument helpers shared by the superstep commands (cli/cmd_args.c). */
#ifndef SUPERSTEP_CLI_ARGS_H
#define SUPERSTEP_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "superstep/checkpoint.h"
#include "superstep/graph.h"

/* The checkpoint database when neither --db nor $SUPERSTEP_DB names one. */
#define SST_CLI_DEFAULT_DB "superstep.db"

/*
 * A byte count above 0, optionally with K, M or G (powers of 1024): "100M" is
 * 104857600. False for anything else (signs, spaces, overflow).
 */
bool sst_cli_parse_bytes(const char *text, size_t *out);

/*
 * The checkpoint database of every command: @p given (the --db argument, or
 * NULL), else $SUPERSTEP_DB, else SST_CLI_DEFAULT_DB in the current
 * directory; an empty name counts as none. The result is @p given, the
 * environment's string or a literal: never freed. (`run` asks the script's
 * checkpointer before this when --db is absent.)
 */
const char *sst_cli_default_db(const char *given);

/*
 * A new thread id, for `run` and `agent` without --thread: a time-ordered
 * UUID (sst_uuid7), so ids never repeat across processes (unlike a pid) and
 * sort in the order the threads were started.
 */
void sst_cli_new_thread_id(char out[37]);

/* --durability sync|async|exit (docs/durability.md); false for anything else. */
bool sst_cli_parse_durability(const char *text, sst_durability *out);
/* --flush on|off: the database's flush policy (docs/durability.md); false otherwise. */
bool sst_cli_parse_flush(const char *text, sst_flush_policy *out);

#endif
