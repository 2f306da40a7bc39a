/* SPDX-License-Identifier: MIT */
/*
 * Run streams: the events a run publishes as it goes (SSE frames in the
 * making) and its result, kept for the connections that send them. A
 * connection with nothing to send suspends itself (libmicrohttpd holds no
 * thread for it) and is resumed by the next publish; a stream keeps its last
 * stream_backlog events, so a client that reconnects with Last-Event-ID
 * misses nothing within them. One lock (s->bmu) guards every stream.
 *
 * Waking a suspended connection costs an eventfd write by the publisher and a
 * round of libmicrohttpd's loop (its epoll waits, the reader, one send) per
 * wake. A stream that was woken less than GATHER_US ago is not woken again at
 * once: its events gather, and the gatherer thread (one per server, started on
 * first need) wakes it GATHER_US after its last wake, so a busy stream's events
 * go out several to a send and an idle stream's at once, as a group commit
 * gathers only while a flush is under way. The run's end wakes at once.
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
#include <time.h>

#include "cors.h"
#include "server_int.h"

/* A finished stream is kept this long for late joins. */
#define KEEP_MS 60000
/* A stream is woken at most once in this long while its events keep coming (us). */
#define GATHER_US 1000

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
    int64_t woke_at; /* when its waiters were last woken (mono_us) */
    bool deferred;   /* events wait for the gatherer to wake its waiters */
};

/* The gatherer (under s->bmu): wakes deferred streams GATHER_US after their last wake. */
struct srv_gather {
    pthread_t thread;
    pthread_cond_t cv; /* a stream was deferred, or stop */
    size_t deferred;   /* streams with deferred set */
    bool stop;         /* stopping or stopped: nothing is deferred any more */
    bool joined;
    uint64_t wakes; /* waiter lists woken, at once or gathered */
};

static struct srv_gather *gather_of(sst_server *s);

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
    (void)gather_of(s); /* without it, streams wake at once */
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

srv_stream *srv_stream_retain(sst_server *s, srv_stream *st) {
    pthread_mutex_lock(&s->bmu);
    st->refs++;
    pthread_mutex_unlock(&s->bmu);
    return st;
}

char *srv_stream_result(sst_server *s, srv_stream *st, size_t *len) {
    pthread_mutex_lock(&s->bmu);
    const char *r = st->result != NULL ? st->result : "null";
    *len = strlen(r);
    char *copy = sst__strndup(r, *len);
    pthread_mutex_unlock(&s->bmu);
    return copy;
}

uint64_t srv_stream_next_seq(sst_server *s, srv_stream *st) {
    pthread_mutex_lock(&s->bmu);
    uint64_t n = st->next_seq;
    pthread_mutex_unlock(&s->bmu);
    return n;
}

static int64_t mono_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t gather_us(const sst_server *s) {
    return s->stream_gather_us > 0 ? s->stream_gather_us : GATHER_US;
}

/* Takes the waiters of @p st (under bmu); they are resumed by resume_all. */
static waiter *take_waiters(sst_server *s, srv_stream *st) {
    waiter *w = st->waiters;
    st->waiters = NULL;
    if (st->deferred) {
        st->deferred = false;
        s->gather->deferred--;
    }
    if (w != NULL) {
        st->woke_at = mono_us();
        if (s->gather != NULL) {
            s->gather->wakes++;
        }
    }
    return w;
}

/* take_waiters, adding them to the list *@p all (for one resume_all of many streams). */
static void take_waiters_into(sst_server *s, srv_stream *st, waiter **all) {
    waiter *w = take_waiters(s, st);
    while (w != NULL) {
        waiter *next = w->next;
        w->next = *all;
        *all = w;
        w = next;
    }
}

static void resume_all(waiter *w) {
    while (w != NULL) {
        waiter *next = w->next;
        MHD_resume_connection(w->conn);
        w = next;
    }
}

/* The gatherer's state, made with the first stream (under bmu); NULL when out of memory. */
static struct srv_gather *gather_of(sst_server *s) {
    if (s->gather == NULL && (s->gather = sst__calloc(1, sizeof *s->gather)) != NULL) {
        pthread_condattr_t a;
        pthread_condattr_init(&a);
        pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
        pthread_cond_init(&s->gather->cv, &a);
        pthread_condattr_destroy(&a);
        s->gather->joined = true; /* no thread yet */
    }
    return s->gather;
}

/* Wakes the waiters of every deferred stream whose GATHER_US since its last wake are
 * over; the next such time in *due (INT64_MAX: none). Called and returns under bmu. */
static void wake_due(sst_server *s, int64_t *due) {
    waiter *all = NULL;
    int64_t now = mono_us(), win = gather_us(s);
    *due = INT64_MAX;
    for (srv_stream *st = s->streams; st != NULL && s->gather->deferred > 0; st = st->next) {
        if (!st->deferred) {
            continue;
        }
        if (now - st->woke_at < win) {
            *due = st->woke_at + win < *due ? st->woke_at + win : *due;
            continue;
        }
        take_waiters_into(s, st, &all);
    }
    if (all != NULL) {
        pthread_mutex_unlock(&s->bmu);
        resume_all(all);
        pthread_mutex_lock(&s->bmu);
        *due = 0; /* look again: the list may have changed meanwhile */
    }
}

static void *gather_main(void *arg) {
    sst_server *s = arg;
    struct srv_gather *g = s->gather;
    pthread_mutex_lock(&s->bmu);
    while (!g->stop) {
        int64_t due;
        wake_due(s, &due);
        if (due == 0 || g->stop) {
            continue;
        }
        if (g->deferred == 0) {
            pthread_cond_wait(&g->cv, &s->bmu);
            continue;
        }
        struct timespec ts = {.tv_sec = (time_t)(due / 1000000),
                              .tv_nsec = (long)(due % 1000000) * 1000};
        pthread_cond_timedwait(&g->cv, &s->bmu, &ts);
    }
    pthread_mutex_unlock(&s->bmu);
    return NULL;
}

/* Leaves @p st's waiters to the gatherer (under bmu; @p st has waiters, not deferred);
 * false when there is none to be had (stopping, or no thread): wake them now. */
static bool defer_wake(sst_server *s, srv_stream *st) {
    struct srv_gather *g = s->gather;
    if (g == NULL || g->stop) {
        return false;
    }
    if (g->joined) { /* the first deferral starts the thread */
        if (pthread_create(&g->thread, NULL, gather_main, s) != 0) {
            return false;
        }
        g->joined = false;
    }
    st->deferred = true;
    g->deferred++;
    pthread_cond_signal(&g->cv);
    return true;
}

/* Stops the gatherer and wakes what it held (under bmu, which it releases and takes back). */
static void gather_stop(sst_server *s) {
    struct srv_gather *g = s->gather;
    if (g == NULL) {
        return;
    }
    g->stop = true;
    pthread_cond_signal(&g->cv);
    if (!g->joined) {
        g->joined = true;
        pthread_mutex_unlock(&s->bmu);
        pthread_join(g->thread, NULL);
        pthread_mutex_lock(&s->bmu);
    }
}

uint64_t srv_stream_wakes(sst_server *s) {
    pthread_mutex_lock(&s->bmu);
    uint64_t n = s->gather != NULL ? s->gather->wakes : 0;
    pthread_mutex_unlock(&s->bmu);
    return n;
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
    waiter *w = NULL;
    if (st->waiters != NULL && !st->deferred &&
        (st->done || mono_us() - st->woke_at >= gather_us(s) || !defer_wake(s, st))) {
        w = take_waiters(s, st); /* idle (or ended): at once */
    }
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
    waiter *w = take_waiters(s, st);
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
        take_waiters_into(s, st, &all);
    }
    gather_stop(s); /* nothing is deferred now; none will be */
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
            SST_ASSERT(!st->deferred); /* an end wakes at once */
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
    gather_stop(s);
    struct srv_gather *g = s->gather;
    s->gather = NULL;
    pthread_mutex_unlock(&s->bmu);
    if (g != NULL) {
        pthread_cond_destroy(&g->cv);
        sst__free(g);
    }
    while (all != NULL) {
        srv_stream *next = all->next;
        if (--all->refs == 0) {
            stream_free(all);
        }
        all = next;
    }
}
