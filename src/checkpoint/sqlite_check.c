/* SPDX-License-Identifier: MIT */
/*
 * sst_sqlite_check: SQLite's integrity_check, every record's checksum, and
 * whether each checkpoint can be rebuilt (its deltas back to a snapshot are
 * intact); with repair, a damaged thread's head moves back to its newest
 * checkpoint that can be rebuilt, after a copy of the whole file is made.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sqlite_int.h"

/* One checkpoint row as the check sees it. */
typedef struct row {
    int64_t seq;
    char *thread, *id, *parent; /* owned */
    bool ok;                    /* its own texts are intact */
    bool snapshot;
    bool intact; /* it can be rebuilt */
} row;

typedef struct checker {
    sqlite_saver *s;
    sst_sqlite_damage_fn fn;
    void *ud;
    sst_sqlite_check_report *rep;
    row *rows;
    size_t n, cap;
    char **bad_chunks; /* owned: "thread\nid" of records using a damaged or missing blob */
    size_t n_bad;
} checker;

static void damage(checker *c, const char *thread, const char *id, const char *problem) {
    c->rep->damaged++;
    if (c->fn != NULL) {
        sst_sqlite_damage d = {thread, id, problem};
        c->fn(&d, c->ud);
    }
}

static char *dup(const unsigned char *text) {
    return text != NULL ? sst__strndup((const char *)text, strlen((const char *)text)) : NULL;
}

static sst_code integrity(checker *c, sst_error *err) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c->s->db, "PRAGMA integrity_check(20)", -1, &st, NULL) != SQLITE_OK) {
        return sst__sq_db_error(c->s, err, "integrity_check");
    }
    c->rep->file_ok = true;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *line = (const char *)sqlite3_column_text(st, 0);
        if (line != NULL && strcmp(line, "ok") != 0) {
            c->rep->file_ok = false;
            damage(c, NULL, NULL, line);
        }
    }
    sqlite3_finalize(st);
    return SST_OK;
}

/* Records blobs whose text does not match its sum, and the records using them or missing one. */
static sst_code check_blobs(checker *c, sst_error *err) {
    sqlite3_stmt *st;
    if (!sst__sq_run(c->s, S_SWEEP_CLEAR, "checking blobs", err, NULL) ||
        sqlite3_prepare_v2(c->s->db, "SELECT id, body, crc FROM chunks", -1, &st, NULL) !=
            SQLITE_OK) {
        return sst__sq_db_error(c->s, err, "reading blobs");
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *id = (const char *)sqlite3_column_text(st, 0);
        const char *text = (const char *)sqlite3_column_text(st, 1);
        size_t len = (size_t)sqlite3_column_bytes(st, 1);
        if (id == NULL || sqlite3_column_type(st, 2) == SQLITE_NULL || /* before schema 4 */
            (uint32_t)sqlite3_column_int64(st, 2) ==
                sst__crc32c(0, text != NULL ? text : "", len)) {
            continue;
        }
        char problem[120];
        snprintf(problem, sizeof problem, "blob %.64s: checksum mismatch", id);
        damage(c, NULL, NULL, problem);
        sqlite3_stmt *add;
        if (sqlite3_prepare_v2(c->s->db, "INSERT OR IGNORE INTO temp.sweep VALUES(?)", -1, &add,
                               NULL) == SQLITE_OK) {
            sst__sq_bind_text(add, 1, id);
            sqlite3_step(add);
        }
        sqlite3_finalize(add);
    }
    sqlite3_finalize(st);
    /* The records that use a damaged blob or miss one. */
    if (sqlite3_prepare_v2(
            c->s->db,
            "SELECT DISTINCT c.thread || char(10) || c.id FROM checkpoints c, " BLOB_IDS_OF_C " "
            "LEFT JOIN chunks b ON b.id = j.value WHERE c.blobs IS NOT NULL AND "
            "(b.id IS NULL OR j.value IN (SELECT blob FROM temp.sweep))",
            -1, &st, NULL) != SQLITE_OK) {
        return sst__sq_db_error(c->s, err, "reading blob references");
    }
    sst_code rc = SST_OK;
    while (rc == SST_OK && sqlite3_step(st) == SQLITE_ROW) {
        char **more = sst__realloc(c->bad_chunks, (c->n_bad + 1) * sizeof *more);
        if (more == NULL || (more[c->n_bad] = dup(sqlite3_column_text(st, 0))) == NULL) {
            c->bad_chunks = more != NULL ? more : c->bad_chunks;
            rc = sst__enomem(err);
            break;
        }
        c->bad_chunks = more;
        c->n_bad++;
    }
    sqlite3_finalize(st);
    sst__sq_run(c->s, S_SWEEP_CLEAR, "checking blobs", NULL, NULL);
    return rc;
}

/* True when record (thread, id) uses a damaged or missing blob. */
static bool uses_bad_blob(const checker *c, const char *thread, const char *id) {
    size_t tl = strlen(thread);
    for (size_t i = 0; i < c->n_bad; i++) {
        const char *k = c->bad_chunks[i];
        if (strncmp(k, thread, tl) == 0 && k[tl] == '\n' && strcmp(k + tl + 1, id) == 0) {
            return true;
        }
    }
    return false;
}

/* Checks the current row (REC_COLS, then seq and thread) into @p r. */
static void check_row(checker *c, sqlite3_stmt *st, row *r) {
    sst_checkpoint rec;
    sst_error e;
    sst_error_clear(&e);
    const char *problem = NULL;
    if (r->id == NULL || r->thread == NULL) {
        problem = "a column is missing";
    } else if (sst__sq_read_row(c->s, st, r->thread, &rec, &e) != SST_OK) {
        problem = "checksum mismatch";
    } else if (uses_bad_blob(c, r->thread, r->id)) {
        problem = "it uses a damaged or missing blob";
    }
    r->ok = problem == NULL;
    r->snapshot = r->ok && rec.kind == SST_CHECKPOINT_SNAPSHOT;
    if (problem != NULL) {
        damage(c, r->thread, r->id, problem);
    }
}

/* Whether the row's parent (same thread, earlier) can be rebuilt. */
static bool parent_intact(const checker *c, size_t i, bool *missing) {
    const row *r = &c->rows[i];
    *missing = false;
    for (size_t k = i; k-- > 0 && strcmp(c->rows[k].thread, r->thread) == 0;) {
        if (strcmp(c->rows[k].id, r->parent) == 0) {
            return c->rows[k].intact;
        }
    }
    *missing = true;
    return false;
}

static sst_code check_rows(checker *c, sst_error *err) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c->s->db,
                           "SELECT " REC_COLS ", seq, thread FROM checkpoints ORDER BY thread, seq",
                           -1, &st, NULL) != SQLITE_OK) {
        return sst__sq_db_error(c->s, err, "reading checkpoints");
    }
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (c->n == c->cap) {
            size_t cap = c->cap ? c->cap * 2 : 64;
            row *more = sst__realloc(c->rows, cap * sizeof *more);
            if (more == NULL) {
                sqlite3_finalize(st);
                return sst__enomem(err);
            }
            c->rows = more;
            c->cap = cap;
        }
        row *r = &c->rows[c->n++];
        *r = (row){.seq = sqlite3_column_int64(st, C_BLOBS + 1)};
        r->thread = dup(sqlite3_column_text(st, C_BLOBS + 2));
        r->id = dup(sqlite3_column_text(st, C_ID));
        r->parent = dup(sqlite3_column_text(st, C_PARENT));
        check_row(c, st, r);
        bool missing = false;
        r->intact =
            r->ok && (r->snapshot || r->parent == NULL || parent_intact(c, c->n - 1, &missing));
        if (missing) { /* (a damaged parent was reported as itself) */
            damage(c, r->thread, r->id, "its parent checkpoint is missing: it cannot be rebuilt");
        }
        c->rep->checkpoints++;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? SST_OK : sst__sq_db_error(c->s, err, "reading checkpoints");
}

/* Copies the file (after folding the WAL into it) to PATH.bak-<ms>. */
static sst_code backup(checker *c, sst_error *err) {
    if (c->rep->backup[0] != '\0') {
        return SST_OK;
    }
    sst__sq_exec(c->s, "PRAGMA wal_checkpoint(TRUNCATE)", NULL);
    snprintf(c->rep->backup, sizeof c->rep->backup, "%s.bak-%" PRIu64, c->s->path, sst__now_ms());
    char sql[600];
    snprintf(sql, sizeof sql, "VACUUM INTO '%s'", c->rep->backup);
    if (strchr(c->rep->backup, '\'') != NULL || !sst__sq_exec(c->s, sql, err)) {
        c->rep->backup[0] = '\0';
        return sst__code(err);
    }
    return SST_OK;
}

static sst_code check_writes(checker *c, bool repair, sst_error *err) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c->s->db, "SELECT thread, id, body, crc, rowid FROM writes", -1, &st,
                           NULL) != SQLITE_OK) {
        return sst__sq_db_error(c->s, err, "reading pending writes");
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *b = (const char *)sqlite3_column_text(st, 2);
        size_t bl = (size_t)sqlite3_column_bytes(st, 2);
        bool sum = sqlite3_column_type(st, 3) != SQLITE_NULL;
        bool bad =
            b == NULL || (sum && (uint32_t)sqlite3_column_int64(st, 3) != sst__crc32c(0, b, bl));
        if (!bad) {
            continue;
        }
        damage(c, (const char *)sqlite3_column_text(st, 0),
               (const char *)sqlite3_column_text(st, 1), "pending writes checksum mismatch");
        if (repair) { /* the tasks they held run again */
            char sql[80];
            snprintf(sql, sizeof sql, "DELETE FROM writes WHERE rowid=%lld",
                     (long long)sqlite3_column_int64(st, 4));
            if (backup(c, err) != SST_OK || !sst__sq_exec(c->s, sql, err)) {
                sqlite3_finalize(st);
                return sst__code(err);
            }
        }
    }
    sqlite3_finalize(st);
    return SST_OK;
}

/* Moves back the head of the thread whose rows are [from, to). */
static sst_code repair_thread(checker *c, size_t from, size_t to, sst_error *err) {
    size_t keep = to;
    while (keep > from && !c->rows[keep - 1].intact) {
        keep--;
    }
    if (keep == to) {
        return SST_OK; /* its head can be rebuilt */
    }
    if (keep == from) {
        damage(c, c->rows[from].thread, NULL, "no checkpoint can be rebuilt: thread left as is");
        return SST_OK;
    }
    sst_code rc = backup(c, err);
    if (rc != SST_OK) {
        return rc;
    }
    sqlite3_stmt *st;
    const char *sqls[] = {"DELETE FROM writes WHERE thread=?1 AND id IN (SELECT id FROM "
                          "checkpoints WHERE thread=?1 AND seq>?2)",
                          "DELETE FROM checkpoints WHERE thread=?1 AND seq>?2"};
    for (int i = 0; i < 2; i++) {
        if (sqlite3_prepare_v2(c->s->db, sqls[i], -1, &st, NULL) != SQLITE_OK) {
            return sst__sq_db_error(c->s, err, "repairing");
        }
        sst__sq_bind_text(st, 1, c->rows[from].thread);
        sqlite3_bind_int64(st, 2, c->rows[keep - 1].seq);
        bool ok = sqlite3_step(st) == SQLITE_DONE;
        sqlite3_finalize(st);
        if (!ok) {
            return sst__sq_db_error(c->s, err, "repairing");
        }
    }
    c->rep->threads_repaired++;
    c->rep->removed += to - keep;
    return SST_OK;
}

static sst_code repair_all(checker *c, sst_error *err) {
    sst_code rc = SST_OK;
    for (size_t from = 0; from < c->n && rc == SST_OK;) {
        size_t to = from + 1;
        while (to < c->n && strcmp(c->rows[to].thread, c->rows[from].thread) == 0) {
            to++;
        }
        rc = repair_thread(c, from, to, err);
        from = to;
    }
    return rc;
}

static void checker_free(checker *c) {
    for (size_t i = 0; i < c->n; i++) {
        sst__free(c->rows[i].thread);
        sst__free(c->rows[i].id);
        sst__free(c->rows[i].parent);
    }
    for (size_t i = 0; i < c->n_bad; i++) {
        sst__free(c->bad_chunks[i]);
    }
    sst__free(c->rows);
    sst__free(c->bad_chunks);
    if (c->s != NULL) {
        sst__sq_destroy(c->s);
    }
}

sst_code sst_sqlite_check(const char *path, bool repair, sst_sqlite_damage_fn on_damage,
                          void *user_data, sst_sqlite_check_report *report, sst_error *err) {
    SST__ERR_LOCAL(err);
    sst_sqlite_check_report local;
    report = report != NULL ? report : &local;
    memset(report, 0, sizeof *report);
    if (path == NULL) {
        return sst__error(err, SST_EINVAL, "check: NULL path");
    }
    sst_sqlite_opts o;
    sst_sqlite_opts_init(&o);
    o.check_integrity = false; /* integrity_check runs below and is reported, not refused */
    checker c = {.fn = on_damage, .ud = user_data, .rep = report};
    c.s = sst__sq_open(path, NULL, &o, err);
    sst_code rc = c.s != NULL ? integrity(&c, err) : sst__code(err);
    rc = rc == SST_OK ? check_blobs(&c, err) : rc;
    rc = rc == SST_OK ? check_rows(&c, err) : rc;
    rc = rc == SST_OK ? check_writes(&c, repair, err) : rc;
    if (rc == SST_OK && repair) {
        rc = repair_all(&c, err);
    }
    checker_free(&c);
    return rc;
}
