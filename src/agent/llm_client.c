/* SPDX-License-Identifier: MIT */
/* OpenAI-compatible chat completions over libcurl; see llm_client.h. */
#include "llm_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include <curl/curl.h>
#include <pthread.h>

#include "redact.h"
#include "sse.h"
#include "superstep/json.h"
#include "values/build.h"

void sst__llm_config_init(sst__llm_config *c) {
    memset(c, 0, sizeof *c);
    c->connect_timeout_ms = 5000;
    c->timeout_ms = 60000;
    c->max_attempts = 3;
    c->retry_base_ms = 500;
    c->max_retry_after_ms = 30000;
    c->max_response = 8u << 20;
    c->stream = true;
}

/* What every attempt of one chat sends, and what its errors may show. */
typedef struct request {
    const sst__llm_config *cfg;
    char url[1024];   /* sent: keeps the user info, which curl uses for basic auth */
    char shown[1024]; /* the URL without its user info, for messages */
    char *body;       /* owned */
    struct curl_slist *headers;
    char *password;         /* owned copy of the URL's password, or NULL */
    const char *secrets[2]; /* the API key and the password, masked in quoted bodies */
} request;

/* One attempt's state, shared with the curl callbacks. */
typedef struct attempt {
    CURL *curl;
    const sst__llm_config *cfg;
    sst__buf body; /* a plain reply, or an error body */
    sst__sse sse;
    sst__completion completion;
    sst_error err;       /* a parse or handler error found in a callback */
    long retry_after_ms; /* from a Retry-After header, or -1 */
    size_t received;
    bool too_large;
} attempt;

static bool status_ok(attempt *a) {
    long status = 0;
    curl_easy_getinfo(a->curl, CURLINFO_RESPONSE_CODE, &status);
    return status == 200;
}

static sst_code on_event(const char *event, const char *data, size_t len, void *ud) {
    (void)event;
    attempt *a = ud;
    return sst__completion_chunk(&a->completion, data, len, &a->err);
}

static size_t on_body(char *ptr, size_t size, size_t n, void *ud) {
    attempt *a = ud;
    size_t bytes = size * n;
    a->received += bytes;
    if (a->received > a->cfg->max_response) {
        a->too_large = true;
        return 0; /* aborts the transfer */
    }
    if (a->cfg->stream && status_ok(a)) {
        return sst__sse_feed(&a->sse, ptr, bytes, &a->err) == SST_OK ? bytes : 0;
    }
    sst__buf_append(&a->body, ptr, bytes);
    return a->body.oom ? 0 : bytes;
}

static size_t on_header(char *line, size_t size, size_t n, void *ud) {
    attempt *a = ud;
    size_t len = size * n;
    static const char name[] = "retry-after:";
    if (len > sizeof name - 1 && strncasecmp(line, name, sizeof name - 1) == 0) {
        char value[32];
        size_t k =
            len - (sizeof name - 1) < sizeof value - 1 ? len - (sizeof name - 1) : sizeof value - 1;
        memcpy(value, line + sizeof name - 1, k);
        value[k] = '\0';
        char *end;
        double s = strtod(value, &end);
        if (end != value && s >= 0) {
            a->retry_after_ms = (long)(s * 1000.0);
        }
    }
    return len;
}

/*
 * The first 200 bytes of @p b with credentials masked (sst__redact), on one
 * line, cut at a UTF-8 boundary; control characters become spaces.
 */
static void excerpt(const sst__buf *b, const request *q, char out[208]) {
    sst__buf m;
    sst__buf_init(&m);
    sst__redact(b->data != NULL ? b->data : "", b->len, q->secrets, SST_ARRAY_LEN(q->secrets), 200,
                &m);
    size_t n = m.oom ? 0 : m.len < 200 ? m.len : 200;
    while (n > 0 && n < m.len && ((unsigned char)m.data[n] & 0xC0) == 0x80) {
        n--; /* not in the middle of a character */
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)m.data[i];
        out[i] = ch < 0x20 || ch == 0x7f ? ' ' : (char)ch;
    }
    out[n] = '\0';
    sst__buf_free(&m);
}

static char *request_body(const sst__llm_config *c, const sst_value *messages,
                          const sst_value *tools, sst_error *err) {
    sst_value *r = sst__set_take(sst_object_empty(), "model", sst_string_new(c->model, err), err);
    r = sst__set_take(r, "messages", sst_value_ref(messages), err);
    if (tools != NULL && sst_array_len(tools) > 0) {
        r = sst__set_take(r, "tools", sst_value_ref(tools), err);
    }
    r = sst__set_take(r, "stream", sst_bool(c->stream), err);
    for (size_t i = 0; r != NULL && i < sst_object_len(c->params); i++) {
        r = sst_object_setv_take(r, sst_object_key_at(c->params, i),
                                 sst_value_ref(sst_object_value_at(c->params, i)), err);
    }
    char *text = r != NULL ? sst_json_write(r, SST_JSON_COMPACT, NULL, err) : NULL;
    sst_value_unref(r);
    return text;
}

/*
 * The outcome of a performed attempt: the message, or NULL and an error that
 * names no secret. @p err is not NULL (sst__llm_chat uses SST__ERR_LOCAL).
 */
static sst_value *outcome(attempt *a, const request *q, CURLcode rc, bool *transient,
                          sst_error *err) {
    const sst__llm_config *c = q->cfg;
    long status = 0;
    curl_easy_getinfo(a->curl, CURLINFO_RESPONSE_CODE, &status);
    sst_value *out = NULL;
    if (a->too_large) {
        sst__error(err, SST_ERANGE, "LLM reply from %s is larger than %zu bytes", q->shown,
                   c->max_response);
    } else if (a->err.code != SST_OK) {
        *err = a->err; /* a malformed chunk or the token handler's error */
    } else if (rc == CURLE_OPERATION_TIMEDOUT) {
        *transient = true;
        sst__error(err, SST_ETIMEOUT, "LLM request to %s timed out (%s %ld ms)", q->shown,
                   c->stream ? "no data for" : "limit", c->timeout_ms);
    } else if (rc != CURLE_OK) {
        *transient = true; /* curl's own text: it names neither the URL nor a header */
        sst__error(err, SST_EUNAVAILABLE, "LLM request to %s failed: %s", q->shown,
                   curl_easy_strerror(rc));
    } else if (status != 200) {
        char ex[208];
        excerpt(&a->body, q, ex);
        *transient = status == 429 || status >= 500;
        sst__error(err, *transient ? SST_EUNAVAILABLE : SST_EINVAL,
                   "LLM endpoint %s answered HTTP %ld: %s", q->shown, status, ex);
    } else if (c->stream) {
        if (sst__sse_finish(&a->sse, err) == SST_OK) {
            out = sst__completion_message(&a->completion, err);
        }
        if (out == NULL && err->code == SST_EPARSE) {
            *transient = true; /* a stream cut off: the connection dropped */
            sst__error_prefix(err, "LLM stream from %s", q->shown);
        }
    } else {
        out =
            sst__completion_parse_body(a->body.data != NULL ? a->body.data : "", a->body.len, err);
    }
    return out;
}

/* One request. Returns the message, or NULL with *transient telling whether to retry. */
static sst_value *once(const request *q, sst__token_fn on_token, void *ud, long *retry_after_ms,
                       bool *transient, sst_error *err) {
    const sst__llm_config *c = q->cfg;
    attempt a;
    memset(&a, 0, sizeof a);
    a.cfg = c;
    a.retry_after_ms = -1;
    sst__buf_init(&a.body);
    sst__completion_init(&a.completion, on_token, ud);
    sst__sse_init(&a.sse, c->max_response, on_event, &a);
    *transient = false;
    sst_value *out = NULL;
    a.curl = curl_easy_init();
    if (a.curl == NULL) {
        sst__error(err, SST_ENOMEM, "LLM client: curl_easy_init failed");
        goto done;
    }
    curl_easy_setopt(a.curl, CURLOPT_URL, q->url);
    curl_easy_setopt(a.curl, CURLOPT_POSTFIELDS, q->body);
    curl_easy_setopt(a.curl, CURLOPT_HTTPHEADER, q->headers);
    curl_easy_setopt(a.curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(a.curl, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms);
    if (c->stream) { /* a stream may last: fail on a stall instead */
        curl_easy_setopt(a.curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(a.curl, CURLOPT_LOW_SPEED_TIME, (c->timeout_ms + 999) / 1000);
    } else {
        curl_easy_setopt(a.curl, CURLOPT_TIMEOUT_MS, c->timeout_ms);
    }
    curl_easy_setopt(a.curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(a.curl, CURLOPT_WRITEDATA, &a);
    curl_easy_setopt(a.curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(a.curl, CURLOPT_HEADERDATA, &a);
    CURLcode rc = curl_easy_perform(a.curl);
    *retry_after_ms = a.retry_after_ms;
    out = outcome(&a, q, rc, transient, err);
done:
    if (a.curl != NULL) {
        curl_easy_cleanup(a.curl);
    }
    sst__sse_free(&a.sse);
    sst__completion_free(&a.completion);
    sst__buf_free(&a.body);
    return out;
}

static void global_init(void) {
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* Adds "Authorization: Bearer KEY" to @p q's headers; the key is one of its secrets. */
static void add_key(request *q, const char *key) {
    q->secrets[0] = key;
    sst__buf auth;
    sst__buf_init(&auth);
    sst__buf_printf(&auth, "Authorization: Bearer %s", key);
    sst__buf_putc(&auth, '\0');
    if (!auth.oom && auth.data != NULL) {
        q->headers = curl_slist_append(q->headers, auth.data);
        memset(auth.data, 0, auth.len); /* our copy of the key does not linger */
    }
    sst__buf_free(&auth);
}

/* Everything the attempts share: the URL (and what messages show of it), body and headers. */
static sst_code request_init(request *q, const sst__llm_config *c, const sst_value *messages,
                             const sst_value *tools, sst_error *err) {
    memset(q, 0, sizeof *q);
    q->cfg = c;
    size_t blen = strlen(c->base_url);
    blen = blen > 0 && c->base_url[blen - 1] == '/' ? blen - 1 : blen;
    if (blen + sizeof "/chat/completions" > sizeof q->url) {
        return sst__error(err, SST_EINVAL, "LLM client: the base URL is longer than %zu bytes",
                          sizeof q->url - sizeof "/chat/completions");
    }
    snprintf(q->url, sizeof q->url, "%.*s/chat/completions", (int)blen, c->base_url);
    sst__url_redact(q->url, q->shown, sizeof q->shown);
    size_t off, len;
    if (sst__url_userinfo(q->url, &off, &len) && len > 1) {
        /* The password of "user:pass@", or a lone "token@": masked if a server quotes it. */
        const char *info = q->url + off;
        const char *colon = memchr(info, ':', len - 1);
        size_t skip = colon != NULL && colon + 1 < info + len - 1 ? (size_t)(colon + 1 - info) : 0;
        q->password = sst__strndup(info + skip, len - 1 - skip);
        q->secrets[1] = q->password;
        if (q->password == NULL) {
            return sst__enomem(err);
        }
    }
    q->body = request_body(c, messages, tools, err);
    if (q->body == NULL) {
        return sst__code(err);
    }
    q->headers = curl_slist_append(NULL, "Content-Type: application/json");
    q->headers = curl_slist_append(q->headers, c->stream ? "Accept: text/event-stream"
                                                         : "Accept: application/json");
    const char *key = c->api_key_env != NULL ? getenv(c->api_key_env) : NULL;
    if (key != NULL && key[0] != '\0') {
        add_key(q, key);
    }
    return SST_OK;
}

/* Frees @p q; the copies of the key and the password are wiped first. */
static void request_free(request *q) {
    for (struct curl_slist *h = q->headers; h != NULL; h = h->next) {
        memset(h->data, 0, strlen(h->data));
    }
    curl_slist_free_all(q->headers);
    if (q->password != NULL) {
        memset(q->password, 0, strlen(q->password));
    }
    memset(q->url, 0, sizeof q->url);
    sst__free(q->password);
    sst__free(q->body);
}

sst_value *sst__llm_chat(const sst__llm_config *c, const sst_value *messages,
                         const sst_value *tools, sst__token_fn on_token, void *ud, sst_error *err) {
    /* Never NULL below: a callback's error is copied out, a dropped stream is told by its code. */
    SST__ERR_LOCAL(err);
    if (c->base_url == NULL || c->model == NULL || !sst_is_array(messages)) {
        sst__error(err, SST_EINVAL, "LLM client: base_url, model and a messages array are needed");
        return NULL;
    }
    static pthread_once_t once_init = PTHREAD_ONCE_INIT;
    pthread_once(&once_init, global_init);
    request q;
    if (request_init(&q, c, messages, tools, err) != SST_OK) {
        request_free(&q);
        return NULL;
    }
    sst_value *out = NULL;
    unsigned attempts = c->max_attempts > 0 ? c->max_attempts : 1;
    long backoff = c->retry_base_ms;
    for (unsigned i = 1; i <= attempts; i++) {
        long retry_after = -1;
        bool transient = false;
        sst_error_clear(err);
        out = once(&q, on_token, ud, &retry_after, &transient, err);
        if (out != NULL || !transient || i == attempts) {
            break;
        }
        long wait = retry_after >= 0 ? retry_after : backoff;
        wait = wait < c->max_retry_after_ms ? wait : c->max_retry_after_ms;
        sst__sleep_ms(wait > 0 ? (uint64_t)wait : 0);
        backoff *= 2;
    }
    if (out == NULL && attempts > 1 && err->code != SST_OK && sst_code_is_transient(err->code)) {
        sst__error_prefix(err, "after %u attempts", attempts);
    }
    request_free(&q);
    return out;
}
