/* SPDX-License-Identifier: MIT */
/*
 * The database of --db for every command (cli/cmd_db.c): ":memory:" (this
 * process only), a PostgreSQL URL ("postgresql://..." or "postgres://...";
 * "postgresql://" alone takes everything from libpq's PG* variables), or a
 * SQLite file.
 */
#ifndef SUPERSTEP_CLI_DB_H
#define SUPERSTEP_CLI_DB_H

#include "superstep/checkpoint.h"
#include "superstep/store.h"

/* The checkpointer of @p db (see above) with flush policy @p flush (--flush; refused for
 * ":memory:" unless SST_FLUSH_DEFAULT); NULL with @p err filled. */
sst_checkpointer *sst_cli_open_saver(const char *db, sst_flush_policy flush, sst_error *err);

/* The long-term store of @p db with options @p o; NULL with @p err filled. */
sst_store *sst_cli_open_store(const char *db, const sst_store_opts *o, sst_error *err);

#endif
