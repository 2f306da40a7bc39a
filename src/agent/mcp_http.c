/* SPDX-License-Identifier: MIT */
/*
 * The MCP Streamable HTTP transport (see mcp.h): every message is a POST to
 * the endpoint accepting application/json and text/event-stream. A request's
 * reply is a JSON body or an event stream whose events carry server
 * messages (requests and notifications, then the response); each goes to
 * the sink on the posting thread as it arrives. A message the sink sends
 * back while a stream is being read (a `ping` answer) is queued and posted
 * between two turns of the transfer, never from inside a curl callback.
 *
 * Each POST drives its own curl multi handle in slices of 100 ms, so a
 * deadline or a cancel check stops it promptly. Handles are pooled (with
 * their connections) and taken by one thread at a time, so several calls
 * run in parallel. `mu` guards the pool and the session state; it is never
 * held during a transfer.
 */
#include <strings.h>

#include <curl/curl.h>

#include "http_client.h"
#include "mcp.h"
#include "redact.h"
#include "sse.h"

#define MAX_POOLED     8
#define ERROR_BODY_MAX 8192

typedef struct http_conn {
    CURLM *multi;
    CURL *easy;
    struct http_conn *next;
} http_conn;

typedef struct http_tr {
    sst__mcp_transport base; /* first: the transport's functions get a pointer to it */
    sst__mcp_sink sink;
    char url[2048];   /* sent as it is */
    char shown[2048]; /* without user info, for messages */
    char **headers;   /* owned copies of the caller's "Name: value" lines */
    size_t n_headers;
    long connect_timeout_ms;
    size_t max_message;
    pthread_mutex_t mu;
    char *session;    /* mu: the Mcp-Session-Id the server gave, owned; NULL before */
    char version[32]; /* mu: the negotiated revision, sent as MCP-Protocol-Version; "" before */
    http_conn *pool;  /* mu: idle handles */
    size_t pooled;    /* mu */
} http_tr;

/* One POST (or DELETE) and its reply. */
typedef struct exchange {
    http_tr *t;
    CURL *easy;
    sst__sse sse;
    sst__buf body;          /* a JSON reply, or the start of an error body */
    size_t received;        /* bytes of a JSON reply so far */
    bool too_large;         /* a JSON reply over max_message */
    char ctype[128];        /* the reply's Content-Type */
    char session[256];      /* the reply's Mcp-Session-Id, or "" */
    int64_t retry_after_ms; /* the reply's Retry-After, or -1 */
    sst_error err;          /* a callback's error */
    char **outbox;          /* messages the sink sent during the transfer, owned */
    size_t n_out, cap_out;
} exchange;

/* The exchange whose transfer this thread is running (its callbacks deliver messages). */
static _Thread_local exchange *tls_exchange;

static http_tr *from_base(sst__mcp_transport *t) {
    return (http_tr *)t;
}

/* ---- handles ------------------------------------------------------------------------------ */

static http_conn *take_conn(http_tr *t) {
    pthread_mutex_lock(&t->mu);
    http_conn *c = t->pool;
    if (c != NULL) {
        t->pool = c->next;
        t->pooled--;
    }
    pthread_mutex_unlock(&t->mu);
    if (c != NULL) {
        return c;
    }
    c = sst__calloc(1, sizeof *c);
    if (c == NULL) {
        return NULL;
    }
    c->multi = curl_multi_init();
    c->easy = curl_easy_init();
    if (c->multi == NULL || c->easy == NULL) {
        curl_easy_cleanup(c->easy);
        curl_multi_cleanup(c->multi);
        sst__free(c);
        return NULL;
    }
    return c;
}

static void free_conn(http_conn *c) {
    curl_easy_cleanup(c->easy);
    curl_multi_cleanup(c->multi);
    sst__free(c);
}

static void put_conn(http_tr *t, http_conn *c) {
    pthread_mutex_lock(&t->mu);
    bool keep = t->pooled < MAX_POOLED;
    if (keep) {
        c->next = t->pool;
        t->pool = c;
        t->pooled++;
    }
    pthread_mutex_unlock(&t->mu);
    if (!keep) {
        free_conn(c);
    }
}

/* ---- callbacks ---------------------------------------------------------------------------- */

/* Copies the value of header @p name from @p line when it is that header. */
static void header_value(const char *line, size_t len, const char *name, char *out, size_t size) {
    size_t nl = strlen(name);
    if (len <= nl || strncasecmp(line, name, nl) != 0 || line[nl] != ':') {
        return;
    }
    const char *v = line + nl + 1, *end = line + len;
    while (v < end && (*v == ' ' || *v == '\t')) {
        v++;
    }
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t')) {
        end--;
    }
    size_t n = (size_t)(end - v) < size - 1 ? (size_t)(end - v) : size - 1;
    memcpy(out, v, n);
    out[n] = '\0';
}

static size_t on_header(char *line, size_t size, size_t n, void *ud) {
    exchange *x = ud;
    size_t len = size * n;
    if (len >= 5 && strncmp(line, "HTTP/", 5) == 0) {
        x->ctype[0] = '\0'; /* a new response (after a 100 Continue) */
        x->session[0] = '\0';
        x->retry_after_ms = -1;
        return len;
    }
    int64_t wait = sst__retry_after_header(line, len);
    x->retry_after_ms = wait >= 0 ? wait : x->retry_after_ms;
    header_value(line, len, "content-type", x->ctype, sizeof x->ctype);
    header_value(line, len, "mcp-session-id", x->session, sizeof x->session);
    return len;
}

static long status_of(CURL *easy) {
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    return status;
}

static bool is_event_stream(const exchange *x) {
    return strncasecmp(x->ctype, "text/event-stream", 17) == 0;
}

/* An event of the stream: its data is one JSON-RPC message (events without data are primers). */
static sst_code on_event(const char *event, const char *data, size_t len, void *ud) {
    (void)event;
    exchange *x = ud;
    size_t i = 0;
    while (i < len && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t')) {
        i++;
    }
    if (i < len) {
        x->t->sink.message(x->t->sink.ud, data, len);
    }
    return SST_OK;
}

static size_t on_body(char *p, size_t size, size_t n, void *ud) {
    exchange *x = ud;
    size_t len = size * n;
    long status = status_of(x->easy);
    if (status == 200 && is_event_stream(x)) {
        return sst__sse_feed(&x->sse, p, len, &x->err) == SST_OK ? len : 0;
    }
    if (status == 200) {
        x->received += len;
        if (x->received > x->t->max_message) {
            x->too_large = true;
            return 0; /* aborts the transfer */
        }
    } else if (x->body.len >= ERROR_BODY_MAX) {
        return len; /* enough of an error page to quote */
    }
    sst__buf_append(&x->body, p, len);
    if (x->body.oom) {
        sst__enomem(&x->err);
        return 0;
    }
    return len;
}

/* ---- posting ------------------------------------------------------------------------------ */

static sst_code post(http_tr *t, bool delete_session, const char *body, size_t len,
                     const sst__mcp_wait *w, sst_error *err);

/* Posts what the sink sent during a transfer (answers to the server's requests). */
static void flush_outbox(exchange *x) {
    for (size_t i = 0; i < x->n_out; i++) {
        sst__mcp_wait w = {.deadline_ms = sst__mcp_now_ms() + 5000};
        sst_error local = {0};
        if (post(x->t, false, x->outbox[i], strlen(x->outbox[i]), &w, &local) != SST_OK) {
            /* An answer lost is the server's timeout to handle; the call goes on. */
        }
        sst__free(x->outbox[i]);
    }
    x->n_out = 0;
}

/* The request's headers: ours, the caller's, the session's. NULL on SST_ENOMEM. */
static struct curl_slist *request_headers(http_tr *t, bool json_body, const char *traceparent) {
    struct curl_slist *h = NULL;
    bool ok = true;
#define ADD(line)                                                                                  \
    do {                                                                                           \
        struct curl_slist *n_ = ok ? curl_slist_append(h, (line)) : NULL;                          \
        ok = n_ != NULL;                                                                           \
        h = ok ? n_ : h;                                                                           \
    } while (0)
    if (json_body) {
        ADD("Content-Type: application/json");
    }
    ADD("Accept: application/json, text/event-stream");
    for (size_t i = 0; i < t->n_headers; i++) {
        ADD(t->headers[i]);
    }
    char line[320];
    if (traceparent != NULL) {
        snprintf(line, sizeof line, "traceparent: %.200s", traceparent);
        ADD(line);
    }
    pthread_mutex_lock(&t->mu);
    if (t->session != NULL) {
        snprintf(line, sizeof line, "Mcp-Session-Id: %s", t->session);
        ADD(line);
    }
    if (t->version[0] != '\0') {
        snprintf(line, sizeof line, "MCP-Protocol-Version: %s", t->version);
        ADD(line);
    }
    pthread_mutex_unlock(&t->mu);
#undef ADD
    if (!ok) {
        curl_slist_free_all(h);
        return NULL;
    }
    return h;
}

/*
 * Runs the transfer of @p c in slices until it ends or @p w stops it; returns
 * @p w's verdict. *answered: it was stopped because the reply had come.
 */
static sst_code run(exchange *x, http_conn *c, const sst__mcp_wait *w, CURLcode *rc,
                    bool *answered) {
    *rc = CURLE_OK;
    *answered = false;
    sst_code stop = SST_OK;
    curl_multi_add_handle(c->multi, c->easy);
    for (;;) {
        int running = 0;
        exchange *outer = tls_exchange;
        tls_exchange = x;
        CURLMcode mc = curl_multi_perform(c->multi, &running);
        tls_exchange = outer;
        flush_outbox(x);
        if (mc != CURLM_OK) {
            *rc = CURLE_OUT_OF_MEMORY;
            break;
        }
        if (running == 0) {
            break;
        }
        if (w != NULL && w->answered != NULL && w->answered(w->answered_ud)) {
            *answered = true; /* the stream may stay open: what was asked for is there */
            break;
        }
        stop = sst__mcp_wait_check(w);
        if (stop != SST_OK) {
            break;
        }
        curl_multi_poll(c->multi, NULL, 0, 100, NULL);
    }
    int left = 0;
    CURLMsg *m;
    while ((m = curl_multi_info_read(c->multi, &left)) != NULL) {
        if (m->msg == CURLMSG_DONE && m->easy_handle == c->easy) {
            *rc = m->data.result;
        }
    }
    curl_multi_remove_handle(c->multi, c->easy);
    return stop;
}

/* The outcome of a finished transfer: SST_OK, or an error naming what went wrong. */
static sst_code outcome(exchange *x, CURLcode rc, const char *curl_msg, bool had_session,
                        sst_error *err) {
    http_tr *t = x->t;
    if (x->too_large) {
        return sst__error(err, SST_ELIMIT, "the server sent a reply larger than %zu bytes",
                          t->max_message);
    }
    if (x->err.code == SST_ERANGE) {
        return sst__error(err, SST_ELIMIT, "the server sent an event larger than %zu bytes",
                          t->max_message);
    }
    if (x->err.code != SST_OK) {
        *err = x->err;
        return err->code;
    }
    if (rc != CURLE_OK) {
        return sst__error(err, SST_EUNAVAILABLE, "POST %s failed: %s", t->shown,
                          curl_msg[0] != '\0' ? curl_msg : curl_easy_strerror(rc));
    }
    long status = status_of(x->easy);
    if (status == 200 && is_event_stream(x)) {
        return sst__sse_finish(&x->sse, err) == SST_OK
                   ? SST_OK
                   : sst__error(err, SST_EPARSE, "the event stream from %s ended inside an event",
                                t->shown);
    }
    if (status == 200 || status == 202 || status == 204) {
        if (status == 200 && x->body.len > 0) {
            sst__buf_putc(&x->body, '\0');
            if (x->body.oom) {
                return sst__enomem(err);
            }
            t->sink.message(t->sink.ud, x->body.data, x->body.len - 1);
        }
        return SST_OK;
    }
    char ex[208];
    sst__mcp_excerpt(x->body.data != NULL ? x->body.data : "", x->body.len, 200, false, ex);
    if (status == 404 && had_session) {
        return sst__error(err, SST_EUNAVAILABLE,
                          "the server ended the session (HTTP 404 from %s): connect again",
                          t->shown);
    }
    bool transient = status == 429 || status >= 500;
    return sst__error(err, transient ? SST_EUNAVAILABLE : SST_EINVAL, "%s answered HTTP %ld: %s",
                      t->shown, status, ex);
}

/*
 * One attempt of post(). *busy: the server answered 429 or 503 (it did not
 * take the message: another attempt may), with *retry_after_ms its
 * Retry-After or -1.
 */
static sst_code post_once(http_tr *t, bool delete_session, const char *body, size_t len,
                          const sst__mcp_wait *w, bool *busy, int64_t *retry_after_ms,
                          sst_error *err) {
    http_conn *c = take_conn(t);
    struct curl_slist *headers =
        c != NULL ? request_headers(t, !delete_session, w != NULL ? w->traceparent : NULL) : NULL;
    if (headers == NULL) {
        if (c != NULL) {
            put_conn(t, c);
        }
        return sst__enomem(err);
    }
    pthread_mutex_lock(&t->mu);
    bool had_session = t->session != NULL;
    pthread_mutex_unlock(&t->mu);
    exchange x;
    memset(&x, 0, sizeof x);
    x.t = t;
    x.easy = c->easy;
    x.retry_after_ms = -1;
    sst__sse_init(&x.sse, t->max_message, on_event, &x);
    sst__buf_init(&x.body);
    char curl_msg[CURL_ERROR_SIZE] = "";
    curl_easy_reset(c->easy); /* keeps the connection for this request */
    curl_easy_setopt(c->easy, CURLOPT_URL, t->url);
    curl_easy_setopt(c->easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c->easy, CURLOPT_CONNECTTIMEOUT_MS, t->connect_timeout_ms);
    curl_easy_setopt(c->easy, CURLOPT_ERRORBUFFER, curl_msg);
    curl_easy_setopt(c->easy, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c->easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c->easy, CURLOPT_WRITEDATA, &x);
    curl_easy_setopt(c->easy, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c->easy, CURLOPT_HEADERDATA, &x);
    if (delete_session) {
        curl_easy_setopt(c->easy, CURLOPT_CUSTOMREQUEST, "DELETE");
    } else {
        curl_easy_setopt(c->easy, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    }
    CURLcode rc;
    bool answered;
    sst_code code = run(&x, c, w, &rc, &answered);
    if (answered) {
        code = SST_OK;
    } else if (code != SST_OK) {
        sst__error(err, code, "stopped waiting for the reply from %s", t->shown);
    } else {
        code = outcome(&x, rc, curl_msg, had_session, err);
        long status = status_of(c->easy);
        *busy = code != SST_OK && rc == CURLE_OK && (status == 429 || status == 503);
        *retry_after_ms = x.retry_after_ms;
    }
    if (x.session[0] != '\0' && !delete_session) {
        pthread_mutex_lock(&t->mu);
        if (t->session == NULL) {
            t->session = sst__strndup(x.session, strlen(x.session));
        }
        pthread_mutex_unlock(&t->mu);
    }
    for (size_t i = 0; i < x.n_out; i++) {
        sst__free(x.outbox[i]);
    }
    sst__free(x.outbox);
    sst__sse_free(&x.sse);
    sst__buf_free(&x.body);
    curl_easy_setopt(c->easy, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(c->easy, CURLOPT_ERRORBUFFER, NULL);
    curl_slist_free_all(headers);
    put_conn(t, c);
    return code;
}

static bool wait_stopped(void *ud) {
    return sst__mcp_wait_check(ud) != SST_OK;
}

/*
 * POSTs @p body (or, @p delete_session, sends DELETE) and hands the reply's
 * messages to the sink. A 429 or 503 (the server did not take it) is tried
 * again, up to three attempts, after the server's Retry-After or a backoff
 * (http_client.h), unless the wait would pass @p w's deadline.
 * SST_ETIMEOUT / SST_ECANCELLED when @p w stopped it.
 */
static sst_code post(http_tr *t, bool delete_session, const char *body, size_t len,
                     const sst__mcp_wait *w, sst_error *err) {
    static const sst_retry_policy backoff = {
        .max_attempts = 3, .initial_interval_s = 0.5, .backoff_factor = 2.0, .max_interval_s = 4};
    for (unsigned i = 1;; i++) {
        bool busy = false;
        int64_t retry_after = -1;
        sst_code code = post_once(t, delete_session, body, len, w, &busy, &retry_after, err);
        if (code == SST_OK || !busy || i >= backoff.max_attempts) {
            return code;
        }
        uint64_t wait = sst__http_retry_wait_ms(&backoff, i, retry_after, SST__RETRY_AFTER_MAX_MS);
        if (w != NULL && w->deadline_ms != 0 && sst__mcp_now_ms() + wait >= w->deadline_ms) {
            return code; /* the answer would come too late */
        }
        if (!sst__http_wait("MCP", wait, wait_stopped, (void *)w)) {
            return code;
        }
        sst_error_clear(err);
    }
}

static sst_code http_send(sst__mcp_transport *base, const char *json, size_t len,
                          const sst__mcp_wait *w, sst_error *err) {
    http_tr *t = from_base(base);
    exchange *x = tls_exchange;
    if (x != NULL && x->t == t) {
        /* Inside a transfer's callback: posted once curl has returned. */
        char *copy = sst__strndup(json, len);
        if (copy == NULL ||
            !sst__grow((void **)&x->outbox, &x->cap_out, x->n_out, sizeof *x->outbox, 4)) {
            sst__free(copy);
            return sst__enomem(err);
        }
        x->outbox[x->n_out++] = copy;
        return SST_OK;
    }
    return post(t, false, json, len, w, err);
}

static void http_negotiated(sst__mcp_transport *base, const char *version) {
    http_tr *t = from_base(base);
    pthread_mutex_lock(&t->mu);
    snprintf(t->version, sizeof t->version, "%s", version);
    pthread_mutex_unlock(&t->mu);
}

static void http_close(sst__mcp_transport *base) {
    http_tr *t = from_base(base);
    pthread_mutex_lock(&t->mu);
    bool has_session = t->session != NULL;
    pthread_mutex_unlock(&t->mu);
    if (has_session) {
        /* Ends the session; a server that does not allow it answers 405, which is fine too. */
        sst__mcp_wait w = {.deadline_ms = sst__mcp_now_ms() + 2000};
        sst_error local = {0};
        if (post(t, true, NULL, 0, &w, &local) != SST_OK) {
            /* The server may be gone already: nothing more to do. */
        }
    }
    while (t->pool != NULL) {
        http_conn *c = t->pool;
        t->pool = c->next;
        free_conn(c);
    }
    for (size_t i = 0; i < t->n_headers; i++) {
        sst__free(t->headers[i]);
    }
    sst__free(t->headers);
    sst__free(t->session);
    memset(t->url, 0, sizeof t->url);
    pthread_mutex_destroy(&t->mu);
    sst__free(t);
}

sst__mcp_transport *sst__mcp_http_open(const char *url, const sst_mcp_opts *o,
                                       const sst__mcp_sink *sink, sst_error *err) {
    sst__http_global_init();
    if (url == NULL || (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)) {
        char shown[256];
        sst__url_redact(url != NULL ? url : "(none)", shown, sizeof shown);
        sst__error(err, SST_EINVAL, "MCP HTTP server: '%s' is not an http(s) URL", shown);
        return NULL;
    }
    http_tr *t = sst__calloc(1, sizeof *t);
    if (t == NULL) {
        sst__enomem(err);
        return NULL;
    }
    pthread_mutex_init(&t->mu, NULL);
    t->base.kind = "HTTP";
    t->base.inline_replies = true;
    t->base.send = http_send;
    t->base.negotiated = http_negotiated;
    t->base.close = http_close;
    t->base.pid = -1;
    t->sink = *sink;
    t->connect_timeout_ms = o->connect_timeout_ms;
    t->max_message = o->max_message_bytes;
    sst__url_redact(url, t->shown, sizeof t->shown);
    size_t n = 0;
    while (o->headers != NULL && o->headers[n] != NULL) {
        n++;
    }
    sst_code code = SST_OK;
    if (strlen(url) >= sizeof t->url) {
        code = sst__error(err, SST_EINVAL, "MCP HTTP server: the URL is longer than %zu bytes",
                          sizeof t->url - 1);
    } else if (n > 0 && (t->headers = sst__calloc(n, sizeof *t->headers)) == NULL) {
        code = sst__enomem(err);
    }
    for (size_t i = 0; i < n && code == SST_OK; i++) {
        const char *h = o->headers[i];
        const char *colon = strchr(h, ':');
        if (colon == NULL || colon == h || strpbrk(h, "\r\n") != NULL) {
            /* Not quoted: it may be a credential. */
            code = sst__error(err, SST_EINVAL,
                              "MCP HTTP server %s: header %zu is not one 'Name: value' line",
                              t->shown, i + 1);
        } else if ((t->headers[t->n_headers] = sst__strndup(h, strlen(h))) == NULL) {
            code = sst__enomem(err);
        } else {
            t->n_headers++;
        }
    }
    if (code != SST_OK) {
        http_close(&t->base);
        return NULL;
    }
    snprintf(t->url, sizeof t->url, "%s", url);
    return &t->base;
}
