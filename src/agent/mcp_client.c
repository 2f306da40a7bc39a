/* SPDX-License-Identifier: MIT */
/*
 * The MCP client (see mcp.h): requests with integer ids, each caller waiting
 * on a condition variable of its own until the transport delivers the
 * response with its id, the connection ends, its deadline passes or its
 * cancel check says stop. Server requests are answered (`ping`; -32601 for
 * the rest), `notifications/tools/list_changed` makes the tool list stale,
 * and lines that are not JSON-RPC are counted and quoted in later errors.
 *
 * Locks: `mu` guards the pending list, the connection's end, the tool cache,
 * the malformed-output note and the bindings; every pending request's
 * condition variable goes with it. It is never held while the transport or a
 * cancel check is called.
 */
#include "mcp.h"
#include "redact.h"
#include "superstep/json.h"
#include "superstep/version.h"
#include "values/build.h"

#define DEFAULT_TIMEOUT_MS         60000
#define DEFAULT_CONNECT_TIMEOUT_MS 30000
#define DEFAULT_CLOSE_TIMEOUT_MS   2000
#define DEFAULT_MAX_MESSAGE        ((size_t)16 << 20)
#define REPLY_WAIT_MS              5000 /* answering a server request, sending a notification */
#define MAX_PAGES                  1000 /* of tools/list: a server that never stops paging */

static const char *const k_versions[] = {"2025-06-18", "2025-03-26", "2024-11-05"};

/* A request waiting for its response (on the caller's stack while linked). */
typedef struct pending {
    int64_t id;
    pthread_cond_t cv; /* signalled when done (CLOCK_MONOTONIC) */
    bool done;         /* mu: the response came, or the connection ended */
    sst_value *reply;  /* mu: the response message (new); NULL when the connection ended */
    struct pending *next;
} pending;

struct sst_mcp_client {
    sst__mcp_transport *tr; /* mu when written (the reader may answer before connect returns) */
    char label[160];        /* names the server in errors */
    long timeout_ms, connect_timeout_ms;
    size_t max_message;
    sst_value *server_info; /* set by the handshake, then read-only */

    pthread_mutex_t mu;
    pending *pending;           /* mu */
    int64_t next_id;            /* mu */
    bool dead;                  /* mu: the connection ended for good */
    sst_code dead_code;         /* mu */
    char dead_why[160];         /* mu */
    uint64_t tools_gen;         /* mu: bumped by notifications/tools/list_changed */
    sst_value *tools;           /* mu: the last listing, or NULL */
    uint64_t tools_at;          /* mu: tools_gen when it was asked for */
    unsigned malformed;         /* mu: messages that were not JSON-RPC */
    char malformed_ex[100];     /* mu: the start of the last of them */
    sst__mcp_binding *bindings; /* mu */
};

/* ---- errors ------------------------------------------------------------------------------- */

/*
 * What an error adds about the server's output: the malformed lines it
 * wrote, and (@p with_stderr) the end of its stderr.
 */
static void notes(sst__mcp_client *c, bool with_stderr, char *out, size_t size) {
    out[0] = '\0';
    size_t o = 0;
    pthread_mutex_lock(&c->mu);
    unsigned n = c->malformed;
    char ex[sizeof c->malformed_ex];
    memcpy(ex, c->malformed_ex, sizeof ex);
    sst__mcp_transport *tr = c->tr;
    pthread_mutex_unlock(&c->mu);
    if (n > 0) {
        int k = snprintf(out, size, " (stdout had %u line%s that %s not JSON-RPC, the last: '%s')",
                         n, n == 1 ? "" : "s", n == 1 ? "is" : "are", ex);
        o = k > 0 && (size_t)k < size ? (size_t)k : size - 1;
    }
    if (with_stderr && tr != NULL && tr->stderr_tail != NULL) {
        char tail[4097];
        size_t len = tr->stderr_tail(tr, tail, sizeof tail);
        if (len > 0) {
            char line[124];
            sst__mcp_excerpt(tail, len, 120, true, line);
            snprintf(out + o, size - o, "; stderr: %s", line);
        }
    }
}

/* "MCP server 'LABEL': WHAT: DETAIL" in @p err; returns @p code. */
static sst_code failf(const sst__mcp_client *c, sst_error *err, sst_code code, const char *what,
                      const char *fmt, ...) SST_PRINTF(5, 6);
static sst_code failf(const sst__mcp_client *c, sst_error *err, sst_code code, const char *what,
                      const char *fmt, ...) {
    char detail[SST_ERROR_MSG_MAX * 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    return sst__error(err, code, "MCP server '%s': %s: %s", c->label, what, detail);
}

/* The error of a call on a connection that ended. */
static sst_code dead_error(sst__mcp_client *c, const char *what, sst_error *err) {
    pthread_mutex_lock(&c->mu);
    sst_code code = c->dead_code;
    char why[sizeof c->dead_why];
    memcpy(why, c->dead_why, sizeof why);
    pthread_mutex_unlock(&c->mu);
    char more[SST_ERROR_MSG_MAX];
    notes(c, true, more, sizeof more);
    return failf(c, err, code, what, "%s%s", why, more);
}

/* ---- what the server sends ---------------------------------------------------------------- */

static void note_malformed(sst__mcp_client *c, const char *text, size_t len) {
    char ex[sizeof c->malformed_ex];
    sst__mcp_excerpt(text, len, sizeof ex - 4, false, ex);
    pthread_mutex_lock(&c->mu);
    c->malformed++;
    memcpy(c->malformed_ex, ex, sizeof ex);
    pthread_mutex_unlock(&c->mu);
}

/* Sends a message with a short deadline, for answers and notifications; errors are dropped. */
static void send_quietly(sst__mcp_client *c, char *text, size_t len) {
    pthread_mutex_lock(&c->mu);
    sst__mcp_transport *tr = c->tr;
    pthread_mutex_unlock(&c->mu);
    if (text != NULL && tr != NULL) {
        sst__mcp_wait w = {.deadline_ms = sst__mcp_now_ms() + REPLY_WAIT_MS};
        sst_error e = {0};
        if (tr->send(tr, text, len, &w, &e) != SST_OK) {
            /* The server goes without; a dead connection is reported by the reader. */
        }
    }
    sst_free(text);
}

/* Answers the server's request @p method with id @p id: `ping` is the only one we serve. */
static void answer(sst__mcp_client *c, const sst_value *id, const char *method) {
    sst_error e = {0};
    size_t len = 0;
    char *text;
    if (strcmp(method, "ping") == 0) {
        text = sst__mcp_reply_text(id, sst_object_empty(), 0, NULL, &len, &e);
    } else {
        char msg[200];
        snprintf(msg, sizeof msg,
                 "Method not found: %.100s (superstep declares no client "
                 "capabilities)",
                 method);
        text = sst__mcp_reply_text(id, NULL, -32601, msg, &len, &e);
    }
    send_quietly(c, text, len);
}

static void handle(sst__mcp_client *c, const sst_value *m, const char *json, size_t len) {
    const sst_value *method = sst_object_get(m, "method");
    const sst_value *id = sst_object_get(m, "id");
    if (!sst_is_object(m)) {
        note_malformed(c, json, len);
    } else if (sst_is_string(method)) {
        if (id != NULL && !sst_is_null(id)) {
            answer(c, id, sst_string_cstr(method));
        } else if (strcmp(sst_string_cstr(method), "notifications/tools/list_changed") == 0) {
            pthread_mutex_lock(&c->mu);
            c->tools_gen++;
            pthread_mutex_unlock(&c->mu);
        }
        /* Other notifications (logging, progress, resources) are not used. */
    } else if (sst_is_int(id) &&
               (sst_object_get(m, "result") != NULL || sst_object_get(m, "error") != NULL)) {
        int64_t want = sst_int_value(id);
        pthread_mutex_lock(&c->mu);
        for (pending *p = c->pending; p != NULL; p = p->next) {
            if (p->id == want && !p->done) {
                p->reply = sst_value_ref(m);
                p->done = true;
                pthread_cond_signal(&p->cv);
                break;
            }
        }
        pthread_mutex_unlock(&c->mu);
        /* No caller waits: a late reply to a request that timed out. */
    } else {
        note_malformed(c, json, len); /* an error without an id included */
    }
}

static void on_message(void *ud, const char *json, size_t len) {
    sst__mcp_client *c = ud;
    sst_json_read_opts ro;
    sst_json_read_opts_init(&ro);
    ro.max_bytes = c->max_message;
    sst_error e = {0};
    sst_value *v = sst_json_read(json, len, &ro, &e);
    if (v == NULL) {
        note_malformed(c, json, len);
        return;
    }
    if (sst_is_array(v)) { /* a batch (2025-03-26) */
        for (size_t i = 0; i < sst_array_len(v); i++) {
            handle(c, sst_array_get(v, i), json, len);
        }
    } else {
        handle(c, v, json, len);
    }
    sst_value_unref(v);
}

static void on_closed(void *ud, sst_code code, const char *why) {
    sst__mcp_client *c = ud;
    pthread_mutex_lock(&c->mu);
    if (!c->dead) {
        c->dead = true;
        c->dead_code = code;
        snprintf(c->dead_why, sizeof c->dead_why, "%s", why);
    }
    for (pending *p = c->pending; p != NULL; p = p->next) {
        p->done = true;
        pthread_cond_signal(&p->cv);
    }
    pthread_mutex_unlock(&c->mu);
}

/* ---- requests ----------------------------------------------------------------------------- */

/* What the transport asks while it waits: has the response of this request come? */
typedef struct waiter {
    sst__mcp_client *c;
    pending *p;
} waiter;

static bool answered(void *ud) {
    waiter *w = ud;
    pthread_mutex_lock(&w->c->mu);
    bool done = w->p->done;
    pthread_mutex_unlock(&w->c->mu);
    return done;
}

static void unlink_pending(sst__mcp_client *c, pending *p) {
    for (pending **q = &c->pending; *q != NULL; q = &(*q)->next) {
        if (*q == p) {
            *q = p->next;
            return;
        }
    }
}

/* Tells the server to stop working on request @p id (notifications/cancelled). */
static void send_cancelled(sst__mcp_client *c, int64_t id, const char *reason) {
    sst_error e = {0};
    sst_value *params = sst__set_take(sst_object_empty(), "requestId", sst_int_new(id, &e), &e);
    params = sst__set_take(params, "reason", sst_string_new(reason, &e), &e);
    size_t len = 0;
    char *text = params != NULL
                     ? sst__mcp_notification_text("notifications/cancelled", params, &len, &e)
                     : NULL;
    sst_value_unref(params);
    send_quietly(c, text, len);
}

/* The result of the response @p reply (borrowed), or a JSON-RPC error quoted. */
static sst_value *reply_result(sst__mcp_client *c, const sst_value *reply, const char *what,
                               sst_error *err) {
    const sst_value *e = sst_object_get(reply, "error");
    if (e != NULL) {
        const sst_value *msg = sst_object_get(e, "message");
        failf(c, err, SST_EINVAL, what, "error %lld: %s",
              (long long)sst_int_value(sst_object_get(e, "code")),
              sst_is_string(msg) ? sst_string_cstr(msg) : "(no message)");
        return NULL;
    }
    const sst_value *r = sst_object_get(reply, "result");
    if (r == NULL) {
        failf(c, err, SST_EPARSE, what, "a response without a result");
        return NULL;
    }
    return sst_value_ref(r);
}

sst_value *sst__mcp_request(sst__mcp_client *c, const char *method, const char *what,
                            sst_value *params, const sst_mcp_call_opts *how, sst_error *err) {
    what = what != NULL ? what : method;
    long timeout = how != NULL && how->timeout_ms > 0 ? how->timeout_ms : c->timeout_ms;
    sst__mcp_wait w = {.deadline_ms = sst__mcp_now_ms() + (uint64_t)timeout,
                       .cancelled = how != NULL ? how->cancelled : NULL,
                       .cancel_ud = how != NULL ? how->cancel_user_data : NULL,
                       .traceparent = how != NULL ? how->traceparent : NULL};
    pending p;
    memset(&p, 0, sizeof p);
    waiter wt = {.c = c, .p = &p};
    w.answered = answered;
    w.answered_ud = &wt;
    pthread_mutex_lock(&c->mu);
    if (c->dead) {
        pthread_mutex_unlock(&c->mu);
        sst_value_unref(params);
        dead_error(c, what, err);
        return NULL;
    }
    sst__mcp_cond_init(&p.cv);
    p.id = ++c->next_id;
    p.next = c->pending;
    c->pending = &p;
    sst__mcp_transport *tr = c->tr;
    pthread_mutex_unlock(&c->mu);

    sst_error le = {0};
    size_t len = 0;
    char *text = sst__mcp_request_text(p.id, method, params, &len, &le);
    sst_value_unref(params);
    sst_code code = text != NULL ? tr->send(tr, text, len, &w, &le) : sst__code(&le);
    sst_free(text);

    pthread_mutex_lock(&c->mu);
    while (code == SST_OK && !p.done) {
        if (tr->inline_replies) {
            code = SST_EPARSE; /* the reply to the POST ended without the response */
            break;
        }
        uint64_t now = sst__mcp_now_ms();
        if (now >= w.deadline_ms) {
            code = SST_ETIMEOUT;
            break;
        }
        if (w.cancelled != NULL) {
            pthread_mutex_unlock(&c->mu);
            bool stop = w.cancelled(w.cancel_ud);
            pthread_mutex_lock(&c->mu);
            if (stop && !p.done) {
                code = SST_ECANCELLED;
                break;
            }
        }
        struct timespec ts;
        uint64_t left = w.deadline_ms - now;
        sst__mcp_abstime(&ts, left < 100 ? left : 100);
        if (!p.done) {
            pthread_cond_timedwait(&p.cv, &c->mu, &ts);
        }
    }
    unlink_pending(c, &p);
    bool done = p.done;
    sst_value *reply = p.reply;
    pthread_mutex_unlock(&c->mu);
    pthread_cond_destroy(&p.cv);

    if (done && reply != NULL) {
        sst_value *r = reply_result(c, reply, what, err);
        sst_value_unref(reply);
        return r;
    }
    if (done) {
        dead_error(c, what, err);
        return NULL;
    }
    bool is_init = strcmp(method, "initialize") == 0;
    char more[SST_ERROR_MSG_MAX];
    if (code == SST_ETIMEOUT || code == SST_ECANCELLED) {
        if (!is_init) { /* the handshake is the one request that must not be cancelled */
            send_cancelled(c, p.id, code == SST_ETIMEOUT ? "timed out" : "cancelled by the caller");
        }
        notes(c, is_init, more, sizeof more);
        if (code == SST_ETIMEOUT) {
            sst__error(err, code, "MCP server '%s': %s timed out after %ld ms%s", c->label, what,
                       timeout, more);
        } else {
            sst__error(err, code, "MCP server '%s': %s was cancelled%s", c->label, what, more);
        }
        return NULL;
    }
    pthread_mutex_lock(&c->mu);
    bool dead = c->dead;
    pthread_mutex_unlock(&c->mu);
    if (dead) {
        dead_error(c, what, err); /* the exit status says more than a failed write */
    } else if (code == SST_EPARSE && le.code == SST_OK) {
        notes(c, false, more, sizeof more);
        failf(c, err, code, what, "the reply ended without a response%s", more);
    } else {
        failf(c, err, code, what, "%s", le.msg);
    }
    return NULL;
}

/* ---- connecting --------------------------------------------------------------------------- */

static sst__mcp_client *client_new(const sst_mcp_opts *o, sst_mcp_opts *use, sst_error *err) {
    if (o != NULL) {
        *use = *o;
    } else {
        sst_mcp_opts_init(use);
    }
    use->timeout_ms = use->timeout_ms > 0 ? use->timeout_ms : DEFAULT_TIMEOUT_MS;
    use->connect_timeout_ms =
        use->connect_timeout_ms > 0 ? use->connect_timeout_ms : DEFAULT_CONNECT_TIMEOUT_MS;
    use->close_timeout_ms =
        use->close_timeout_ms > 0 ? use->close_timeout_ms : DEFAULT_CLOSE_TIMEOUT_MS;
    use->max_message_bytes =
        use->max_message_bytes > 0 ? use->max_message_bytes : DEFAULT_MAX_MESSAGE;
    sst__mcp_client *c = sst__calloc(1, sizeof *c);
    if (c == NULL) {
        sst__enomem(err);
        return NULL;
    }
    pthread_mutex_init(&c->mu, NULL);
    c->timeout_ms = use->timeout_ms;
    c->connect_timeout_ms = use->connect_timeout_ms;
    c->max_message = use->max_message_bytes;
    if (use->name != NULL) {
        snprintf(c->label, sizeof c->label, "%s", use->name);
    }
    return c;
}

/* "node index.js stdio": the command's base name and its first arguments (base names of paths). */
static void command_label(const char *const *argv, char *out, size_t size) {
    sst__buf b;
    sst__buf_init(&b);
    for (size_t i = 0; argv[i] != NULL && i < 4; i++) {
        const char *a = argv[i];
        const char *slash = strrchr(a, '/');
        a = slash != NULL && slash[1] != '\0' ? slash + 1 : a;
        sst__buf_printf(&b, "%s%s", i > 0 ? " " : "", a);
    }
    if (b.oom || b.data == NULL) {
        snprintf(out, size, "%s", argv[0]);
    } else {
        sst__mcp_excerpt(b.data, b.len, size > 64 ? 60 : size - 4, false, out);
    }
    sst__buf_free(&b);
}

static bool version_known(const char *v) {
    for (size_t i = 0; i < SST_ARRAY_LEN(k_versions); i++) {
        if (strcmp(v, k_versions[i]) == 0) {
            return true;
        }
    }
    return false;
}

/* initialize, the checks, notifications/initialized. */
static sst_code handshake(sst__mcp_client *c, sst_error *err) {
    sst_error le = {0};
    sst_value *info =
        sst__set_take(sst_object_empty(), "name", sst_string_new("superstep", &le), &le);
    info = sst__set_take(info, "version", sst_string_new(sst_version(), &le), &le);
    sst_value *params = sst__set_take(sst_object_empty(), "protocolVersion",
                                      sst_string_new(k_versions[0], &le), &le);
    params = sst__set_take(params, "capabilities", sst_object_empty(), &le);
    params = sst__set_take(params, "clientInfo", info, &le);
    if (params == NULL) {
        return sst__enomem(err);
    }
    sst_mcp_call_opts how;
    sst_mcp_call_opts_init(&how);
    how.timeout_ms = c->connect_timeout_ms;
    sst_value *res = sst__mcp_request(c, "initialize", NULL, params, &how, err);
    if (res == NULL) {
        return sst__code(err);
    }
    const sst_value *pv = sst_object_get(res, "protocolVersion");
    const sst_value *caps = sst_object_get(res, "capabilities");
    const sst_value *si = sst_object_get(res, "serverInfo");
    sst_code code = SST_OK;
    if (!sst_is_string(pv) || !version_known(sst_string_cstr(pv))) {
        code = failf(c, err, SST_ENOTSUP, "initialize",
                     "the server speaks protocol revision '%.40s'; superstep speaks %s, %s and %s",
                     sst_is_string(pv) ? sst_string_cstr(pv) : "(none)", k_versions[0],
                     k_versions[1], k_versions[2]);
    } else if (!sst_is_object(sst_object_get(caps, "tools"))) {
        code = failf(c, err, SST_ENOTSUP, "initialize",
                     "the server offers no tools (its capabilities have no 'tools')");
    }
    if (code != SST_OK) {
        sst_value_unref(res);
        return code;
    }
    const sst_value *name = sst_object_get(si, "name");
    const sst_value *version = sst_object_get(si, "version");
    sst_value *s =
        sst__set_take(sst_object_empty(), "name",
                      sst_value_ref(sst_is_string(name) ? name : sst_string_empty()), &le);
    s = sst__set_take(s, "version",
                      sst_value_ref(sst_is_string(version) ? version : sst_string_empty()), &le);
    s = sst__set_take(s, "protocolVersion", sst_value_ref(pv), &le);
    if (s == NULL) {
        sst_value_unref(res);
        return sst__enomem(err);
    }
    c->server_info = s;
    if (c->tr->negotiated != NULL) {
        c->tr->negotiated(c->tr, sst_string_cstr(pv));
    }
    sst_value_unref(res);

    size_t len = 0;
    char *text = sst__mcp_notification_text("notifications/initialized", NULL, &len, &le);
    if (text == NULL) {
        return sst__enomem(err);
    }
    sst__mcp_wait w = {.deadline_ms = sst__mcp_now_ms() + (uint64_t)c->connect_timeout_ms};
    code = c->tr->send(c->tr, text, len, &w, &le);
    sst_free(text);
    if (code != SST_OK) {
        return failf(c, err, code, "notifications/initialized", "%s", le.msg);
    }
    return SST_OK;
}

/* Attaches @p tr and runs the handshake; on failure @p c is closed. */
static sst__mcp_client *finish_connect(sst__mcp_client *c, sst__mcp_transport *tr, sst_error *err) {
    if (tr == NULL) {
        pthread_mutex_destroy(&c->mu);
        sst__free(c);
        return NULL;
    }
    pthread_mutex_lock(&c->mu);
    c->tr = tr;
    pthread_mutex_unlock(&c->mu);
    if (handshake(c, err) != SST_OK) {
        sst__mcp_close(c);
        return NULL;
    }
    return c;
}

sst__mcp_client *sst__mcp_connect_stdio(const char *const *argv, const sst_mcp_opts *o,
                                        sst_error *err) {
    sst_mcp_opts use;
    sst__mcp_client *c = client_new(o, &use, err);
    if (c == NULL) {
        return NULL;
    }
    if (c->label[0] == '\0' && argv != NULL && argv[0] != NULL) {
        command_label(argv, c->label, sizeof c->label);
    }
    sst__mcp_sink sink = {.message = on_message, .closed = on_closed, .ud = c};
    return finish_connect(c, sst__mcp_stdio_open(argv, &use, &sink, err), err);
}

sst__mcp_client *sst__mcp_connect_http(const char *url, const sst_mcp_opts *o, sst_error *err) {
    sst_mcp_opts use;
    sst__mcp_client *c = client_new(o, &use, err);
    if (c == NULL) {
        return NULL;
    }
    if (c->label[0] == '\0') {
        sst__url_redact(url != NULL ? url : "(none)", c->label, sizeof c->label);
    }
    sst__mcp_sink sink = {.message = on_message, .closed = on_closed, .ud = c};
    return finish_connect(c, sst__mcp_http_open(url, &use, &sink, err), err);
}

void sst__mcp_close(sst__mcp_client *c) {
    if (c == NULL) {
        return;
    }
    pthread_mutex_lock(&c->mu);
    sst__mcp_transport *tr = c->tr;
    c->tr = NULL; /* the reader, until it stops, answers nothing more */
    pthread_mutex_unlock(&c->mu);
    if (tr != NULL) {
        tr->close(tr);
    }
    while (c->bindings != NULL) {
        sst__mcp_binding *b = c->bindings;
        c->bindings = b->next;
        sst__free(b->name);
        sst__free(b);
    }
    sst_value_unref(c->tools);
    sst_value_unref(c->server_info);
    pthread_mutex_destroy(&c->mu);
    sst__free(c);
}

const sst_value *sst__mcp_server_info(const sst__mcp_client *c) {
    return c->server_info;
}

const char *sst__mcp_label(const sst__mcp_client *c) {
    return c->label;
}

pid_t sst__mcp_pid(const sst__mcp_client *c) {
    return c->tr != NULL ? c->tr->pid : -1;
}

size_t sst__mcp_stderr(const sst__mcp_client *c, char *buf, size_t size) {
    if (size > 0) {
        buf[0] = '\0';
    }
    sst__mcp_transport *tr = c->tr;
    return tr != NULL && tr->stderr_tail != NULL && size > 0 ? tr->stderr_tail(tr, buf, size) : 0;
}

sst__mcp_binding *sst__mcp_bind(sst__mcp_client *c, const char *name, sst_error *err) {
    sst__mcp_binding *b = sst__calloc(1, sizeof *b);
    char *copy = sst__strndup(name, strlen(name));
    if (b == NULL || copy == NULL) {
        sst__free(b);
        sst__free(copy);
        sst__enomem(err);
        return NULL;
    }
    b->client = c;
    b->name = copy;
    pthread_mutex_lock(&c->mu);
    b->next = c->bindings;
    c->bindings = b;
    pthread_mutex_unlock(&c->mu);
    return b;
}

/* ---- tools -------------------------------------------------------------------------------- */

/* One listed tool as we keep it: {name, description, inputSchema}. NULL when it has no name. */
static sst_value *tool_entry(const sst_value *t, sst_error *err) {
    const sst_value *name = sst_object_get(t, "name");
    const sst_value *desc = sst_object_get(t, "description");
    const sst_value *schema = sst_object_get(t, "inputSchema");
    if (!sst_is_string(name) || sst_string_len(name) == 0) {
        return NULL;
    }
    sst_value *e = sst__set_take(sst_object_empty(), "name", sst_value_ref(name), err);
    e = sst__set_take(e, "description",
                      sst_value_ref(sst_is_string(desc) ? desc : sst_string_empty()), err);
    return sst__set_take(e, "inputSchema",
                         schema != NULL ? sst_value_ref(schema) : sst_object_empty(), err);
}

sst_value *sst__mcp_list_tools(sst__mcp_client *c, const sst_mcp_call_opts *how, sst_error *err) {
    pthread_mutex_lock(&c->mu);
    uint64_t gen = c->tools_gen;
    if (c->tools != NULL && c->tools_at == gen) {
        sst_value *cached = sst_value_ref(c->tools);
        pthread_mutex_unlock(&c->mu);
        return cached;
    }
    pthread_mutex_unlock(&c->mu);
    sst_value *out = sst_array_empty();
    char *cursor = NULL;
    size_t page = 0;
    for (; page < MAX_PAGES && out != NULL; page++) {
        sst_error le = {0};
        sst_value *params = sst_object_empty();
        if (cursor != NULL) {
            params = sst__set_take(params, "cursor", sst_string_new(cursor, &le), &le);
            if (params == NULL) {
                sst_value_unref(out);
                out = NULL;
                sst__enomem(err);
                break;
            }
        }
        sst_value *res = sst__mcp_request(c, "tools/list", NULL, params, how, err);
        if (res == NULL) {
            sst_value_unref(out);
            out = NULL;
            break;
        }
        const sst_value *tools = sst_object_get(res, "tools");
        if (!sst_is_array(tools)) {
            failf(c, err, SST_EPARSE, "tools/list", "the result has no 'tools' array");
            sst_value_unref(res);
            sst_value_unref(out);
            out = NULL;
            break;
        }
        for (size_t i = 0; i < sst_array_len(tools) && out != NULL; i++) {
            le = (sst_error){0};
            sst_value *e = tool_entry(sst_array_get(tools, i), &le);
            if (e != NULL) {
                out = sst__push_take(out, e, &le);
            } else if (le.code != SST_OK) {
                sst_value_unref(out);
                out = NULL;
            }
            if (out == NULL) {
                sst__enomem(err);
            }
        }
        const sst_value *next = sst_object_get(res, "nextCursor");
        bool more = sst_is_string(next) && sst_string_len(next) > 0;
        bool same = more && cursor != NULL && strcmp(cursor, sst_string_cstr(next)) == 0;
        sst__free(cursor);
        cursor = more ? sst__strndup(sst_string_cstr(next), sst_string_len(next)) : NULL;
        sst_value_unref(res);
        if (out != NULL && same) {
            failf(c, err, SST_EPARSE, "tools/list", "the server gave the same cursor twice");
            sst_value_unref(out);
            out = NULL;
        } else if (out != NULL && more && cursor == NULL) {
            sst__enomem(err);
            sst_value_unref(out);
            out = NULL;
        }
        if (!more) {
            break;
        }
    }
    sst__free(cursor);
    if (out != NULL && page == MAX_PAGES) {
        failf(c, err, SST_ELIMIT, "tools/list", "more than %d pages", MAX_PAGES);
        sst_value_unref(out);
        out = NULL;
    }
    if (out != NULL) {
        pthread_mutex_lock(&c->mu);
        if (c->tools_gen == gen) { /* not stale already */
            sst_value_unref(c->tools);
            c->tools = sst_value_ref(out);
            c->tools_at = gen;
        }
        pthread_mutex_unlock(&c->mu);
    }
    return out;
}

sst_value *sst__mcp_call_tool(sst__mcp_client *c, const char *name, const sst_value *args,
                              const sst_mcp_call_opts *how, sst_error *err) {
    char what[160];
    snprintf(what, sizeof what, "tools/call '%.100s'", name != NULL ? name : "");
    if (name == NULL || name[0] == '\0') {
        failf(c, err, SST_EINVAL, "tools/call", "no tool name given");
        return NULL;
    }
    if (args != NULL && !sst_is_object(args)) {
        failf(c, err, SST_EINVAL, what, "the arguments must be an object, not %s",
              sst_type_name(sst_value_type(args)));
        return NULL;
    }
    sst_error le = {0};
    sst_value *params = sst__set_take(sst_object_empty(), "name", sst_string_new(name, &le), &le);
    params = sst__set_take(params, "arguments",
                           args != NULL ? sst_value_ref(args) : sst_object_empty(), &le);
    if (params == NULL) {
        sst__enomem(err);
        return NULL;
    }
    sst_value *res = sst__mcp_request(c, "tools/call", what, params, how, err);
    if (res == NULL) {
        return NULL;
    }
    sst_value *v = sst__mcp_result_value(res, &le);
    sst_value_unref(res);
    if (v == NULL) {
        if (le.code == SST_ETASK) {
            sst__error(err, SST_ETASK, "%s", le.msg); /* the tool's own words */
        } else {
            failf(c, err, le.code, what, "%s", le.msg);
        }
    }
    return v;
}
