/* SPDX-License-Identifier: MIT */
/*
 * HTTP through libmicrohttpd: the daemon (a pool of epoll threads, suspend
 * and resume for streams), reading a request's body within the size limit,
 * the bearer token check, handing the request to its route and sending the
 * handler's response. Nothing here parses HTTP: libmicrohttpd does.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "auth.h"
#include "cors.h"
#include "server_int.h"
#include "superstep/json.h"

/*
 * One TCP connection, for the header deadline: libmicrohttpd restarts a connection's idle
 * timer at every byte, so a client that sends its headers one byte at a time (slowloris)
 * would keep the connection for ever. A connection whose request has not begun (its
 * headers complete) within connection_timeout seconds of its start, or of the end of its
 * previous request, is shut down by srv_http_sweep (the keeper thread, every second).
 */
typedef struct tcp_conn {
    struct tcp_conn *next;
    int fd;
    int64_t since; /* ms: connected, or its last request ended */
    bool in_request;
    bool shut;
} tcp_conn;

/*
 * A connection past --max-connections. libmicrohttpd itself, at its own limit, stops
 * accepting, so the clients past it would wait in the kernel's backlog until they give
 * up; its limit is set above ours (SRV_CONN_RESERVE more) so that each connection past ours
 * is accepted, answered 503 at once and closed, and the backlog drains as fast as it fills.
 *
 * Such a connection's socket context is &k_over. Process-wide on purpose, and no state:
 * only its address is used, as a mark that no tracked tcp_conn (each its own allocation)
 * can have; nothing reads or writes its fields, so every server of the process may compare
 * against it from any thread without a lock. Its count lives in the server (n_tcp, hmu).
 */
static tcp_conn k_over;
#define SRV_CONN_RESERVE 64

/* One request's state across libmicrohttpd's calls of the access handler. */
typedef struct conn_ctx {
    srv_request req;
    sst__buf body;
    unsigned deny; /* 401 or 413: refused, the body is read and dropped */
    uint64_t seen; /* body bytes received */
    bool answered; /* a response is queued */
    /* SRV_SEND_AWAIT: the status to answer with once the run ends, and the wait. */
    unsigned await_status;
    srv_stream *await_st; /* a reference, until the wait is registered or answered */
    srv_await *await;
    /* A result awaited (runs/wait, join): its stream (a reference until answered), whose
     * result body is the answer, and the answer's Content-Location. */
    srv_stream *result_st;
    char location[160];
} conn_ctx;

const char *srv_query(const srv_request *r, const char *key) {
    return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, key);
}

const char *srv_header(const srv_request *r, const char *key) {
    return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, key);
}

void srv_json(srv_response *res, unsigned status, sst_value *body) {
    sst_value_unref(res->json);
    res->status = status;
    res->json = body != NULL ? body : sst_null();
}

unsigned srv_error(srv_response *res, unsigned status, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sst_error err = {0};
    sst_value *o = sst__set_take(sst_object_empty(), "detail", sst_string_new(msg, &err), &err);
    srv_json(res, status, o);
    return status;
}

unsigned srv_fail(srv_response *res, const sst_error *err) {
    unsigned status;
    switch (err->code) {
        case SST_ENOTFOUND:
            status = 404;
            break;
        case SST_EINVAL:
        case SST_EPARSE:
        case SST_EUTF8:
        case SST_ETYPE:
        case SST_ERANGE:
            status = 400;
            break;
        case SST_ELIMIT:
            status = 413;
            break;
        case SST_EBUSY:
        case SST_ECONFLICT:
            status = 409;
            break;
        default:
            status = 500;
    }
    return srv_error(res, status, "%s", err->msg[0] != '\0' ? err->msg : sst_strerror(err->code));
}

void srv_answer(srv_response *res, sst_value *body, const sst_error *err) {
    if (body == NULL) {
        srv_fail(res, err);
        return;
    }
    srv_json(res, 200, body);
}

void srv_no_content(srv_response *res) {
    sst_value_unref(res->json);
    res->json = NULL;
    res->status = 204;
}

bool srv_body_object(srv_request *r, srv_response *res) {
    if (r->json == NULL) {
        r->json = sst_object_empty();
    }
    if (!sst_is_object(r->json)) {
        srv_error(res, 400, "the request body must be a JSON object, got %s",
                  sst_type_name(sst_value_type(r->json)));
        return false;
    }
    return true;
}

static void free_body(void *p) {
    sst_free(p);
}

/* The page's files: always revalidated, never sniffed, and a policy that lets the page
 * run only its own scripts and reach only this server. */
static void add_web_headers(struct MHD_Response *resp) {
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(
        resp, "Content-Security-Policy",
        "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; connect-src 'self'; base-uri 'none'; "
        "form-action 'none'; frame-ancestors 'none'");
}

/* Queues @p resp (NULL: MHD_NO) with its headers: CORS's, the content @p type, an Allow header
 * when @p allow is set (a 405), Connection: close when @p close, the page's when @p web. */
static enum MHD_Result queue(const sst_server *s, struct MHD_Connection *conn, unsigned status,
                             struct MHD_Response *resp, const char *type, const char *allow,
                             bool close, bool web) {
    if (resp == NULL) {
        return MHD_NO;
    }
    srv_cors_apply(s->cors, conn, resp);
    if (type != NULL) {
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    }
    if (allow != NULL) {
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
    }
    if (close) {
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    }
    if (web) {
        add_web_headers(resp);
    }
    enum MHD_Result rc = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return rc;
}

/* Queues a response made of @p data (taken, freed with sst_free; may be NULL when len 0),
 * with the headers queue() adds. */
static enum MHD_Result send_bytes(const sst_server *s, struct MHD_Connection *conn, unsigned status,
                                  char *data, size_t len, const char *type, const char *allow,
                                  bool close, bool web) {
    struct MHD_Response *resp =
        len > 0 ? MHD_create_response_from_buffer_with_free_callback(len, data, free_body)
                : MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (resp == NULL || len == 0) {
        sst_free(data);
    }
    return queue(s, conn, status, resp, type, allow, close, web);
}

/* Sends the static body of a page file (res->bytes). */
static enum MHD_Result send_static(const sst_server *s, struct MHD_Connection *conn,
                                   const srv_response *res) {
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(res->bytes_len, (void *)res->bytes, MHD_RESPMEM_PERSISTENT);
    return queue(s, conn, res->status, resp, res->type, NULL, false, true);
}

/* Sends @p res (not a stream); @p allow: the Allow header of a 405. */
static enum MHD_Result send_response(const sst_server *s, struct MHD_Connection *conn,
                                     srv_response *res, const char *allow) {
    bool close = res->status == 413;
    if (res->bytes != NULL && res->json == NULL) {
        return send_static(s, conn, res);
    }
    if (res->status == 204 || (res->json == NULL && res->text == NULL)) {
        return send_bytes(s, conn, res->status, NULL, 0, NULL, NULL, close, false);
    }
    if (res->json != NULL) {
        size_t len = 0;
        sst_error err = {0};
        char *text = sst_json_write(res->json, SST_JSON_COMPACT, &len, &err);
        if (text == NULL) {
            static const char oom[] = "{\"detail\":\"out of memory writing the response\"}";
            return send_bytes(s, conn, 500, sst__strndup(oom, sizeof oom - 1), sizeof oom - 1,
                              "application/json", NULL, true, false);
        }
        return send_bytes(s, conn, res->status, text, len, "application/json", allow, close, false);
    }
    size_t len = res->text_len != 0 ? res->text_len : strlen(res->text);
    char *t = res->text;
    res->text = NULL;
    return send_bytes(s, conn, res->status, t, len, res->type != NULL ? res->type : "text/plain",
                      allow, close, res->web);
}

/* A fixed JSON error, answered before the body was read (401, 413). */
static enum MHD_Result send_error_now(const sst_server *s, struct MHD_Connection *conn,
                                      unsigned status, const char *msg) {
    srv_response res = {0};
    srv_error(&res, status, "%s", msg);
    enum MHD_Result rc = send_response(s, conn, &res, NULL);
    sst_value_unref(res.json);
    return rc;
}

/* Constant-time comparison of the Authorization header with "Bearer <token>". */
static bool authorized(const sst_server *s, struct MHD_Connection *conn) {
    const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0) {
        return false;
    }
    const char *given = h + 7;
    size_t n = strlen(s->token), m = strlen(given);
    unsigned char diff = (unsigned char)(n != m);
    for (size_t i = 0; i < n; i++) {
        diff |= (unsigned char)(s->token[i] ^ (i < m ? given[i] : 0));
    }
    return diff == 0;
}

/* Answers with the result body of c->result_st's ended run (one response of known length). */
static enum MHD_Result send_result(conn_ctx *c, unsigned status) {
    sst_server *s = c->req.s;
    size_t len = 0;
    char *body = srv_stream_result(s, c->result_st, &len);
    srv_stream_unref(s, c->result_st);
    c->result_st = NULL;
    if (body == NULL) {
        return send_error_now(s, c->req.conn, 500, "out of memory writing the response");
    }
    struct MHD_Response *resp =
        MHD_create_response_from_buffer_with_free_callback(len, body, free_body);
    if (resp == NULL) {
        sst_free(body);
        return MHD_NO;
    }
    if (c->location[0] != '\0') {
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_LOCATION, c->location);
    }
    return queue(s, c->req.conn, status, resp, "application/json", NULL, false, false);
}

/*
 * SRV_SEND_AWAIT: answers with the status once the run has ended; until then the
 * connection is suspended (no HTTP thread waits) and this runs again when it is resumed.
 */
static enum MHD_Result await_end(conn_ctx *c) {
    sst_server *s = c->req.s;
    if (c->await_st != NULL) {
        c->await = srv_stream_await(s, c->await_st, c->req.conn, NULL);
        srv_stream_unref(s, c->await_st); /* the wait holds its own reference */
        c->await_st = NULL;
    } else {
        c->await = srv_stream_await(s, NULL, c->req.conn, c->await);
    }
    if (c->await != NULL) {
        return MHD_YES;
    }
    unsigned status = c->await_status;
    c->await_status = 0;
    if (c->result_st != NULL) {
        return send_result(c, status);
    }
    srv_response res = {.status = status};
    return send_response(s, c->req.conn, &res, NULL);
}

/* Parses the body, routes, runs the handler and sends its answer. */
static enum MHD_Result dispatch(conn_ctx *c) {
    srv_request *r = &c->req;
    srv_response res = {.status = 200};
    char allow[64] = "";
    r->body = sst__buf_detach(&c->body, &r->body_len);
    /* A body on GET or HEAD means nothing here: it is not read (RFC 9110). */
    bool reads_body = strcmp(r->method, "GET") != 0 && strcmp(r->method, "HEAD") != 0;
    if (r->body_len > 0 && reads_body) {
        sst_error err = {0};
        r->json = sst_json_read(r->body, r->body_len, NULL, &err);
        if (r->json == NULL) {
            srv_error(&res, err.code == SST_ENOMEM ? 500 : 400,
                      "Malformed JSON in request body: %s", err.msg);
        }
    }
    /* The store's items are the user's data, never messages to reshape; nor is what a
     * custom route (http.app, tried first: it may override the API's) takes and answers. */
    bool lc = strncmp(r->url, "/store/", 7) != 0;
    if (res.json == NULL && srv_app_dispatch(r, &res)) {
        lc = false;
    } else if (res.json == NULL) {
        if (lc) {
            srv_lc_in(&r->json);
        }
        unsigned status = 404;
        srv_handler h = srv_route(r, &status);
        if (h == NULL && status == 405) {
            srv_error(&res, 405, "method %s not allowed on %s (allowed: %s)", r->method, r->url,
                      srv_route_allowed(r, allow, sizeof allow));
        } else if (h == NULL) {
            srv_error(&res, status, "%s not found", r->url);
        } else {
            h(r, &res);
        }
    }
    if (lc && res.json != NULL && res.status < 300) {
        res.json = srv_lc_out(res.json);
    }
    enum MHD_Result rc;
    if (res.stream != NULL && res.stream_kind == SRV_SEND_RESULT && !res.cancel_on_disconnect &&
        res.mcp_id[0] == '\0' && res.status != 0) {
        /* runs/wait, join: no response until the run ends, then its result in one response
         * of known length (one send; a chunked one sent its headers, the body and the last
         * chunk apart: two sends more per run, issue 37). */
        c->await_status = res.status;
        c->await_st = res.stream;
        c->result_st = srv_stream_retain(r->s, res.stream);
        snprintf(c->location, sizeof c->location, "%s", res.location != NULL ? res.location : "");
        rc = await_end(c);
    } else if (res.stream != NULL && res.stream_kind == SRV_SEND_AWAIT) {
        c->await_status = res.status;
        c->await_st = res.stream;
        rc = await_end(c);
    } else if (res.stream != NULL) {
        rc = srv_queue_stream_response(r, &res) ? MHD_YES : MHD_NO;
    } else {
        rc = send_response(r->s, r->conn, &res, allow[0] != '\0' ? allow : NULL);
    }
    sst_value_unref(res.json);
    sst_free(res.text);
    return rc;
}

/* The tcp_conn of @p conn, or NULL. */
static tcp_conn *tcp_of(struct MHD_Connection *conn) {
    const union MHD_ConnectionInfo *i =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return i != NULL ? i->socket_context : NULL;
}

/* Marks the connection's request as begun (true) or ended (false). */
static void tcp_mark(sst_server *s, struct MHD_Connection *conn, bool in_request) {
    tcp_conn *t = tcp_of(conn);
    if (t != NULL && t != &k_over) {
        pthread_mutex_lock(&s->hmu);
        t->in_request = in_request;
        t->since = srv_now();
        pthread_mutex_unlock(&s->hmu);
    }
}

/*
 * Answers a connection past the limit with a 503 before it sends anything, and shuts it
 * down: libmicrohttpd then sees its end and closes it (the access handler refuses a request
 * that came first). What the client sent is read and dropped first, so that closing does
 * not reset the connection before the client reads the answer.
 */
static void refuse_connection(const sst_server *s, int fd) {
    char body[200], msg[400];
    int bn = snprintf(body, sizeof body,
                      "{\"detail\":\"too many connections: the server's limit of %u "
                      "(--max-connections) is reached; try again later\"}",
                      s->o.max_connections);
    int n = snprintf(msg, sizeof msg,
                     "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                     "Content-Length: %d\r\nConnection: close\r\nRetry-After: 1\r\n\r\n%s",
                     bn, body);
    char drop[4096];
    for (int k = 0; k < 16 && recv(fd, drop, sizeof drop, MSG_DONTWAIT) > 0; k++) {
    }
    if (n > 0 && (size_t)n < sizeof msg) {
        (void)send(fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    shutdown(fd, SHUT_RDWR);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **ctx,
                          enum MHD_ConnectionNotificationCode toe) {
    sst_server *s = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *i =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        pthread_mutex_lock(&s->hmu);
        bool over = s->n_tcp >= s->o.max_connections;
        s->n_tcp += over ? 0 : 1;
        pthread_mutex_unlock(&s->hmu);
        if (over) {
            if (i != NULL) {
                refuse_connection(s, i->connect_fd);
            }
            *ctx = &k_over;
            return;
        }
        tcp_conn *t = i != NULL ? sst__calloc(1, sizeof *t) : NULL;
        pthread_mutex_lock(&s->hmu);
        if (t != NULL) {
            t->fd = i->connect_fd;
            t->since = srv_now();
            t->next = s->tcp;
            s->tcp = t;
        } else {
            s->n_tcp--; /* not tracked: not counted either */
        }
        pthread_mutex_unlock(&s->hmu);
        *ctx = t;
        return;
    }
    tcp_conn *t = *ctx;
    if (t == NULL || t == &k_over) {
        *ctx = NULL;
        return;
    }
    pthread_mutex_lock(&s->hmu);
    s->n_tcp--;
    for (tcp_conn **p = &s->tcp; *p != NULL; p = &(*p)->next) {
        if (*p == t) {
            *p = t->next;
            break;
        }
    }
    pthread_mutex_unlock(&s->hmu);
    sst__free(t);
    *ctx = NULL;
}

void srv_http_sweep(sst_server *s) {
    int64_t limit = srv_now() - (int64_t)s->o.connection_timeout * 1000;
    pthread_mutex_lock(&s->hmu);
    for (tcp_conn *t = s->tcp; t != NULL; t = t->next) {
        if (!t->in_request && !t->shut && t->since < limit) {
            /* libmicrohttpd owns the socket: shut it down (it sees the end and closes it) */
            shutdown(t->fd, SHUT_RDWR);
            t->shut = true;
        }
    }
    pthread_mutex_unlock(&s->hmu);
}

/* The most body bytes read (and dropped) to answer a refused request cleanly: the client
 * gets the answer after sending its body. Past it the answer goes at once and the
 * connection closes (a client still sending then sees its connection reset). */
static uint64_t drain_cap(const sst_server *s) {
    uint64_t cap = (uint64_t)s->o.max_body_bytes * 4;
    return cap > ((uint64_t)64 << 20) ? cap : (uint64_t)64 << 20;
}

/* The answer of a refused request (its status in c->deny). */
static enum MHD_Result send_denied(conn_ctx *c) {
    const sst_server *s = c->req.s;
    char msg[160];
    if (c->deny == 401) {
        snprintf(msg, sizeof msg,
                 "Missing or invalid authorization: send 'Authorization: Bearer "
                 "<token>'");
    } else {
        snprintf(msg, sizeof msg, "request body larger than the limit of %zu bytes",
                 s->o.max_body_bytes);
    }
    c->answered = true;
    return send_error_now(s, c->req.conn, c->deny, msg);
}

/* The first call for a request: the token and the announced body size. */
static enum MHD_Result begin(sst_server *s, conn_ctx *c, const char *url) {
    struct MHD_Connection *conn = c->req.conn;
    if (tcp_of(conn) == &k_over) {
        return MHD_NO; /* answered 503 when it connected */
    }
    /* A browser's preflight carries no token: it is answered before the token check. */
    int queued = MHD_NO;
    if (srv_cors_preflight(s->cors, conn, c->req.method, &queued)) {
        c->answered = true;
        return (enum MHD_Result)queued;
    }
    if (s->token != NULL && !srv_route_open(c->req.method, url) && !authorized(s, conn)) {
        c->deny = 401;
    }
    const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
    uint64_t len = cl != NULL ? strtoull(cl, NULL, 10) : 0;
    if (c->deny == 0 && len > s->o.max_body_bytes) {
        c->deny = 413;
    }
    if (c->deny != 0 && len > drain_cap(s)) {
        return send_denied(c); /* too much to read: answer now and close */
    }
    return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls) {
    SST_UNUSED(version);
    sst_server *s = cls;
    conn_ctx *c = *con_cls;
    if (c == NULL) {
        if ((c = sst__calloc(1, sizeof *c)) == NULL) {
            return MHD_NO;
        }
        c->req = (srv_request){.s = s, .conn = conn, .method = method, .url = url};
        sst__buf_init(&c->body);
        *con_cls = c;
        tcp_mark(s, conn, true);
        return begin(s, c, url);
    }
    if (*upload_data_size != 0) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        if (c->answered) {
            return MHD_YES; /* the rest goes with the connection */
        }
        c->seen += n;
        if (c->deny == 0 && c->body.len + n > s->o.max_body_bytes) {
            c->deny = 413; /* a body without Content-Length that grew past the limit */
            sst__buf_free(&c->body);
        }
        if (c->deny != 0) {
            return c->seen > drain_cap(s) ? send_denied(c) : MHD_YES;
        }
        sst__buf_append(&c->body, upload_data, n);
        return MHD_YES;
    }
    if (c->answered) {
        return MHD_YES;
    }
    if (c->await_status != 0) {
        return await_end(c); /* resumed: has the run ended? */
    }
    if (c->deny != 0) {
        return send_denied(c);
    }
    if (c->body.oom) {
        return send_error_now(s, conn, 500, "out of memory reading the request body");
    }
    return dispatch(c);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
    SST_UNUSED(toe);
    conn_ctx *c = *con_cls;
    if (c == NULL) {
        return;
    }
    tcp_mark(cls, conn, false);
    srv_await_free(cls, c->await);
    srv_stream_unref(cls, c->result_st);
    sst__buf_free(&c->body);
    sst__free(c->req.body);
    sst__free(c->req.path_copy);
    srv_auth_release(&c->req);
    sst_value_unref(c->req.json);
    sst__free(c);
    *con_cls = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap) {
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    line[strcspn(line, "\n")] = '\0';
    srv_log(cls, "http: %s", line);
}

/* The listening address of host:port, in @p out; false when the host cannot be resolved. */
static bool resolve(const char *host, unsigned port, struct sockaddr_storage *out, int *family) {
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICSERV | AI_PASSIVE};
    char service[16];
    snprintf(service, sizeof service, "%u", port);
    struct addrinfo *ai = NULL;
    if (getaddrinfo(host, service, &hints, &ai) != 0 || ai == NULL) {
        return false;
    }
    memcpy(out, ai->ai_addr, ai->ai_addrlen);
    *family = ai->ai_family;
    freeaddrinfo(ai);
    return true;
}

sst_code srv_http_start(sst_server *s, sst_error *err) {
    if (s->cors == NULL && (s->cors = srv_cors_new(NULL, NULL, err)) == NULL) {
        return sst__code(err);
    }
    struct sockaddr_storage addr;
    int family = AF_INET;
    if (!resolve(s->host, s->o.port, &addr, &family)) {
        return sst__error(err, SST_EINVAL, "serve: cannot resolve the host '%s'", s->host);
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ERROR_LOG | (family == AF_INET6 ? MHD_USE_IPv6 : 0);
    s->mhd = MHD_start_daemon(
        flags, (uint16_t)s->o.port, NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log,
        s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr, MHD_OPTION_THREAD_POOL_SIZE,
        (unsigned)s->o.http_threads, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)(s->o.max_connections + SRV_CONN_RESERVE), MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)s->o.connection_timeout, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, MHD_OPTION_END);
    if (s->mhd == NULL) {
        return sst__error(err, SST_EIO, "serve: cannot listen on %s:%u (in use, or not allowed)",
                          s->host, s->o.port);
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info != NULL ? info->port : s->o.port;
    return SST_OK;
}

void srv_http_quiesce(sst_server *s) {
    if (s->mhd != NULL) {
        MHD_socket fd = MHD_quiesce_daemon(s->mhd);
        if (fd != MHD_INVALID_SOCKET) {
            close(fd);
        }
    }
}

void srv_http_stop(sst_server *s) {
    if (s->mhd != NULL) {
        MHD_stop_daemon(s->mhd);
        s->mhd = NULL;
    }
}
