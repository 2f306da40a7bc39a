/* SPDX-License-Identifier: MIT */
/* Small SQLite helpers shared by the SQLite backends; see sqlite_util.h. */
#include <stddef.h>

#include "sqlite_util.h"

int64_t sst__sqlite_int(sqlite3 *db, const char *sql, bool *ok) {
    sqlite3_stmt *st = NULL;
    int64_t v = 0;
    *ok = sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW;
    if (*ok) {
        v = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    return v;
}
