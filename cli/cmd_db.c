/* SPDX-License-Identifier: MIT */
/* The database of --db: memory, PostgreSQL or SQLite (cli/cmd_db.h). */
#include "cmd_db.h"

#include <stdio.h>
#include <string.h>

#include "superstep/postgres.h"

sst_checkpointer *sst_cli_open_saver(const char *db, sst_flush_policy flush, sst_error *err) {
    if (strcmp(db, ":memory:") == 0) {
        if (flush != SST_FLUSH_DEFAULT) {
            err->code = SST_EINVAL;
            snprintf(err->msg, sizeof err->msg, "--flush: a :memory: database has no disk");
            return NULL;
        }
        return sst_memory_saver_new(err);
    }
    if (sst_pg_is_url(db)) {
        sst_postgres_saver_opts po;
        sst_postgres_saver_opts_init(&po);
        po.synchronous_commit = flush != SST_FLUSH_OFF;
        return sst_postgres_saver_open(db, &po, err);
    }
    sst_sqlite_opts so;
    sst_sqlite_opts_init(&so);
    so.flush = flush;
    return sst_sqlite_saver_open(db, &so, err);
}

sst_store *sst_cli_open_store(const char *db, const sst_store_opts *o, sst_error *err) {
    if (strcmp(db, ":memory:") == 0) {
        return sst_memory_store_new(o, err);
    }
    return sst_pg_is_url(db) ? sst_postgres_store_new(db, o, err)
                             : sst_sqlite_store_new(db, o, err);
}
