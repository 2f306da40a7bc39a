/* SPDX-License-Identifier: MIT */
/*
 * Run streams: the events a run publishes as it goes (SSE frames in the
 * making) and its result, kept for the connections that send them. A
 * connection with nothing to send suspends itself (libmicrohttpd holds no
 * thread for it) and is resumed by the next publish; a stream keeps its last
 * stream_backlog events, so a client that reconnects with Last-Event-ID
 * misses nothing within them. One lock (s->bmu) guards every stream.
 *
 * This is one process's broker. With PostgreSQL, srv_stream_publish and
 * srv_stream_end write the events to the database instead, and every
 * process's relay (relay.c) copies them into its streams with
 * srv_stream_publish_at and srv_stream_finish: so any process streams a run
 * that any process executes.
 */
#include <microhttpd.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "cors.h"
#include "server_int.h"

/* A finished stream is kept this long for late joins. */
#define KEEP_MS 60000

typedef struct srv_event {
    uint64_t seq;
    char *name; /* owned */
    char *data; /* owned JSON text */
    size_t len;
} srv_event;

typedef struct waiter {
    struct waiter *next;
    struct MHD_Connection *conn;
} waiter;

struct srv_stream {
    srv_stream *next; /* s->streams */
    char run_id[64];
    int refs;
    srv_event *ev; /* a ring of the last cap events */
    size_t cap, head, count;
    uint64_t next_seq;
    bool done;
    char *result; /* owned JSON text of the run's result; NULL: "null" */
    int64_t done_at;
    waiter *waiters;
};

/* One connection sending a stream. */
typedef struct stream_conn {
    sst_server *s;
    srv_stream *st;
    struct MHD_Connection *conn;
    unsigned kind;
    uint64_t next; /* the next event to send */
    bool ids;
    unsigned modes; /* 0: every event */
    sst__buf frame; /* what is being written */
    size_t off;
    bool result_sent;
    bool cancel_on_disconnect; /* cancel the run when the response ends before it does */
    char mcp_id[128];          /* /mcp: the result goes as this JSON-RPC id's answer */
    waiter w;
} stream_conn;

static const struct {
    const char *name;
    unsigned bit;
} k_modes[] = {
    {"values", SRV_MODE_VALUES},
    {"updates", SRV_MODE_UPDATES},
    {"custom", SRV_MODE_CUSTOM},
    {"debug", SRV_MODE_DEBUG},
    {"messages-tuple", SRV_MODE_MESSAGES},
    {"tasks", SRV_MODE_TASKS},
    {"checkpoints", SRV_MODE_CHECKPOINTS},
    {"events", SRV_MODE_EVENTS},
    {"messages", SRV_MODE_MESSAGES_LEGACY},
};

unsigned srv_mode_bit(const char *name) {
    for (size_t i = 0; i < sizeof k_modes / sizeof k_modes[0]; i++) {
        if (strcmp(k_modes[i].name, name) == 0) {
            return k_modes[i].bit;
        }
    }
    return 0;
}

/* The mode bit an event name belongs to ("updates|ns" is updates; "messages/partial" is
 * the legacy messages mode; "metadata" and "error" always go). */
static unsigned event_mode(const char *name) {
    size_t n = strcspn(name, "|/");
    if (strncmp(name, "messages", n) == 0 && n == 8) {
        return name[n] == '/' ? SRV_MODE_MESSAGES_LEGACY : SRV_MODE_MESSAGES;
    }
    for (size_t i = 0; i < sizeof k_modes / sizeof k_modes[0]; i++) {
        if (strlen(k_modes[i].name) == n && strncmp(k_modes[i].name, name, n) == 0) {
            return k_modes[i].bit;
        }
    }
    return 0;
}

static void stream_free(srv_stream *st) {
    for (size_t i = 0; i < st->count; i++) {
        srv_event *e = &st->ev[(st->head + i) % st->cap];
        sst__free(e->name);
        sst__free(e->data);
    }
    sst__free(st->ev);
    sst__free(st->result);
    sst__free(st);
}

/* The stream of @p run_id (under bmu), or NULL. */
static srv_stream *lookup(sst_server *s, const char *run_id) {
    size_t v;
    return sst__map_get(&s->stream_index, run_id, &v) ? (srv_stream *)(uintptr_t)v : NULL;
}

srv_stream *srv_stream_find(sst_server *s, const char *run_id) {
    pthread_mutex_lock(&s->bmu);
    srv_stream *st = lookup(s, run_id);
    if (st != NULL) {
        st->refs++;
    }
    pthread_mutex_unlock(&s->bmu);
    return st;
}

srv_stream *srv_stream_get(sst_server *s, const char *run_id) {
    srv_stream *st = srv_stream_find(s, run_id);
    if (st != NULL) {
        return st;
    }
    srv_stream *n = sst__calloc(1, sizeof *n);
    if (n == NULL) {
        return NULL;
    }
    snprintf(n->run_id, sizeof n->run_id, "%s", run_id);
    n->refs = 2; /* the list's and the caller's */
    pthread_mutex_lock(&s->bmu);
    st = lookup(s, run_id);
    if (st != NULL) { /* made by another thread meanwhile */
        st->refs++;
        pthread_mutex_unlock(&s->bmu);
        sst__free(n);
        return st;
    }
    if (!sst__map_put(&s->stream_index, n->run_id, (size_t)(uintptr_t)n)) {
        pthread_mutex_unlock(&s->bmu);
        sst__free(n);
        return NULL;
    }
    n->next = s->streams;
    s->streams = n;
    pthread_mutex_unlock(&s->bmu);
    return n;
}

void srv_stream_unref(sst_server *s, srv_stream *st) {
    if (st == NULL) {
        return;
    }
    pthread_mutex_lock(&s->bmu);
    bool last = --st->refs == 0;
    pthread_mutex_unlock(&s->bmu);
    if (last) {
        stream_free(st);
    }
}

uint64_t srv_stream_next_seq(sst_server *s, srv_stream *st) {
    pthread_mutex_lock(&s->bmu);
    uint64_t n = st->next_seq;
    pthread_mutex_unlock(&s->bmu);
    return n;
}

/* Takes the waiters of @p st (under bmu); they are resumed by resume_all. */
static waiter *take_waiters(srv_stream *st) {
    waiter *w = st->waiters;
    st->waiters = NULL;
    return w;
}

static void resume_all(waiter *w) {
    while (w != NULL) {
        waiter *next = w->next;
        MHD_resume_connection(w->conn);
        w = next;
    }
}

static void publish(sst_server *s, srv_stream *st, uint64_t seq, const char *name, char *data,
                    size_t len);

void srv_stream_publish(sst_server *s, srv_stream *st, const char *name, char *data, size_t len) {
    data = srv_lc_out_text(data, &len); /* messages in LangChain's shape too */
    if (s->relay != NULL) {
        if (data != NULL) {
            srv_relay_publish(s, st->run_id, name, data, len);
        }
        sst__free(data);
        return;
    }
    publish(s, st, UINT64_MAX, name, data, len);
}

void srv_stream_publish_at(sst_server *s, srv_stream *st, uint64_t seq, const char *name,
                           char *data, size_t len) {
    publish(s, st, seq, name, data, len);
}

void srv_stream_end(sst_server *s, srv_stream *st, char *result) {
    size_t len = result != NULL ? strlen(result) : 0;
    result = srv_lc_out_text(result, &len);
    if (s->relay != NULL) {
        srv_relay_end(s, st->run_id, result);
        sst__free(result);
        return;
    }
    srv_stream_finish(s, st, result);
}

bool srv_stream_done(sst_server *s, srv_stream *st) {
    pthread_mutex_lock(&s->bmu);
    bool done = st->done;
    pthread_mutex_unlock(&s->bmu);
    return done;
}

size_t srv_streams_open(sst_server *s, char ***ids) {
    *ids = NULL;
    pthread_mutex_lock(&s->bmu);
    size_t n = 0, cap = 0;
    for (srv_stream *st = s->streams; st != NULL; st = st->next) {
        char *id = !st->done ? sst__strndup(st->run_id, strlen(st->run_id)) : NULL;
        if (id == NULL || !sst__grow((void **)ids, &cap, n, sizeof **ids, 8)) {
            sst__free(id);
            continue;
        }
        (*ids)[n++] = id;
    }
    pthread_mutex_unlock(&s->bmu);
    return n;
}

/* Appends an event numbered @p seq (UINT64_MAX: the next number; an event numbered
 * below the next one is a repeat and is dropped). */
static void publish(sst_server *s, srv_stream *st, uint64_t seq, const char *name, char *data,
                    size_t len) {
    char *nm = sst__strndup(name, strlen(name));
    if (nm == NULL || data == NULL) {
        sst__free(nm);
        sst__free(data);
        return;
    }
    pthread_mutex_lock(&s->bmu);
    if (seq != UINT64_MAX && (seq < st->next_seq || st->done)) {
        pthread_mutex_unlock(&s->bmu);
        sst__free(nm);
        sst__free(data);
        return;
    }
    if (seq != UINT64_MAX && seq > st->next_seq) {
        st->next_seq = seq; /* rows before it are gone (purged) */
    }
    if (st->count == st->cap && st->cap < s->o.stream_backlog) {
        size_t cap = st->cap == 0 ? 16 : st->cap * 2;
        cap = cap > s->o.stream_backlog ? s->o.stream_backlog : cap;
        srv_event *ev = sst__malloc(cap * sizeof *ev);
        if (ev != NULL) {
            for (size_t i = 0; i < st->count; i++) {
                ev[i] = st->ev[(st->head + i) % st->cap];
            }
            sst__free(st->ev);
            st->ev = ev;
            st->cap = cap;
            st->head = 0;
        }
    }
    if (st->count == st->cap) { /* full: the oldest event goes */
        if (st->cap == 0) {
            pthread_mutex_unlock(&s->bmu);
            sst__free(nm);
            sst__free(data);
            return;
        }
        srv_event *old = &st->ev[st->head];
        sst__free(old->name);
        sst__free(old->data);
        st->head = (st->head + 1) % st->cap;
        st->count--;
    }
    st->ev[(st->head + st->count) % st->cap] = (srv_event){st->next_seq++, nm, data, len};
    st->count++;
    waiter *w = take_waiters(st);
    pthread_mutex_unlock(&s->bmu);
    resume_all(w);
}

void srv_stream_finish(sst_server *s, srv_stream *st, char *result) {
    pthread_mutex_lock(&s->bmu);
    if (st->done) {
        pthread_mutex_unlock(&s->bmu);
        sst__free(result);
        return;
    }
    st->done = true;
    st->result = result;
    st->done_at = srv_now();
    waiter *w = take_waiters(st);
    pthread_mutex_unlock(&s->bmu);
    resume_all(w);
}

/* A connection waiting for a run's end with no body to send yet (srv_stream_await). */
struct srv_await {
    waiter w;
    srv_stream *st; /* a reference */
};

srv_await *srv_stream_await(sst_server *s, srv_stream *st, struct MHD_Connection *conn,
                            srv_await *a) {
    st = a != NULL ? a->st : st;
    pthread_mutex_lock(&s->bmu);
    if (a == NULL && !st->done && (a = sst__calloc(1, sizeof *a)) != NULL) {
        st->refs++;
        *a = (srv_await){.w = {.conn = conn}, .st = st};
    }
    if (a != NULL && !st->done) {
        /* Resumed by the run's next event or its end (take_waiters), then asked again. */
        a->w.next = st->waiters;
        st->waiters = &a->w;
        MHD_suspend_connection(conn);
        pthread_mutex_unlock(&s->bmu);
        return a;
    }
    pthread_mutex_unlock(&s->bmu);
    srv_await_free(s, a);
    return NULL;
}

void srv_await_free(sst_server *s, srv_await *a) {
    if (a == NULL) {
        return;
    }
    pthread_mutex_lock(&s->bmu);
    for (waiter **p = &a->st->waiters; *p != NULL; p = &(*p)->next) {
        if (*p == &a->w) {
            *p = a->w.next; /* still listed: the connection went away first */
            break;
        }
    }
    pthread_mutex_unlock(&s->bmu);
    srv_stream_unref(s, a->st);
    sst__free(a);
}

void srv_streams_close_all(sst_server *s) {
    pthread_mutex_lock(&s->bmu);
    waiter *all = NULL;
    for (srv_stream *st = s->streams; st != NULL; st = st->next) {
        st->done = true;
        if (st->done_at == 0) {
            st->done_at = srv_now();
        }
        waiter *w = take_waiters(st);
        while (w != NULL) {
            waiter *next = w->next;
            w->next = all;
            all = w;
            w = next;
        }
    }
    pthread_mutex_unlock(&s->bmu);
    resume_all(all);
}

void srv_streams_sweep(sst_server *s) {
    int64_t now = srv_now();
    srv_stream *dead = NULL;
    pthread_mutex_lock(&s->bmu);
    for (srv_stream **p = &s->streams; *p != NULL;) {
        srv_stream *st = *p;
        /* A stream without events (a runs/wait run's) is not kept: a late join reads the
         * run's outcome from the database. */
        if (st->done && st->refs == 1 && (st->count == 0 || now - st->done_at > KEEP_MS)) {
            sst__map_del(&s->stream_index, st->run_id);
            *p = st->next;
            st->next = dead;
            dead = st;
        } else {
            p = &st->next;
        }
    }
    pthread_mutex_unlock(&s->bmu);
    while (dead != NULL) {
        srv_stream *next = dead->next;
        stream_free(dead);
        dead = next;
    }
}

/* Formats the next event to send into c->frame (under bmu); false when there is none. */
static bool next_frame(stream_conn *c) {
    srv_stream *st = c->st;
    uint64_t first = st->next_seq - st->count;
    if (c->next < first) {
        c->next = first; /* older events were dropped from the backlog */
    }
    while (c->next < st->next_seq) {
        const srv_event *e = &st->ev[(st->head + (size_t)(c->next - first)) % st->cap];
        c->next++;
        unsigned bit = event_mode(e->name);
        if (c->modes != 0 && bit != 0 && (c->modes & bit) == 0) {
            continue;
        }
        c->frame.len = 0;
        c->off = 0;
        sst__buf_printf(&c->frame, "event: %s\ndata: ", e->name);
        sst__buf_append(&c->frame, e->data, e->len);
        if (c->ids) {
            sst__buf_printf(&c->frame, "\nid: %llu", (unsigned long long)e->seq);
        }
        sst__buf_append(&c->frame, "\n\n", 2);
        return !c->frame.oom;
    }
    return false;
}

/* The result body into c->frame (under bmu), once. */
static bool result_frame(stream_conn *c) {
    if (c->result_sent || !c->st->done) {
        return false;
    }
    c->result_sent = true;
    c->frame.len = 0;
    c->off = 0;
    const char *r = c->st->result != NULL ? c->st->result : "null";
    if (c->mcp_id[0] != '\0') {
        char *wrapped = srv_mcp_result(c->mcp_id, c->st->result);
        if (wrapped == NULL) {
            return false;
        }
        sst__buf_append(&c->frame, wrapped, strlen(wrapped));
        sst__free(wrapped);
        return !c->frame.oom;
    }
    sst__buf_append(&c->frame, r, strlen(r));
    return !c->frame.oom;
}

/* True when the client closed its end (a read would give end of file). */
static bool peer_gone(struct MHD_Connection *conn) {
    const union MHD_ConnectionInfo *i =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    char b;
    return i != NULL && recv(i->connect_fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

static ssize_t reader(void *cls, uint64_t pos, char *buf, size_t max) {
    SST_UNUSED(pos);
    stream_conn *c = cls;
    size_t n = 0;
    pthread_mutex_lock(&c->s->bmu);
    for (;;) {
        if (c->off < c->frame.len) {
            size_t k = c->frame.len - c->off < max - n ? c->frame.len - c->off : max - n;
            memcpy(buf + n, c->frame.data + c->off, k);
            c->off += k;
            n += k;
            if (n == max) {
                break;
            }
            continue;
        }
        bool more = c->kind == SRV_SEND_EVENTS ? next_frame(c) : result_frame(c);
        if (more) {
            continue;
        }
        if (n > 0) {
            break;
        }
        if (c->st->done && (c->kind == SRV_SEND_EVENTS || c->result_sent)) {
            pthread_mutex_unlock(&c->s->bmu);
            return MHD_CONTENT_READER_END_OF_STREAM;
        }
        if (c->cancel_on_disconnect && peer_gone(c->conn)) {
            pthread_mutex_unlock(&c->s->bmu);
            return MHD_CONTENT_READER_END_WITH_ERROR; /* reader_free cancels the run */
        }
        c->w.conn = c->conn;
        c->w.next = c->st->waiters;
        c->st->waiters = &c->w;
        MHD_suspend_connection(c->conn);
        break;
    }
    pthread_mutex_unlock(&c->s->bmu);
    return (ssize_t)n;
}

static void reader_free(void *cls) {
    stream_conn *c = cls;
    pthread_mutex_lock(&c->s->bmu);
    bool gone_early = c->cancel_on_disconnect && !c->st->done;
    pthread_mutex_unlock(&c->s->bmu);
    if (gone_early) { /* on_disconnect "cancel": the client left before the run ended */
        sst_queue_status status;
        sst_error err = {0};
        if (srv_cancel_run(c->s, c->st->run_id, "interrupt", &status, &err) != SST_OK) {
            srv_log(c->s, "run %s: cancelling on disconnect: %s", c->st->run_id, err.msg);
        }
    }
    sst__buf_free(&c->frame);
    srv_stream_unref(c->s, c->st);
    sst__free(c);
}

int srv_queue_stream_response(srv_request *r, srv_response *res) {
    stream_conn *c = sst__calloc(1, sizeof *c);
    if (c == NULL) {
        srv_stream_unref(r->s, res->stream);
        res->stream = NULL;
        return 0;
    }
    *c = (stream_conn){.s = r->s,
                       .st = res->stream,
                       .conn = r->conn,
                       .kind = res->stream_kind,
                       .next = res->after,
                       .ids = res->ids,
                       .modes = res->modes,
                       .cancel_on_disconnect = res->cancel_on_disconnect};
    memcpy(c->mcp_id, res->mcp_id, sizeof c->mcp_id);
    sst__buf_init(&c->frame);
    res->stream = NULL;
    struct MHD_Response *resp =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, reader, c, reader_free);
    if (resp == NULL) {
        reader_free(c);
        return 0;
    }
    bool sse = c->kind == SRV_SEND_EVENTS;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                            sse ? "text/event-stream" : "application/json");
    if (sse) {
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    }
    if (res->location != NULL) {
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_LOCATION, res->location);
    }
    srv_cors_apply(r->s->cors, r->conn, resp);
    enum MHD_Result rc = MHD_queue_response(r->conn, res->status, resp);
    MHD_destroy_response(resp);
    return rc == MHD_YES;
}

void srv_streams_sweep_all(sst_server *s) {
    pthread_mutex_lock(&s->bmu);
    srv_stream *all = s->streams;
    s->streams = NULL;
    sst__map_free(&s->stream_index);
    s->stream_index = (sst__strmap){0};
    pthread_mutex_unlock(&s->bmu);
    while (all != NULL) {
        srv_stream *next = all->next;
        if (--all->refs == 0) {
            stream_free(all);
        }
        all = next;
    }
}
