/* SPDX-License-Identifier: MIT */
/*
 * Small SQLite helpers shared by the SQLite backends of the checkpoint and
 * store layers (the saver, the node cache, the long-term store).
 */
#ifndef SUPERSTEP_CHECKPOINT_SQLITE_UTIL_H
#define SUPERSTEP_CHECKPOINT_SQLITE_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include <sqlite3.h>

/* The first column of the first row of @p sql (a PRAGMA, a count); *ok false when it failed. */
int64_t sst__sqlite_int(sqlite3 *db, const char *sql, bool *ok);

#endif
