/* SPDX-License-Identifier: MIT */
/*
 * Webhooks: when a run with kwargs.webhook ends, its outcome is POSTed there
 * as LangGraph's server does: the run, plus "status", "values",
 * "run_started_at", "run_ended_at" and "webhook_sent_at". One attempt with a
 * 10 s timeout; a failure is logged, never retried (the run is done).
 */
#include <curl/curl.h>
#include <string.h>

#include "server_int.h"
#include "superstep/json.h"

static size_t discard(char *p, size_t size, size_t n, void *ud) {
    SST_UNUSED(p);
    SST_UNUSED(ud);
    return size * n;
}

/* The body: the run as a value with the outcome's members. */
static char *body_of(const run_copy *c, const char *status, const char *values, int64_t started,
                     int64_t ended) {
    sst_error err = {0};
    sst_queued_run run = c->run;
    run.status = SST_QUEUE_PENDING;
    sst_queue_status_parse(status, &run.status);
    run.updated_at = ended;
    sst_value *o = srv_run_value(&run, &err);
    sst_value *v = values != NULL ? sst_json_parse(values, &err) : sst_null();
    o = sst__set_take(o, "values", v != NULL ? v : sst_null(), &err);
    o = sst__set_take(o, "run_started_at", srv_iso_time(started, &err), &err);
    o = sst__set_take(o, "run_ended_at", srv_iso_time(ended, &err), &err);
    o = sst__set_take(o, "webhook_sent_at", srv_iso_time(srv_now(), &err), &err);
    char *text = o != NULL ? sst_json_write(o, SST_JSON_COMPACT, NULL, &err) : NULL;
    sst_value_unref(o);
    return text;
}

void srv_webhook(sst_server *s, const run_copy *c, const char *status, const char *values,
                 int64_t started, int64_t ended) {
    const sst_value *url = sst_object_get(c->kwargs, "webhook");
    if (!sst_is_string(url)) {
        return;
    }
    if (s->no_webhooks) { /* langgraph.json's http.disable_webhooks */
        srv_log(s, "run %s: webhook not sent (http.disable_webhooks)", c->run_id);
        return;
    }
    char *body = body_of(c, status, values, started, ended);
    CURL *h = body != NULL ? curl_easy_init() : NULL;
    if (h == NULL) {
        sst_free(body);
        srv_log(s, "run %s: webhook not sent (out of memory)", c->run_id);
        return;
    }
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(h, CURLOPT_URL, sst_string_cstr(url));
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 10L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
    CURLcode rc = curl_easy_perform(h);
    long code = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    if (rc != CURLE_OK || code >= 400) {
        srv_log(s, "run %s: webhook %s failed: %s (HTTP %ld)", c->run_id, sst_string_cstr(url),
                rc != CURLE_OK ? curl_easy_strerror(rc) : "error status", code);
    }
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    sst_free(body);
}
