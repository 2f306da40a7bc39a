/* SPDX-License-Identifier: MIT */
/*
 * The OTLP/HTTP JSON trace exporter (otlp.h): its options and the
 * OpenTelemetry environment variables, a bounded queue that sst__otlp_export
 * fills without ever waiting on the network, and one thread that batches
 * the spans and POSTs them with libcurl's multi interface, so that a
 * shutdown can cut a request short at once (curl_multi_wakeup) instead of
 * waiting out its timeout.
 *
 * Lock order: one mutex per exporter (mu); nothing else is locked under it,
 * and no request is made while it is held.
 */
#include "otlp.h"

#include <ctype.h>
#include <signal.h>
#include <stdatomic.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <pthread.h>

#include "common/hex.h"
#include "http_client.h"
#include "redact.h"
#include "superstep/json.h"
#include "superstep/version.h"

#define MAX_QUEUE_LIMIT ((size_t)1 << 24)
#define MAX_REPLY       ((size_t)64 << 10) /* bytes of a reply kept (for errors, partial success) */
#define ENV_INT_MAX     2147483647u        /* 2^31 - 1, the specification's integer range */

void sst__otlp_opts_init(sst__otlp_opts *o) {
    memset(o, 0, sizeof *o);
    o->max_queue = 2048;
    o->max_batch = 512;
    o->schedule_delay_ms = 5000;
    o->timeout_ms = 10000;
    o->export_timeout_ms = 30000;
    o->shutdown_ms = 10000;
    o->max_attempts = 5;
    o->retry_base_ms = 1000;
    o->retry_max_ms = 5000;
}

void sst__otlp_opts_free(sst__otlp_opts *o) {
    sst__free(o->env_endpoint_);
    sst__free(o->env_service_);
    sst__free(o->env_headers_);
    sst_value_unref(o->env_resource_);
    sst__otlp_opts_init(o);
}

/* ---- "k=v,k2=v2" lists ------------------------------------------------- */

static bool is_ows(char c) {
    return c == ' ' || c == '\t';
}

/* An HTTP token character (RFC 9110), which keys of both lists must be. */
static bool is_tchar(unsigned char c) {
    return isalnum(c) || (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/*
 * One "key=value" entry (@p p, @p len bytes, entry number @p idx) into
 * object @p o. Values are never quoted in errors: they may be credentials.
 * @return the updated object (takes @p o); NULL with SST_EINVAL or SST_ENOMEM.
 */
static sst_value *kv_entry(sst_value *o, const char *p, size_t len, size_t idx, const char *what,
                           sst_error *err) {
    const char *eq = memchr(p, '=', len);
    if (eq == NULL) {
        sst_value_unref(o);
        sst__error(err, SST_EINVAL, "%s: entry %zu has no '='", what, idx);
        return NULL;
    }
    size_t klen = (size_t)(eq - p);
    while (klen > 0 && is_ows(p[klen - 1])) {
        klen--;
    }
    if (klen == 0) {
        sst_value_unref(o);
        sst__error(err, SST_EINVAL, "%s: entry %zu has an empty key", what, idx);
        return NULL;
    }
    for (size_t i = 0; i < klen; i++) {
        if (!is_tchar((unsigned char)p[i])) {
            sst_value_unref(o);
            sst__error(err, SST_EINVAL,
                       "%s: the key of entry %zu has a character not allowed "
                       "in a key at offset %zu",
                       what, idx, i);
            return NULL;
        }
    }
    const char *v = eq + 1, *end = p + len;
    while (v < end && is_ows(*v)) {
        v++;
    }
    char *dec = sst__malloc((size_t)(end - v) + 1);
    if (dec == NULL) {
        sst_value_unref(o);
        sst__enomem(err);
        return NULL;
    }
    size_t n = 0;
    for (const char *q = v; q < end; q++) {
        unsigned char c = (unsigned char)*q;
        if (c == '%') {
            int hi = -1;
            if (end - q >= 3) {
                hi = sst__hex_digit(q[1]);
                int lo = sst__hex_digit(q[2]);
                hi = hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
            }
            if (hi < 0) {
                sst__free(dec);
                sst_value_unref(o);
                sst__error(err, SST_EINVAL, "%s: the value of '%.*s' has a bad %%-escape", what,
                           (int)klen, p);
                return NULL;
            }
            c = (unsigned char)hi;
            q += 2;
        }
        if (c < 0x20 || c == 0x7f) {
            sst__free(dec);
            sst_value_unref(o);
            sst__error(err, SST_EINVAL, "%s: the value of '%.*s' has a control character", what,
                       (int)klen, p);
            return NULL;
        }
        dec[n++] = (char)c;
    }
    if (!sst_utf8_valid(dec, n)) {
        sst__free(dec);
        sst_value_unref(o);
        sst__error(err, SST_EINVAL, "%s: the value of '%.*s' is not UTF-8", what, (int)klen, p);
        return NULL;
    }
    sst_value *sv = sst_string_newn(dec, n, err);
    sst__free(dec);
    if (sv == NULL) {
        sst_value_unref(o);
        return NULL;
    }
    return sst_object_setn_take(o, p, klen, sv, err);
}

sst_value *sst__otlp_parse_kv(const char *text, const char *what, sst_error *err) {
    sst_value *o = sst_object_empty();
    size_t idx = 0;
    for (const char *p = text != NULL ? text : ""; o != NULL && *p != '\0';) {
        const char *comma = strchr(p, ',');
        const char *end = comma != NULL ? comma : p + strlen(p);
        idx++;
        const char *s = p, *e = end;
        while (s < e && is_ows(*s)) {
            s++;
        }
        while (e > s && is_ows(e[-1])) {
            e--;
        }
        if (e > s) {
            o = kv_entry(o, s, (size_t)(e - s), idx, what, err);
        }
        p = comma != NULL ? comma + 1 : end;
    }
    return o;
}

/* ---- the environment --------------------------------------------------- */

/* @p name's value; NULL when unset or empty (the specification: the same). */
static const char *env(const char *name) {
    const char *v = getenv(name);
    return v != NULL && v[0] != '\0' ? v : NULL;
}

/* The first of two variables that is set, and its name in *which. */
static const char *env2(const char *a, const char *b, const char **which) {
    const char *v = env(a);
    *which = v != NULL ? a : b;
    return v != NULL ? v : env(b);
}

/*
 * Adds a problem to @p err: the first one sets it (SST_EINVAL), later ones
 * are appended after "; " (cut when the message is full).
 */
SST_PRINTF(3, 4)
static void warn(sst_error *err, unsigned *nwarn, const char *fmt, ...) {
    char msg[SST_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if ((*nwarn)++ == 0 || err == NULL) {
        sst__error(err, SST_EINVAL, "%s", msg);
    } else {
        char prev[SST_ERROR_MSG_MAX];
        memcpy(prev, err->msg, sizeof prev);
        sst__error(err, SST_EINVAL, "%s; %s", prev, msg);
    }
}

/* A non-negative decimal integer of at most 2^31 - 1 (the specification's range). */
static bool parse_env_int(const char *s, uint64_t *out) {
    uint64_t v = 0;
    if (*s == '\0') {
        return false;
    }
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9') {
            return false;
        }
        v = v * 10 + (uint64_t)(*s - '0');
        if (v > ENV_INT_MAX) {
            return false;
        }
    }
    *out = v;
    return true;
}

/*
 * Reads integer variable @p name (@p value, may be NULL) into *out when it
 * is set and valid (at least @p min): true then. A bad value is reported and
 * leaves *out as it was (the specification: treated as not set).
 */
static bool env_u32(const char *name, const char *value, uint64_t min, uint32_t *out,
                    sst_error *err, unsigned *nwarn) {
    uint64_t v;
    if (value == NULL) {
        return false;
    }
    if (!parse_env_int(value, &v) || v < min) {
        warn(err, nwarn, "%s: '%.32s' is not an integer %u..2147483647", name, value,
             (unsigned)min);
        return false;
    }
    *out = (uint32_t)v;
    return true;
}

static void env_size(const char *name, size_t *out, sst_error *err, unsigned *nwarn) {
    const char *value = env(name);
    uint64_t v;
    if (value == NULL) {
        return;
    }
    if (!parse_env_int(value, &v) || v == 0 || v > MAX_QUEUE_LIMIT) {
        warn(err, nwarn, "%s: '%.32s' is not an integer 1..%zu", name, value, MAX_QUEUE_LIMIT);
        return;
    }
    *out = (size_t)v;
}

static bool true_text(const char *v) {
    return v != NULL && strcasecmp(v, "true") == 0;
}

sst_code sst__otlp_opts_from_env(sst__otlp_opts *o, sst_error *err) {
    sst__otlp_opts_init(o);
    unsigned nwarn = 0;
    const char *which;
    if (true_text(env("OTEL_SDK_DISABLED"))) {
        return SST_OK;
    }
    const char *exporter = env("OTEL_TRACES_EXPORTER");
    if (exporter != NULL && strcmp(exporter, "none") == 0) {
        return SST_OK;
    }
    if (exporter != NULL && strcmp(exporter, "otlp") != 0) {
        warn(err, &nwarn, "OTEL_TRACES_EXPORTER: '%.32s' unsupported (otlp only)", exporter);
    }
    const char *traces = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
    const char *base = env("OTEL_EXPORTER_OTLP_ENDPOINT");
    if (traces != NULL) {
        o->env_endpoint_ = sst__strndup(traces, strlen(traces));
    } else if (base != NULL) {
        /* "/v1/traces" appended, without a double slash. */
        size_t n = strlen(base);
        while (n > 0 && base[n - 1] == '/') {
            n--;
        }
        sst__buf b;
        sst__buf_init(&b);
        sst__buf_printf(&b, "%.*s/v1/traces", (int)n, base);
        o->env_endpoint_ = b.oom ? NULL : sst__buf_detach(&b, NULL);
        sst__buf_free(&b);
    }
    if ((traces != NULL || base != NULL) && o->env_endpoint_ == NULL) {
        goto oom;
    }
    o->endpoint = o->env_endpoint_;

    const char *proto =
        env2("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL", &which);
    if (proto != NULL && strcmp(proto, "http/json") != 0) {
        warn(err, &nwarn, "%s: '%.32s' unsupported (http/json only)", which, proto);
    }

    const char *attrs = env("OTEL_RESOURCE_ATTRIBUTES");
    if (attrs != NULL) {
        sst_error perr = {0};
        o->env_resource_ = sst__otlp_parse_kv(attrs, "OTEL_RESOURCE_ATTRIBUTES", &perr);
        if (o->env_resource_ == NULL && perr.code == SST_ENOMEM) {
            goto oom;
        }
        if (o->env_resource_ == NULL) {
            /* The specification: on any error the whole variable is discarded. */
            warn(err, &nwarn, "%s", perr.msg);
        }
    }
    o->resource = o->env_resource_;
    const char *service = env("OTEL_SERVICE_NAME");
    const sst_value *from_attrs = sst_object_get(o->env_resource_, "service.name");
    if (service == NULL && from_attrs != NULL) {
        service = sst_string_cstr(from_attrs);
    }
    if (service != NULL) {
        o->env_service_ = sst__strndup(service, strlen(service));
        if (o->env_service_ == NULL) {
            goto oom;
        }
    }
    o->service_name = o->env_service_ != NULL ? o->env_service_ : "superstep";

    /* The traces variable first; one that cannot be used counts as not set. */
    static const char *const header_vars[] = {"OTEL_EXPORTER_OTLP_TRACES_HEADERS",
                                              "OTEL_EXPORTER_OTLP_HEADERS"};
    for (size_t i = 0; i < SST_ARRAY_LEN(header_vars) && o->env_headers_ == NULL; i++) {
        const char *headers = env(header_vars[i]);
        if (headers == NULL) {
            continue;
        }
        sst_error perr = {0};
        sst_value *parsed = sst__otlp_parse_kv(headers, header_vars[i], &perr);
        if (parsed == NULL && perr.code == SST_ENOMEM) {
            goto oom;
        }
        if (parsed == NULL) {
            warn(err, &nwarn, "%s", perr.msg);
            continue;
        }
        sst_value_unref(parsed);
        o->env_headers_ = sst__strndup(headers, strlen(headers));
        if (o->env_headers_ == NULL) {
            goto oom;
        }
    }
    o->headers = o->env_headers_;

    if (!env_u32("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", env("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"), 0,
                 &o->timeout_ms, err, &nwarn)) {
        env_u32("OTEL_EXPORTER_OTLP_TIMEOUT", env("OTEL_EXPORTER_OTLP_TIMEOUT"), 0, &o->timeout_ms,
                err, &nwarn);
    }
    env_u32("OTEL_BSP_SCHEDULE_DELAY", env("OTEL_BSP_SCHEDULE_DELAY"), 0, &o->schedule_delay_ms,
            err, &nwarn);
    env_u32("OTEL_BSP_EXPORT_TIMEOUT", env("OTEL_BSP_EXPORT_TIMEOUT"), 0, &o->export_timeout_ms,
            err, &nwarn);
    env_size("OTEL_BSP_MAX_QUEUE_SIZE", &o->max_queue, err, &nwarn);
    env_size("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", &o->max_batch, err, &nwarn);
    if (o->max_batch > o->max_queue) {
        warn(err, &nwarn, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE: %zu > queue size %zu", o->max_batch,
             o->max_queue);
        o->max_batch = o->max_queue;
    }
    return nwarn > 0 ? SST_EINVAL : SST_OK;
oom:
    sst__otlp_opts_free(o);
    return sst__enomem(err);
}

/* ---- the exporter ------------------------------------------------------ */

struct sst__otlp_exporter {
    sst__otlp_opts o;         /* a copy; its strings point at the owned copies below */
    char *endpoint;           /* owned, sst__malloc */
    char *shown;              /* the endpoint without user info, for messages; owned */
    char *service_name;       /* owned, sst__malloc */
    sst_value *resource;      /* owned reference, or NULL */
    sst_value *header_values; /* owned: the parsed headers (their values are secrets) */
    const char **secrets;     /* header values, masked in quoted replies; owned array */
    size_t n_secrets;
    struct curl_slist *headers; /* owned */
    char *prefix;               /* the request up to its spans, encoded once; owned */
    size_t prefix_len;

    pthread_mutex_t mu;
    pthread_cond_t work;     /* the thread waits here: spans queued, a flush, the stop */
    pthread_cond_t progress; /* flushes and the shutdown wait here: a batch finished */
    bool mu_ok, work_ok, progress_ok, thread_ok;

    /* Protected by mu. */
    sst__span **ring; /* max_queue slots; owned (and the spans in it) */
    size_t head, count;
    uint64_t accepted_seq; /* spans ever queued */
    uint64_t done_seq;     /* of those, the ones sent or given up (in queue order) */
    uint64_t flush_seq;    /* a flush waits for done_seq to reach this */
    uint64_t fail_upto;    /* done_seq after the last batch that failed */
    sst_code fail_code;    /* that batch's error */
    bool closing;          /* shutdown began: exports are dropped */
    bool shut;             /* shutdown was called */
    sst__otlp_stats st;

    atomic_bool stop; /* the thread gives up what it does and ends */
    /* The queue was full at the last export (or the exporter is closing): hooks may skip
     * building spans that would be dropped (sst__otlp_saturated). Relaxed: a hint. */
    atomic_bool saturated;
    atomic_uint_fast64_t dropped_unbuilt; /* spans never built because of that */
    pthread_t thread;

    /* The thread's own. */
    CURLM *multi; /* also woken by the shutdown (curl_multi_wakeup is thread-safe) */
    CURL *easy;   /* keeps its connection from one request to the next */
    sst__span **batch;
    sst__buf reply;      /* the first MAX_REPLY bytes of a reply */
    long retry_after_ms; /* the reply's Retry-After, or -1 */
    char curl_err[CURL_ERROR_SIZE];
};

static uint64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Waits on @p c (mu held) until the monotonic @p deadline_ms, a signal, or a spurious wake. */
static void wait_until(pthread_cond_t *c, pthread_mutex_t *mu, uint64_t deadline_ms) {
    struct timespec ts = {.tv_sec = (time_t)(deadline_ms / 1000),
                          .tv_nsec = (long)(deadline_ms % 1000) * 1000000L};
    pthread_cond_timedwait(c, mu, &ts);
}

static size_t on_reply(char *ptr, size_t size, size_t n, void *ud) {
    sst__otlp_exporter *e = ud;
    size_t bytes = size * n;
    if (e->reply.len < MAX_REPLY) {
        size_t keep = MAX_REPLY - e->reply.len < bytes ? MAX_REPLY - e->reply.len : bytes;
        sst__buf_append(&e->reply, ptr, keep);
    }
    return bytes; /* the rest is read and not kept */
}

static size_t on_header(char *line, size_t size, size_t n, void *ud) {
    sst__otlp_exporter *e = ud;
    int64_t ms = sst__retry_after_header(line, size * n);
    e->retry_after_ms = ms >= 0 ? (long)ms : e->retry_after_ms;
    return size * n;
}

/* Frees what @p e holds; its thread must not be running. */
static void destroy(sst__otlp_exporter *e) {
    if (e->easy != NULL) {
        curl_easy_cleanup(e->easy);
    }
    if (e->multi != NULL) {
        curl_multi_cleanup(e->multi);
    }
    for (struct curl_slist *h = e->headers; h != NULL; h = h->next) {
        memset(h->data, 0, strlen(h->data)); /* they may hold credentials */
    }
    curl_slist_free_all(e->headers);
    for (size_t i = 0; e->ring != NULL && i < e->count; i++) {
        sst__span_free(e->ring[(e->head + i) % e->o.max_queue]);
    }
    sst__free(e->ring);
    sst__free(e->batch);
    sst__buf_free(&e->reply);
    sst__free(e->prefix);
    sst__free((void *)e->secrets);
    sst_value_unref(e->header_values);
    sst_value_unref(e->resource);
    sst__free(e->service_name);
    sst__free(e->shown);
    sst__free(e->endpoint);
    if (e->progress_ok) {
        pthread_cond_destroy(&e->progress);
    }
    if (e->work_ok) {
        pthread_cond_destroy(&e->work);
    }
    if (e->mu_ok) {
        pthread_mutex_destroy(&e->mu);
    }
    sst__free(e);
}

static bool http_url(const char *url) {
    return url != NULL &&
           (strncasecmp(url, "http://", 7) == 0 || strncasecmp(url, "https://", 8) == 0);
}

/* The options as sst__otlp_exporter_new accepts them; SST_EINVAL names the first bad one. */
static sst_code check_opts(const sst__otlp_opts *o, sst_error *err) {
    if (o == NULL || o->endpoint == NULL) {
        return sst__error(err, SST_EINVAL, "OTLP exporter: no endpoint");
    }
    if (!http_url(o->endpoint)) {
        char shown[256];
        sst__url_redact(o->endpoint, shown, sizeof shown);
        return sst__error(err, SST_EINVAL,
                          "OTLP exporter: endpoint '%s' is not an http:// or https:// URL", shown);
    }
    if (o->max_queue == 0 || o->max_queue > MAX_QUEUE_LIMIT) {
        return sst__error(err, SST_EINVAL, "OTLP exporter: max_queue %zu is not 1 to %zu",
                          o->max_queue, MAX_QUEUE_LIMIT);
    }
    if (o->max_batch == 0 || o->max_batch > o->max_queue) {
        return sst__error(err, SST_EINVAL,
                          "OTLP exporter: max_batch %zu is not 1 to max_queue (%zu)", o->max_batch,
                          o->max_queue);
    }
    if (o->resource != NULL && !sst_is_object(o->resource)) {
        return sst__error(err, SST_EINVAL, "OTLP exporter: resource attributes must be an object");
    }
    return SST_OK;
}

/* The header lines: Content-Type, no "Expect: 100-continue" wait, then the user's. */
static sst_code make_headers(sst__otlp_exporter *e, sst_error *err) {
    static const char *const fixed[] = {"Content-Type: application/json", "Expect:"};
    for (size_t i = 0; i < SST_ARRAY_LEN(fixed); i++) {
        struct curl_slist *h = curl_slist_append(e->headers, fixed[i]);
        if (h == NULL) {
            return sst__enomem(err);
        }
        e->headers = h;
    }
    e->header_values = sst__otlp_parse_kv(e->o.headers, "OTLP exporter headers", err);
    if (e->header_values == NULL) {
        return sst__code(err);
    }
    size_t n = sst_object_len(e->header_values);
    e->secrets = sst__calloc(n + 1, sizeof *e->secrets);
    if (e->secrets == NULL) {
        return sst__enomem(err);
    }
    for (size_t i = 0; i < n; i++) {
        const char *k = sst_string_cstr(sst_object_key_at(e->header_values, i));
        const char *v = sst_string_cstr(sst_object_value_at(e->header_values, i));
        if (strcasecmp(k, "content-type") == 0) {
            continue; /* OTLP/JSON is application/json, whatever the list says */
        }
        e->secrets[e->n_secrets++] = v;
        sst__buf line;
        sst__buf_init(&line);
        /* "Name;" is how curl sends a header whose value is empty. */
        sst__buf_printf(&line, v[0] != '\0' ? "%s: %s" : "%s;", k, v);
        sst__buf_putc(&line, '\0'); /* sst__buf_printf does not terminate */
        struct curl_slist *h = line.oom ? NULL : curl_slist_append(e->headers, line.data);
        if (line.data != NULL) {
            memset(line.data, 0, line.len);
        }
        sst__buf_free(&line);
        if (h == NULL) {
            return sst__enomem(err);
        }
        e->headers = h;
    }
    return SST_OK;
}

static sst_code make_curl(sst__otlp_exporter *e, sst_error *err) {
    sst__http_global_init();
    e->multi = curl_multi_init();
    e->easy = curl_easy_init();
    if (e->multi == NULL || e->easy == NULL) {
        return sst__error(err, SST_EIO, "OTLP exporter: curl could not start");
    }
    CURL *c = e->easy;
    static const char agent[] = "superstep-otlp/";
    char ua[64];
    snprintf(ua, sizeof ua, "%s%s", agent, sst_version());
    if (curl_easy_setopt(c, CURLOPT_URL, e->endpoint) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_USERAGENT, ua) != CURLE_OK) {
        return sst__error(err, SST_EINVAL, "OTLP exporter: curl refused the endpoint %s", e->shown);
    }
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, e->headers);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, e->curl_err);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_reply);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, e);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, e);
    return SST_OK;
}

static void *worker_main(void *arg);

sst__otlp_exporter *sst__otlp_exporter_new(const sst__otlp_opts *o, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (check_opts(o, err) != SST_OK) {
        return NULL;
    }
    sst__otlp_exporter *e = sst__calloc(1, sizeof *e);
    if (e == NULL) {
        sst__enomem(err);
        return NULL;
    }
    e->o = *o;
    e->o.env_endpoint_ = e->o.env_service_ = e->o.env_headers_ = NULL;
    e->o.env_resource_ = NULL;
    const char *service = o->service_name != NULL ? o->service_name : "superstep";
    e->endpoint = sst__strndup(o->endpoint, strlen(o->endpoint));
    e->shown = sst__malloc(strlen(o->endpoint) + 1);
    e->service_name = sst__strndup(service, strlen(service));
    e->resource = o->resource != NULL ? sst_value_ref(o->resource) : NULL;
    e->ring = sst__calloc(o->max_queue, sizeof *e->ring);
    e->batch = sst__calloc(o->max_batch, sizeof *e->batch);
    sst__buf_init(&e->reply);
    atomic_init(&e->stop, false);
    atomic_init(&e->saturated, false);
    atomic_init(&e->dropped_unbuilt, 0);
    if (e->endpoint == NULL || e->shown == NULL || e->service_name == NULL || e->ring == NULL ||
        e->batch == NULL) {
        sst__enomem(err);
        destroy(e);
        return NULL;
    }
    sst__url_redact(e->endpoint, e->shown, strlen(o->endpoint) + 1);
    e->o.endpoint = e->endpoint;
    e->o.service_name = e->service_name;
    e->o.resource = e->resource;

    sst__buf b;
    sst__buf_init(&b);
    sst__otlp_encode_request_start(&b, e->service_name, e->resource);
    e->prefix = b.oom ? NULL : sst__buf_detach(&b, &e->prefix_len);
    sst__buf_free(&b);
    if (e->prefix == NULL) {
        sst__enomem(err);
        destroy(e);
        return NULL;
    }
    if (make_headers(e, err) != SST_OK || make_curl(e, err) != SST_OK) {
        destroy(e);
        return NULL;
    }
    e->o.headers = NULL; /* borrowed from the caller; parsed into header_values */

    pthread_condattr_t ca;
    e->mu_ok = pthread_mutex_init(&e->mu, NULL) == 0;
    bool ca_ok =
        pthread_condattr_init(&ca) == 0 && pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0;
    e->work_ok = ca_ok && pthread_cond_init(&e->work, &ca) == 0;
    e->progress_ok = ca_ok && pthread_cond_init(&e->progress, &ca) == 0;
    if (ca_ok) {
        pthread_condattr_destroy(&ca);
    }
    /*
     * The thread blocks every signal (it inherits the mask it is created with), so that a
     * program's signals (SIGINT, SIGTERM, a SIGPIPE of its own) go to its own threads,
     * never to this one.
     */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    e->thread_ok = e->mu_ok && e->work_ok && e->progress_ok &&
                   pthread_create(&e->thread, NULL, worker_main, e) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!e->thread_ok) {
        sst__error(err, SST_EIO, "OTLP exporter: cannot start its thread");
        destroy(e);
        return NULL;
    }
    return e;
}

void sst__otlp_export(sst__otlp_exporter *e, sst__span *s) {
    if (s == NULL) {
        return;
    }
    if (e == NULL) {
        sst__span_free(s);
        return;
    }
    sst__span_end(s);
    s->queued_ms = mono_ms();
    pthread_mutex_lock(&e->mu);
    if (e->closing || e->count == e->o.max_queue) {
        if (e->closing) {
            e->st.dropped_shutdown++;
        } else {
            e->st.dropped_queue_full++;
        }
        e->st.dropped++;
        atomic_store_explicit(&e->saturated, true, memory_order_relaxed);
        pthread_mutex_unlock(&e->mu);
        sst__span_free(s);
        return;
    }
    e->ring[(e->head + e->count) % e->o.max_queue] = s;
    e->count++;
    e->accepted_seq++;
    e->st.queued_total++;
    e->st.max_queued = e->count > e->st.max_queued ? e->count : e->st.max_queued;
    /* The thread waits without a deadline while the queue is empty, and for the deadline of
     * the oldest span otherwise: it needs to hear of the first span and of a full batch. */
    bool wake = e->count == 1 || e->count == e->o.max_batch;
    pthread_mutex_unlock(&e->mu);
    if (wake) {
        pthread_cond_signal(&e->work);
    }
}

sst_code sst__otlp_flush(sst__otlp_exporter *e, uint32_t timeout_ms, sst_error *err) {
    if (e == NULL) {
        return SST_OK;
    }
    uint64_t deadline = mono_ms() + timeout_ms;
    pthread_mutex_lock(&e->mu);
    uint64_t target = e->accepted_seq, from = e->done_seq;
    e->flush_seq = target > e->flush_seq ? target : e->flush_seq;
    pthread_cond_signal(&e->work);
    while (e->done_seq < target && !e->shut && mono_ms() < deadline) {
        wait_until(&e->progress, &e->mu, deadline);
    }
    sst_code rc = SST_OK;
    if (e->done_seq < target) {
        rc = sst__error(err, SST_ETIMEOUT, "OTLP export to %s: %llu spans still unsent after %u ms",
                        e->shown, (unsigned long long)(target - e->done_seq), (unsigned)timeout_ms);
    } else if (e->fail_upto > from) {
        rc = sst__error(err, e->fail_code, "%s", e->st.last_error);
    }
    pthread_mutex_unlock(&e->mu);
    return rc;
}

/* ---- the thread -------------------------------------------------------- */

/*
 * The outcome of a finished transfer: SST_OK (a 2xx; *rejected from a
 * partial success), or an error with *transient telling whether to retry.
 */
static sst_code outcome(sst__otlp_exporter *e, CURLcode rc, size_t n, bool *transient,
                        uint64_t *rejected, sst_error *err) {
    long status = 0;
    curl_easy_getinfo(e->easy, CURLINFO_RESPONSE_CODE, &status);
    if (rc == CURLE_OPERATION_TIMEDOUT) {
        *transient = true;
        return sst__error(err, SST_ETIMEOUT, "OTLP export to %s timed out (%s)", e->shown,
                          e->curl_err[0] != '\0' ? e->curl_err : curl_easy_strerror(rc));
    }
    if (rc != CURLE_OK) {
        /* A bad URL or certificate will not get better; the rest of the network may. */
        *transient = rc != CURLE_UNSUPPORTED_PROTOCOL && rc != CURLE_URL_MALFORMAT &&
                     rc != CURLE_OUT_OF_MEMORY && rc != CURLE_PEER_FAILED_VERIFICATION;
        return sst__error(err, SST_EUNAVAILABLE, "OTLP export to %s failed: %s", e->shown,
                          e->curl_err[0] != '\0' ? e->curl_err : curl_easy_strerror(rc));
    }
    if (status >= 200 && status < 300) {
        sst_value *r =
            e->reply.len > 0 ? sst_json_read(e->reply.data, e->reply.len, NULL, NULL) : NULL;
        const sst_value *ps = sst_object_get(r, "partialSuccess");
        const sst_value *rs = sst_object_get(ps, "rejectedSpans");
        uint64_t k = 0;
        if (sst_is_int(rs) && sst_int_value(rs) > 0) {
            k = (uint64_t)sst_int_value(rs);
        } else if (sst_is_string(rs)) {
            (void)parse_env_int(sst_string_cstr(rs), &k); /* int64 as a decimal string */
        }
        *rejected = k < n ? k : n;
        if (*rejected > 0) {
            const sst_value *m = sst_object_get(ps, "errorMessage");
            sst__error(err, SST_EINVAL, "OTLP collector at %s rejected %llu of %zu spans: %.120s",
                       e->shown, (unsigned long long)*rejected, n, sst_string_cstr(m));
        }
        sst_value_unref(r);
        return SST_OK;
    }
    /* OTLP/HTTP: only these are retried; every other 4xx and 5xx MUST NOT be. */
    *transient = status == 429 || status == 502 || status == 503 || status == 504;
    sst__buf ex;
    sst__buf_init(&ex);
    sst__redact(e->reply.data != NULL ? e->reply.data : "", e->reply.len, e->secrets, e->n_secrets,
                160, &ex);
    for (size_t i = 0; i < ex.len; i++) {
        unsigned char ch = (unsigned char)ex.data[i];
        ex.data[i] = ch < 0x20 || ch == 0x7f ? ' ' : (char)ch;
    }
    sst_code code = sst__error(err, *transient ? SST_EUNAVAILABLE : SST_EINVAL,
                               "OTLP collector at %s answered HTTP %ld%s%.*s", e->shown, status,
                               ex.len > 0 ? ": " : "", ex.len > 160 ? 160 : (int)ex.len,
                               ex.data != NULL ? ex.data : "");
    sst__buf_free(&ex);
    return code;
}

/*
 * One POST of @p body, cut short when the exporter stops. SST_OK, or an
 * error with *transient (retry) and e->retry_after_ms set.
 */
static sst_code post_once(sst__otlp_exporter *e, const char *body, size_t len, size_t n,
                          uint32_t timeout_ms, bool *transient, uint64_t *rejected,
                          sst_error *err) {
    CURL *c = e->easy;
    *transient = false;
    e->reply.len = 0;
    e->reply.oom = false; /* an earlier reply that did not fit must not silence this one */
    e->retry_after_ms = -1;
    e->curl_err[0] = '\0';
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)timeout_ms);
    CURLMcode mc = curl_multi_add_handle(e->multi, c);
    if (mc != CURLM_OK) {
        return sst__error(err, SST_EIO, "OTLP export to %s: curl: %s", e->shown,
                          curl_multi_strerror(mc));
    }
    int running = 1;
    bool cut = false;
    while (mc == CURLM_OK) {
        mc = curl_multi_perform(e->multi, &running);
        if (mc != CURLM_OK || running == 0) {
            break;
        }
        if (atomic_load(&e->stop)) {
            cut = true;
            break;
        }
        mc = curl_multi_poll(e->multi, NULL, 0, 1000, NULL);
    }
    CURLcode rc = CURLE_OK;
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(e->multi, &left)) != NULL) {
        if (m->msg == CURLMSG_DONE && m->easy_handle == c) {
            rc = m->data.result;
        }
    }
    curl_multi_remove_handle(e->multi, c);
    if (cut) {
        return sst__error(err, SST_ETIMEOUT, "OTLP export to %s: cut off by the shutdown",
                          e->shown);
    }
    if (mc != CURLM_OK) {
        *transient = true;
        return sst__error(err, SST_EIO, "OTLP export to %s: curl: %s", e->shown,
                          curl_multi_strerror(mc));
    }
    return outcome(e, rc, n, transient, rejected, err);
}

/* Sleeps @p ms unless the exporter stops first (then false). */
static bool pause_ms(sst__otlp_exporter *e, uint64_t ms) {
    uint64_t deadline = mono_ms() + ms;
    pthread_mutex_lock(&e->mu);
    while (!atomic_load(&e->stop) && mono_ms() < deadline) {
        wait_until(&e->work, &e->mu, deadline);
    }
    bool go_on = !atomic_load(&e->stop);
    pthread_mutex_unlock(&e->mu);
    return go_on;
}

/* @p ms scaled by a random factor in [0.8, 1.2] (OTLP: backoff with jitter). */
static uint64_t jitter(uint64_t ms) {
    uint16_t r = 0x8000;
    (void)sst__random_bytes(&r, sizeof r, NULL); /* without random bytes: no jitter */
    return ms * (800u + (uint64_t)r * 400u / 65535u) / 1000u;
}

/*
 * Sends the @p n spans of e->batch, retrying as otlp.h says.
 * @return SST_OK (*rejected: spans the collector refused); or the error
 *         that ended the last attempt.
 */
static sst_code send_batch(sst__otlp_exporter *e, size_t n, uint64_t *rejected, sst_error *err) {
    sst__buf b;
    sst__buf_init(&b);
    sst__buf_append(&b, e->prefix, e->prefix_len);
    for (size_t i = 0; i < n; i++) {
        if (i > 0) {
            sst__buf_putc(&b, ',');
        }
        sst__otlp_encode_span(&b, e->batch[i]);
    }
    sst__buf_append(&b, SST__OTLP_REQUEST_END, sizeof SST__OTLP_REQUEST_END - 1);
    if (b.oom) {
        sst__buf_free(&b);
        return sst__error(err, SST_ENOMEM, "OTLP export to %s: out of memory encoding %zu spans",
                          e->shown, n);
    }
    const sst__otlp_opts *o = &e->o;
    uint64_t start = mono_ms();
    uint64_t budget_end = o->export_timeout_ms > 0 ? start + o->export_timeout_ms : UINT64_MAX;
    unsigned attempts = o->max_attempts > 0 ? o->max_attempts : 1;
    /* retry_base_ms doubled each retry up to retry_max_ms, then jitter() (not the policy's). */
    sst_retry_policy backoff = {.max_attempts = attempts,
                                .initial_interval_s = (double)o->retry_base_ms / 1000.0,
                                .backoff_factor = 2.0,
                                .max_interval_s = (double)o->retry_max_ms / 1000.0};
    sst_code rc = SST_OK;
    for (unsigned i = 1;; i++) {
        uint64_t now = mono_ms();
        uint64_t left = budget_end == UINT64_MAX ? 0 : budget_end > now ? budget_end - now : 1;
        uint64_t t = o->timeout_ms == 0                  ? left
                     : left == 0 || o->timeout_ms < left ? o->timeout_ms
                                                         : left;
        bool transient = false;
        rc = post_once(e, b.data, b.len, n, (uint32_t)(t > UINT32_MAX ? UINT32_MAX : t), &transient,
                       rejected, err);
        pthread_mutex_lock(&e->mu);
        e->st.requests++;
        pthread_mutex_unlock(&e->mu);
        if (rc == SST_OK || !transient || i >= attempts || atomic_load(&e->stop)) {
            if (rc != SST_OK && transient && i > 1) {
                sst__error_prefix(err, "after %u attempts", i);
            }
            break;
        }
        uint64_t wait = sst__http_retry_wait_ms(&backoff, i, e->retry_after_ms,
                                                SST__RETRY_AFTER_MAX_MS); /* the budget caps it */
        wait = e->retry_after_ms >= 0 ? wait : jitter(wait);
        if (mono_ms() + wait >= budget_end) {
            sst__error_prefix(err,
                              "gave up after %u attempts (the next would pass the export "
                              "timeout of %u ms)",
                              i, (unsigned)o->export_timeout_ms);
            break;
        }
        pthread_mutex_lock(&e->mu);
        e->st.retries++;
        pthread_mutex_unlock(&e->mu);
        if (sst__http_wait_hooked("OTLP", wait) ? atomic_load(&e->stop) : !pause_ms(e, wait)) {
            sst__error(err, SST_ETIMEOUT, "OTLP export to %s: cut off by the shutdown", e->shown);
            rc = SST_ETIMEOUT;
            break;
        }
    }
    sst__buf_free(&b);
    return rc;
}

static void *worker_main(void *arg) {
    sst__otlp_exporter *e = arg;
    const sst__otlp_opts *o = &e->o;
    pthread_mutex_lock(&e->mu);
    while (!atomic_load(&e->stop)) {
        size_t n = e->count;
        if (n == 0) {
            if (e->closing) {
                break;
            }
            pthread_cond_wait(&e->work, &e->mu);
            continue;
        }
        uint64_t due_at = e->ring[e->head]->queued_ms + o->schedule_delay_ms;
        if (n < o->max_batch && e->flush_seq <= e->done_seq && !e->closing && mono_ms() < due_at) {
            wait_until(&e->work, &e->mu, due_at);
            continue;
        }
        size_t k = n < o->max_batch ? n : o->max_batch;
        for (size_t i = 0; i < k; i++) {
            e->batch[i] = e->ring[(e->head + i) % o->max_queue];
        }
        e->head = (e->head + k) % o->max_queue;
        e->count -= k;
        if (!e->closing) { /* room again: spans are worth building */
            atomic_store_explicit(&e->saturated, false, memory_order_relaxed);
        }
        pthread_mutex_unlock(&e->mu);

        sst_error err = {0};
        uint64_t rejected = 0;
        sst_code rc = send_batch(e, k, &rejected, &err);
        for (size_t i = 0; i < k; i++) {
            sst__span_free(e->batch[i]);
            e->batch[i] = NULL;
        }

        pthread_mutex_lock(&e->mu);
        e->done_seq += k;
        if (rc == SST_OK) {
            e->st.exported += k - rejected;
            e->st.rejected += rejected;
            e->st.dropped += rejected;
            if (rejected > 0) {
                memcpy(e->st.last_error, err.msg, sizeof err.msg);
            }
        } else {
            if (atomic_load(&e->stop)) {
                e->st.dropped_shutdown += k;
            } else {
                e->st.dropped_failed += k;
            }
            e->st.dropped += k;
            e->fail_upto = e->done_seq;
            e->fail_code = rc;
            memcpy(e->st.last_error, err.msg, sizeof err.msg);
        }
        pthread_cond_broadcast(&e->progress);
    }
    pthread_mutex_unlock(&e->mu);
    return NULL;
}

void sst__otlp_shutdown(sst__otlp_exporter *e, uint32_t timeout_ms) {
    if (e == NULL) {
        return;
    }
    uint64_t deadline = mono_ms() + timeout_ms;
    pthread_mutex_lock(&e->mu);
    if (e->shut) {
        pthread_mutex_unlock(&e->mu);
        return;
    }
    e->shut = true;
    e->closing = true;
    atomic_store_explicit(&e->saturated, true, memory_order_relaxed);
    uint64_t target = e->accepted_seq;
    e->flush_seq = target;
    pthread_cond_signal(&e->work);
    while (e->done_seq < target && mono_ms() < deadline) {
        wait_until(&e->progress, &e->mu, deadline);
    }
    atomic_store(&e->stop, true);
    pthread_cond_broadcast(&e->work);
    pthread_cond_broadcast(&e->progress); /* flushes still waiting give up */
    pthread_mutex_unlock(&e->mu);
    curl_multi_wakeup(e->multi);
    pthread_join(e->thread, NULL);
    e->thread_ok = false;
    pthread_mutex_lock(&e->mu);
    for (; e->count > 0; e->count--) {
        sst__span_free(e->ring[e->head]);
        e->head = (e->head + 1) % e->o.max_queue;
        e->st.dropped_shutdown++;
        e->st.dropped++;
        e->done_seq++;
    }
    pthread_cond_broadcast(&e->progress);
    pthread_mutex_unlock(&e->mu);
}

void sst__otlp_exporter_free(sst__otlp_exporter *e) {
    if (e == NULL) {
        return;
    }
    sst__otlp_shutdown(e, e->o.shutdown_ms);
    destroy(e);
}

bool sst__otlp_saturated(sst__otlp_exporter *e) {
    return e != NULL && atomic_load_explicit(&e->saturated, memory_order_relaxed);
}

void sst__otlp_drop_unbuilt(sst__otlp_exporter *e) {
    if (e != NULL) {
        atomic_fetch_add_explicit(&e->dropped_unbuilt, 1, memory_order_relaxed);
    }
}

void sst__otlp_stats_get(sst__otlp_exporter *e, sst__otlp_stats *out) {
    uint64_t unbuilt = atomic_load_explicit(&e->dropped_unbuilt, memory_order_relaxed);
    pthread_mutex_lock(&e->mu);
    *out = e->st;
    out->queued = e->count;
    pthread_mutex_unlock(&e->mu);
    out->dropped += unbuilt;
    out->dropped_queue_full += unbuilt;
}

uint64_t sst__otlp_dropped(sst__otlp_exporter *e) {
    pthread_mutex_lock(&e->mu);
    uint64_t n = e->st.dropped;
    pthread_mutex_unlock(&e->mu);
    return n + atomic_load_explicit(&e->dropped_unbuilt, memory_order_relaxed);
}
