/* SPDX-License-Identifier: MIT */
/*
 * Webhooks: when a run with kwargs.webhook ends, its outcome is POSTed there
 * as LangGraph's server does: the run, plus "status", "values",
 * "run_started_at", "run_ended_at" and "webhook_sent_at". Each attempt has a
 * 10 s timeout; a failed connection, a 429 or a 5xx is tried again, up to
 * three attempts, after the receiver's Retry-After or a backoff (the HTTP
 * client layer, agent/http_client.h), each wait at most 10 s and cut short
 * when the server stops. A failure is logged (the run is done).
 */
#include <curl/curl.h>
#include <string.h>

#include "agent/http_client.h"
#include "server_int.h"
#include "superstep/json.h"

#define WEBHOOK_ATTEMPTS    3
#define WEBHOOK_MAX_WAIT_MS 10000

static size_t discard(char *p, size_t size, size_t n, void *ud) {
    SST_UNUSED(p);
    SST_UNUSED(ud);
    return size * n;
}

static size_t on_header(char *line, size_t size, size_t n, void *ud) {
    int64_t *retry_after_ms = ud;
    int64_t ms = sst__retry_after_header(line, size * n);
    *retry_after_ms = ms >= 0 ? ms : *retry_after_ms;
    return size * n;
}

static bool stopping(void *ud) {
    sst_server *s = ud;
    pthread_mutex_lock(&s->mu);
    bool stop = s->stopping;
    pthread_mutex_unlock(&s->mu);
    return stop;
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
    sst__http_global_init();
    CURL *h = body != NULL ? curl_easy_init() : NULL;
    struct curl_slist *hdr =
        h != NULL ? curl_slist_append(NULL, "Content-Type: application/json") : NULL;
    if (hdr == NULL) {
        curl_easy_cleanup(h);
        sst_free(body);
        srv_log(s, "run %s: webhook not sent (out of memory)", c->run_id);
        return;
    }
    static const sst_retry_policy backoff = {.max_attempts = WEBHOOK_ATTEMPTS,
                                             .initial_interval_s = 1.0,
                                             .backoff_factor = 2.0,
                                             .max_interval_s = WEBHOOK_MAX_WAIT_MS / 1000.0,
                                             .jitter = true};
    for (unsigned i = 1;; i++) {
        int64_t retry_after = -1;
        curl_easy_reset(h); /* keeps the connection for the next attempt */
        curl_easy_setopt(h, CURLOPT_URL, sst_string_cstr(url));
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
        curl_easy_setopt(h, CURLOPT_TIMEOUT, 10L);
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
        curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(h, CURLOPT_HEADERDATA, &retry_after);
        CURLcode rc = curl_easy_perform(h);
        long code = 0;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
        if (rc == CURLE_OK && code < 400) {
            break;
        }
        bool again = rc != CURLE_OK || code == 429 || code >= 500;
        srv_log(s, "run %s: webhook %s failed: %s (HTTP %ld)%s", c->run_id, sst_string_cstr(url),
                rc != CURLE_OK ? curl_easy_strerror(rc) : "error status", code,
                again && i < WEBHOOK_ATTEMPTS ? ", trying again" : "");
        if (!again || i >= WEBHOOK_ATTEMPTS ||
            !sst__http_wait("webhook",
                            sst__http_retry_wait_ms(&backoff, i, retry_after, WEBHOOK_MAX_WAIT_MS),
                            stopping, s)) {
            break;
        }
    }
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    sst_free(body);
}
