/* SPDX-License-Identifier: MIT */
/* JSON POSTs with timeouts, retries and redacted errors over libcurl; see http.h. */
#include "http.h"

#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include <curl/curl.h>

#include "http_client.h"
#include "redact.h"

void sst__http_config_init(sst__http_config *c) {
    memset(c, 0, sizeof *c);
    c->what = "HTTP";
    c->connect_timeout_ms = 5000;
    c->timeout_ms = 60000;
    c->max_attempts = 3;
    c->retry_base_ms = 500;
    c->max_retry_after_ms = 30000;
    c->max_response = 8u << 20;
}

/* One attempt's state, shared with the curl callbacks. */
typedef struct attempt {
    CURL *curl;
    const sst__http_request *q;
    const sst__http_handler *h;
    sst__buf body;       /* a whole reply, or an error body */
    sst_error err;       /* the data callback's error */
    bool err_transient;  /* the data callback said its error may pass on another attempt */
    long retry_after_ms; /* from a Retry-After header, or -1 */
    size_t received;     /* bytes of body so far */
    bool too_large;
    bool cancelled; /* the config's cancelled() said stop */
} attempt;

/* curl's progress callback: a nonzero return aborts the transfer. */
static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow) {
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    attempt *a = ud;
    const sst__http_config *c = a->q->cfg;
    a->cancelled = a->cancelled || c->cancelled(c->cancel_ud);
    return a->cancelled ? 1 : 0;
}

static long status_of(CURL *curl) {
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    return status;
}

static size_t on_body(char *ptr, size_t size, size_t n, void *ud) {
    attempt *a = ud;
    size_t bytes = size * n;
    a->received += bytes;
    if (a->received > a->q->cfg->max_response) {
        a->too_large = true;
        return 0; /* aborts the transfer */
    }
    if (a->h->data != NULL && status_of(a->curl) == 200) {
        return a->h->data(a->h->ud, ptr, bytes, &a->err_transient, &a->err) == SST_OK ? bytes : 0;
    }
    sst__buf_append(&a->body, ptr, bytes);
    if (a->body.oom) {
        sst__enomem(&a->err); /* reported as such, not as curl's write error */
        return 0;
    }
    return bytes;
}

static size_t on_header(char *line, size_t size, size_t n, void *ud) {
    attempt *a = ud;
    int64_t ms = sst__retry_after_header(line, size * n);
    a->retry_after_ms = ms >= 0 ? (long)ms : a->retry_after_ms;
    return size * n;
}

/*
 * The first 200 bytes of @p b with credentials masked (sst__redact), on one
 * line, cut at a UTF-8 boundary; control characters become spaces.
 */
static void excerpt(const sst__buf *b, const sst__http_request *q, char out[208]) {
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

/*
 * The outcome of a performed attempt: SST_OK, or an error that names no
 * secret, with *transient telling whether another attempt may succeed.
 */
static sst_code outcome(attempt *a, CURLcode rc, bool *transient, sst_error *err) {
    const sst__http_request *q = a->q;
    const sst__http_config *c = q->cfg;
    long status = status_of(a->curl);
    if (a->too_large) {
        return sst__error(err, SST_ERANGE, "%s reply from %s is larger than %zu bytes", c->what,
                          q->shown, c->max_response);
    }
    if (a->err.code != SST_OK) {
        *err = a->err; /* the data callback's error (a malformed chunk, a token handler's) */
        *transient = a->err_transient;
        return err->code;
    }
    if (rc == CURLE_OPERATION_TIMEDOUT) {
        *transient = true;
        return sst__error(err, SST_ETIMEOUT, "%s request to %s timed out (%s %ld ms)", c->what,
                          q->shown, c->stall_timeout ? "no data for" : "limit", c->timeout_ms);
    }
    if (rc != CURLE_OK) {
        *transient = true; /* curl's own text: it names neither the URL nor a header */
        return sst__error(err, SST_EUNAVAILABLE, "%s request to %s failed: %s", c->what, q->shown,
                          curl_easy_strerror(rc));
    }
    if (status != 200) {
        char ex[208];
        sst__buf said;
        sst__buf_init(&said);
        if (a->h->error_text != NULL) {
            a->h->error_text(a->h->ud, a->body.data != NULL ? a->body.data : "", a->body.len,
                             &said);
        }
        excerpt(said.len > 0 && !said.oom ? &said : &a->body, q, ex);
        sst__buf_free(&said);
        *transient = status == 429 || status >= 500;
        return sst__error(err, *transient ? SST_EUNAVAILABLE : SST_EINVAL,
                          "%s endpoint %s answered HTTP %ld: %s", c->what, q->shown, status, ex);
    }
    return a->h->done(a->h->ud, a->body.data != NULL ? a->body.data : "", a->body.len, transient,
                      err);
}

/* One attempt. Returns SST_OK, or an error with *transient telling whether to retry. */
static sst_code once(sst__http_request *q, const char *body, const sst__http_handler *h,
                     long *retry_after_ms, bool *transient, sst_error *err) {
    const sst__http_config *c = q->cfg;
    *transient = false;
    *retry_after_ms = -1;
    if (q->curl == NULL) {
        q->curl = curl_easy_init();
        if (q->curl == NULL) {
            return sst__error(err, SST_ENOMEM, "%s client: curl_easy_init failed", c->what);
        }
    } else {
        curl_easy_reset(q->curl); /* keeps the open connection for this request */
    }
    attempt a;
    memset(&a, 0, sizeof a);
    a.curl = q->curl;
    a.q = q;
    a.h = h;
    a.retry_after_ms = -1;
    sst__buf_init(&a.body);
    if (h->begin != NULL) {
        h->begin(h->ud);
    }
    curl_easy_setopt(a.curl, CURLOPT_URL, q->url);
    curl_easy_setopt(a.curl, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(a.curl, CURLOPT_HTTPHEADER, q->headers);
    curl_easy_setopt(a.curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(a.curl, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms);
    if (c->stall_timeout) { /* a stream may last: fail on a stall instead */
        curl_easy_setopt(a.curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(a.curl, CURLOPT_LOW_SPEED_TIME, (c->timeout_ms + 999) / 1000);
    } else {
        curl_easy_setopt(a.curl, CURLOPT_TIMEOUT_MS, c->timeout_ms);
    }
    curl_easy_setopt(a.curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(a.curl, CURLOPT_WRITEDATA, &a);
    curl_easy_setopt(a.curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(a.curl, CURLOPT_HEADERDATA, &a);
    if (c->cancelled != NULL) {
        curl_easy_setopt(a.curl, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(a.curl, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(a.curl, CURLOPT_XFERINFODATA, &a);
    }
    CURLcode rc = curl_easy_perform(a.curl);
    *retry_after_ms = a.retry_after_ms;
    sst_code code = a.cancelled ? sst__error(err, SST_ETIMEOUT,
                                             "%s client: request to %s stopped: the node ran out "
                                             "of time",
                                             c->what, q->shown)
                                : outcome(&a, rc, transient, err);
    *transient = *transient && !a.cancelled;
    if (h->end != NULL) {
        h->end(h->ud);
    }
    sst__buf_free(&a.body);
    return code;
}

/*
 * Adds "Authorization: Bearer KEY" (or "HEADER: KEY") to @p q's headers; the
 * key is one of its secrets. SST_ENOMEM leaves the headers as they were: a
 * request must not go out without the key it was meant to carry.
 */
static sst_code add_key(sst__http_request *q, const char *key, const char *header, sst_error *err) {
    q->secrets[0] = key;
    sst__buf auth;
    sst__buf_init(&auth);
    if (header != NULL) {
        sst__buf_printf(&auth, "%s: %s", header, key);
    } else {
        sst__buf_printf(&auth, "Authorization: Bearer %s", key);
    }
    sst__buf_putc(&auth, '\0');
    struct curl_slist *h = NULL;
    if (!auth.oom && auth.data != NULL) {
        h = curl_slist_append(q->headers, auth.data);
        memset(auth.data, 0, auth.len); /* our copy of the key does not linger */
    }
    sst__buf_free(&auth);
    if (h == NULL) {
        return sst__enomem(err);
    }
    q->headers = h;
    return SST_OK;
}

sst_code sst__http_request_init(sst__http_request *q, const sst__http_config *c,
                                const char *base_url, const char *path, const char *accept,
                                const char *api_key_env, sst_error *err) {
    sst__http_auth auth = {.key_env = api_key_env};
    return sst__http_request_init_auth(q, c, base_url, path, accept, &auth, err);
}

sst_code sst__http_request_init_auth(sst__http_request *q, const sst__http_config *c,
                                     const char *base_url, const char *path, const char *accept,
                                     const sst__http_auth *auth, sst_error *err) {
    sst__http_global_init();
    memset(q, 0, sizeof *q);
    q->cfg = c;
    size_t blen = strlen(base_url);
    size_t plen = strlen(path);
    blen = blen > 0 && base_url[blen - 1] == '/' ? blen - 1 : blen;
    if (plen >= sizeof q->url || blen + plen >= sizeof q->url) {
        return sst__error(err, SST_EINVAL, "%s client: the base URL is longer than %zu bytes",
                          c->what, sizeof q->url - 1 - (plen < sizeof q->url ? plen : 0));
    }
    snprintf(q->url, sizeof q->url, "%.*s%s", (int)blen, base_url, path);
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
    q->headers = curl_slist_append(NULL, "Content-Type: application/json");
    if (q->headers == NULL) {
        return sst__enomem(err);
    }
    char accept_line[128];
    snprintf(accept_line, sizeof accept_line, "Accept: %s", accept);
    struct curl_slist *h = curl_slist_append(q->headers, accept_line);
    if (h == NULL) {
        return sst__enomem(err);
    }
    q->headers = h;
    for (size_t i = 0; auth != NULL && auth->headers != NULL && auth->headers[i] != NULL; i++) {
        h = curl_slist_append(q->headers, auth->headers[i]);
        if (h == NULL) {
            return sst__enomem(err);
        }
        q->headers = h;
    }
    const char *key = auth != NULL && auth->key_env != NULL ? getenv(auth->key_env) : NULL;
    return key != NULL && key[0] != '\0' ? add_key(q, key, auth->key_header, err) : SST_OK;
}

void sst__http_request_free(sst__http_request *q) {
    if (q->curl != NULL) {
        curl_easy_cleanup(q->curl);
        q->curl = NULL;
    }
    for (struct curl_slist *h = q->headers; h != NULL; h = h->next) {
        memset(h->data, 0, strlen(h->data));
    }
    curl_slist_free_all(q->headers);
    q->headers = NULL;
    if (q->password != NULL) {
        memset(q->password, 0, strlen(q->password));
    }
    memset(q->url, 0, sizeof q->url);
    sst__free(q->password);
    q->password = NULL;
}

static bool cancelled(void *ud) {
    const sst__http_config *c = ud;
    return c->cancelled != NULL && c->cancelled(c->cancel_ud);
}

sst_code sst__http_post(sst__http_request *q, const char *body, const sst__http_handler *h,
                        sst_error *err) {
    const sst__http_config *c = q->cfg;
    unsigned attempts = c->max_attempts > 0 ? c->max_attempts : 1;
    uint64_t cap = c->max_retry_after_ms > 0 ? (uint64_t)c->max_retry_after_ms : 0;
    /* retry_base_ms doubled each retry, never more than the cap; no jitter. */
    sst_retry_policy backoff = {.max_attempts = attempts,
                                .initial_interval_s = (double)c->retry_base_ms / 1000.0,
                                .backoff_factor = 2.0,
                                .max_interval_s = (double)cap / 1000.0};
    sst_code code = SST_OK;
    bool transient = false;
    for (unsigned i = 1; i <= attempts; i++) {
        long retry_after = -1;
        sst_error_clear(err);
        code = once(q, body, h, &retry_after, &transient, err);
        if (code == SST_OK || !transient || i == attempts || cancelled((void *)c) ||
            !sst__http_wait(c->what, sst__http_retry_wait_ms(&backoff, i, retry_after, cap),
                            cancelled, (void *)c)) {
            break;
        }
    }
    /* Only a failure that every attempt met: the last one did, and it was not permanent. */
    if (code != SST_OK && transient && attempts > 1) {
        sst__error_prefix(err, "after %u attempts", attempts);
    }
    return code;
}
