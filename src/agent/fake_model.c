/* SPDX-License-Identifier: MIT */
/* The scripted offline model; see fake_model.h. */
#include "fake_model.h"

#include <stdio.h>

#include "superstep/json.h"
#include "values/build.h"

sst_code sst__fake_model_load(sst__fake_model *m, const char *path, sst_error *err) {
    memset(m, 0, sizeof *m);
    pthread_mutex_init(&m->mu, NULL);
    m->replies = sst_array_empty();
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return sst__error(err, SST_EIO, "fake model: cannot open '%s'", path);
    }
    sst__buf line;
    sst__buf_init(&line);
    size_t lineno = 0;
    sst_code rc = SST_OK;
    int c;
    do {
        c = fgetc(f);
        if (c != '\n' && c != EOF) {
            sst__buf_putc(&line, (char)c);
            continue;
        }
        lineno++;
        size_t start = 0;
        while (start < line.len &&
               (line.data[start] == ' ' || line.data[start] == '\t' || line.data[start] == '\r')) {
            start++;
        }
        if (line.oom) {
            rc = sst__enomem(err);
        } else if (start < line.len) {
            sst_value *v = sst_json_read(line.data + start, line.len - start, NULL, err);
            if (v == NULL || !sst_is_object(v)) {
                sst_value_unref(v);
                if (v != NULL) {
                    sst__error(err, SST_EPARSE, "a reply must be a JSON object");
                } else {
                    sst__error_unless_set(err, SST_EPARSE, "a reply must be a JSON object");
                }
                sst__error_prefix(err, "fake model '%s' line %zu", path, lineno);
                rc = SST_EPARSE;
            } else {
                sst_value *msg =
                    sst__set_take(sst_value_ref(v), "role", sst_string_new("assistant", err), err);
                sst_value_unref(v);
                m->replies = msg != NULL ? sst_array_push_take(m->replies, msg, err) : NULL;
                rc = m->replies != NULL ? SST_OK : sst__enomem(err);
                if (m->replies == NULL) {
                    m->replies = sst_array_empty();
                }
            }
        }
        line.len = 0;
    } while (c != EOF && rc == SST_OK);
    sst__buf_free(&line);
    fclose(f);
    return rc;
}

void sst__fake_model_free(sst__fake_model *m) {
    sst_value_unref(m->replies);
    m->replies = NULL;
    pthread_mutex_destroy(&m->mu);
}

sst_value *sst__fake_model_chat(sst__fake_model *m, sst__token_fn on_token, void *ud,
                                sst_error *err) {
    pthread_mutex_lock(&m->mu);
    size_t i = m->next;
    if (i < sst_array_len(m->replies)) {
        m->next++;
    }
    pthread_mutex_unlock(&m->mu);
    if (i >= sst_array_len(m->replies)) {
        sst__error(err, SST_ERANGE, "fake model: the script has no reply %zu (it holds %zu)", i + 1,
                   sst_array_len(m->replies));
        return NULL;
    }
    const sst_value *msg = sst_array_get(m->replies, i);
    const sst_value *content = sst_object_get(msg, "content");
    if (on_token != NULL && sst_is_string(content)) {
        /* Word by word, each word with the spaces after it. */
        const char *s = sst_string_cstr(content);
        size_t n = sst_string_len(content), at = 0;
        while (at < n) {
            size_t end = at;
            while (end < n && s[end] != ' ') {
                end++;
            }
            while (end < n && s[end] == ' ') {
                end++;
            }
            sst_code rc = on_token(s + at, end - at, ud);
            if (rc != SST_OK) {
                sst__error(err, rc, "fake model: the token handler failed");
                return NULL;
            }
            at = end;
        }
    }
    return sst_value_ref(msg);
}
