/* SPDX-License-Identifier: MIT */
/*
 * Rows of the SQLite run queue: copied out of a statement (under the
 * queue's lock) into one allocation each, then parsed and handed to the
 * caller's callback after the lock is let go (sqlite_int.h).
 */
#include <string.h>

#include "sqlite_int.h"
#include "superstep/json.h"

/* The text columns of a row, in the order queue_row keeps their pointers. */
static const int k_text_cols[] = {RC_RUN_ID,   RC_THREAD_ID, RC_ASSISTANT_ID, RC_KWARGS,
                                  RC_METADATA, RC_STRATEGY,  RC_CANCEL,       RC_OWNER};
#define N_TEXT (sizeof k_text_cols / sizeof k_text_cols[0])

static sst_code read_status(sqlite_queue *s, sqlite3_stmt *st, sst_queue_status *out,
                            sst_error *err) {
    const char *name = (const char *)sqlite3_column_text(st, RC_STATUS);
    if (sst_queue_status_parse(name, out)) {
        return SST_OK;
    }
    const char *id = (const char *)sqlite3_column_text(st, RC_RUN_ID);
    return sst__error(err, SST_EIO, "queue '%s': run '%s' has an unknown status '%s'", s->path,
                      id != NULL ? id : "?", name != NULL ? name : "NULL");
}

sst_code sst__qs_row_read(sqlite_queue *s, sqlite3_stmt *st, queue_row *r, sst_error *err) {
    memset(r, 0, sizeof *r);
    sst_code rc = read_status(s, st, &r->status, err);
    if (rc != SST_OK) {
        return rc;
    }
    const char *text[N_TEXT];
    size_t len[N_TEXT], total = 0;
    for (size_t i = 0; i < N_TEXT; i++) {
        text[i] = (const char *)sqlite3_column_text(st, k_text_cols[i]);
        len[i] = (size_t)sqlite3_column_bytes(st, k_text_cols[i]);
        if (text[i] == NULL && sqlite3_column_type(st, k_text_cols[i]) != SQLITE_NULL) {
            return sst__enomem(err);
        }
        total += len[i] + 1;
    }
    if ((r->buf = sst__malloc(total)) == NULL) {
        return sst__enomem(err);
    }
    const char **dst[N_TEXT] = {&r->run_id,   &r->thread_id, &r->assistant_id, &r->kwargs,
                                &r->metadata, &r->strategy,  &r->cancel,       &r->owner};
    char *at = r->buf;
    for (size_t i = 0; i < N_TEXT; i++) {
        if (text[i] != NULL) {
            memcpy(at, text[i], len[i]);
            at[len[i]] = '\0';
            *dst[i] = at;
            at += len[i] + 1;
        }
    }
    r->kwargs_len = len[3];
    r->metadata_len = len[4];
    r->created_at = sqlite3_column_int64(st, RC_CREATED_AT);
    r->updated_at = sqlite3_column_int64(st, RC_UPDATED_AT);
    r->run_after = sqlite3_column_int64(st, RC_RUN_AFTER);
    r->attempt = (uint32_t)sqlite3_column_int64(st, RC_ATTEMPT);
    r->lease_expires = sqlite3_column_int64(st, RC_LEASE_EXPIRES);
    r->token = (uint64_t)sqlite3_column_int64(st, RC_TOKEN);
    return SST_OK;
}

void sst__qs_row_free(queue_row *r) {
    sst__free(r->buf);
    r->buf = NULL;
}

sst_code sst__qs_rows_read(sqlite_queue *s, sqlite3_stmt *st, const char *what, queue_rows *rows,
                           sst_error *err) {
    sst_code rc = SST_OK;
    int step = SQLITE_DONE;
    while (rc == SST_OK && (step = sqlite3_step(st)) == SQLITE_ROW) {
        if (rows->n == rows->cap &&
            !sst__grow((void **)&rows->rows, &rows->cap, rows->n, sizeof *rows->rows, 8)) {
            rc = sst__enomem(err);
        } else if ((rc = sst__qs_row_read(s, st, &rows->rows[rows->n], err)) == SST_OK) {
            rows->n++;
        }
    }
    if (rc == SST_OK && step != SQLITE_DONE) {
        rc = sst__qs_error(s, err, what);
    }
    sqlite3_reset(st);
    return rc;
}

void sst__qs_rows_free(queue_rows *rows) {
    for (size_t i = 0; i < rows->n; i++) {
        sst__qs_row_free(&rows->rows[i]);
    }
    sst__free(rows->rows);
    rows->rows = NULL;
    rows->n = rows->cap = 0;
}

/* The stored JSON object @p text of run @p r (column @p name) as a new value. */
static sst_value *parse_json(const sqlite_queue *s, const queue_row *r, const char *name,
                             const char *text, size_t len, sst_error *err) {
    sst_error e = {0};
    sst_value *v = sst_json_read(text != NULL ? text : "", len, NULL, &e);
    if (v == NULL && e.code == SST_ENOMEM) {
        sst__enomem(err);
    } else if (v == NULL || !sst_is_object(v)) {
        sst__error(err, SST_EIO, "queue '%s': run '%s': the stored %s is not a JSON object: %s",
                   s->path, r->run_id, name, v == NULL ? e.msg : sst_type_name(sst_value_type(v)));
        sst_value_unref(v);
        v = NULL;
    }
    return v;
}

sst_code sst__qs_row_emit(const sqlite_queue *s, const queue_row *r, sst_queued_run_fn each,
                          void *user_data, bool *more, sst_error *err) {
    sst_value *kwargs = parse_json(s, r, "kwargs", r->kwargs, r->kwargs_len, err);
    sst_value *metadata =
        kwargs != NULL ? parse_json(s, r, "metadata", r->metadata, r->metadata_len, err) : NULL;
    if (metadata == NULL) {
        sst_value_unref(kwargs);
        return sst__code(err);
    }
    sst_queued_run run = {
        .run_id = r->run_id,
        .thread_id = r->thread_id,
        .assistant_id = r->assistant_id,
        .status = r->status,
        .kwargs = kwargs,
        .metadata = metadata,
        .multitask_strategy = r->strategy,
        .created_at = r->created_at,
        .updated_at = r->updated_at,
        .run_after = r->run_after,
        .attempt = r->attempt,
        .cancel = r->cancel,
        .owner = r->owner,
        .lease_expires = r->lease_expires,
        .token = r->token,
    };
    bool go = each(&run, user_data);
    if (more != NULL) {
        *more = go;
    }
    sst_value_unref(kwargs);
    sst_value_unref(metadata);
    return SST_OK;
}
