/* SPDX-License-Identifier: MIT */
/* The database of --db: memory, PostgreSQL or SQLite (cli/cmd_db.h). */
#include "cmd_db.h"

#include <string.h>

#include "superstep/postgres.h"

sst_checkpointer *sst_cli_open_saver(const char *db, sst_error *err) {
    if (strcmp(db, ":memory:") == 0) {
        return sst_memory_saver_new(err);
    }
    return sst_pg_is_url(db) ? sst_postgres_saver_open(db, NULL, err)
                             : sst_sqlite_saver_open(db, NULL, err);
}

sst_store *sst_cli_open_store(const char *db, const sst_store_opts *o, sst_error *err) {
    if (strcmp(db, ":memory:") == 0) {
        return sst_memory_store_new(o, err);
    }
    return sst_pg_is_url(db) ? sst_postgres_store_new(db, o, err)
                             : sst_sqlite_store_new(db, o, err);
}
