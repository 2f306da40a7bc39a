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
#include <unistd.h>

#include "server_int.h"
#include "superstep/json.h"

/* One request's state across libmicrohttpd's calls of the access handler. */
typedef struct conn_ctx {
    srv_request req;
    sst__buf body;
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

/* Queues a response made of @p data (taken, freed with sst_free; may be NULL when len 0). */
static enum MHD_Result send_bytes(struct MHD_Connection *conn, unsigned status, char *data,
                                  size_t len, const char *type) {
    struct MHD_Response *resp =
        len > 0 ? MHD_create_response_from_buffer_with_free_callback(len, data, free_body)
                : MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (resp == NULL) {
        sst_free(data);
        return MHD_NO;
    }
    if (len == 0) {
        sst_free(data);
    }
    if (type != NULL) {
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    }
    enum MHD_Result rc = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return rc;
}

/* Sends @p res (not a stream). */
static enum MHD_Result send_response(struct MHD_Connection *conn, srv_response *res) {
    if (res->status == 204 || (res->json == NULL && res->text == NULL)) {
        return send_bytes(conn, res->status, NULL, 0, NULL);
    }
    if (res->json != NULL) {
        size_t len = 0;
        sst_error err = {0};
        char *text = sst_json_write(res->json, SST_JSON_COMPACT, &len, &err);
        if (text == NULL) {
            static const char oom[] = "{\"detail\":\"out of memory writing the response\"}";
            return send_bytes(conn, 500, sst__strndup(oom, sizeof oom - 1), sizeof oom - 1,
                              "application/json");
        }
        return send_bytes(conn, res->status, text, len, "application/json");
    }
    size_t len = strlen(res->text);
    char *t = res->text;
    res->text = NULL;
    return send_bytes(conn, res->status, t, len, res->type != NULL ? res->type : "text/plain");
}

/* A fixed JSON error, answered before the body was read (401, 413). */
static enum MHD_Result send_error_now(struct MHD_Connection *conn, unsigned status,
                                      const char *msg) {
    srv_response res = {0};
    srv_error(&res, status, "%s", msg);
    enum MHD_Result rc = send_response(conn, &res);
    sst_value_unref(res.json);
    return rc;
}

/* Constant-time comparison of the Authorization header with "Bearer <token>". */
static bool authorized(const sst_server *s, struct MHD_Connection *conn) {
    const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    if (h == NULL || strncmp(h, "Bearer ", 7) != 0) {
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

/* Parses the body, routes, runs the handler and sends its answer. */
static enum MHD_Result dispatch(conn_ctx *c) {
    srv_request *r = &c->req;
    srv_response res = {.status = 200};
    r->body = sst__buf_detach(&c->body, &r->body_len);
    if (r->body_len > 0) {
        sst_error err = {0};
        r->json = sst_json_read(r->body, r->body_len, NULL, &err);
        if (r->json == NULL) {
            srv_error(&res, err.code == SST_ENOMEM ? 500 : 400,
                      "Malformed JSON in request body: %s", err.msg);
        }
    }
    if (res.json == NULL) {
        unsigned status = 404;
        srv_handler h = srv_route(r, &status);
        if (h == NULL) {
            srv_error(&res, status,
                      status == 405 ? "method %s not allowed on %s" : "%s%s not found",
                      status == 405 ? r->method : "", r->url);
        } else {
            h(r, &res);
        }
    }
    enum MHD_Result rc;
    if (res.stream != NULL) {
        rc = srv_queue_stream_response(r, &res) ? MHD_YES : MHD_NO;
    } else {
        rc = send_response(r->conn, &res);
    }
    sst_value_unref(res.json);
    sst_free(res.text);
    return rc;
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
        if (s->token != NULL && strcmp(url, "/ok") != 0 && !authorized(s, conn)) {
            return send_error_now(conn, 401,
                                  "Missing or invalid authorization: send "
                                  "'Authorization: Bearer <token>'");
        }
        const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
        if (cl != NULL && strtoull(cl, NULL, 10) > s->o.max_body_bytes) {
            c->req.too_large = true;
            char msg[128];
            snprintf(msg, sizeof msg, "request body of %s bytes is larger than the limit of %zu",
                     cl, s->o.max_body_bytes);
            return send_error_now(conn, 413, msg);
        }
        return MHD_YES;
    }
    if (*upload_data_size != 0) {
        if (!c->req.too_large && c->body.len + *upload_data_size > s->o.max_body_bytes) {
            c->req.too_large = true;
            sst__buf_free(&c->body);
        }
        if (!c->req.too_large) {
            sst__buf_append(&c->body, upload_data, *upload_data_size);
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (c->req.too_large) {
        char msg[128];
        snprintf(msg, sizeof msg, "request body larger than the limit of %zu bytes",
                 s->o.max_body_bytes);
        return send_error_now(conn, 413, msg);
    }
    if (c->body.oom) {
        return send_error_now(conn, 500, "out of memory reading the request body");
    }
    return dispatch(c);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
    SST_UNUSED(cls);
    SST_UNUSED(conn);
    SST_UNUSED(toe);
    conn_ctx *c = *con_cls;
    if (c == NULL) {
        return;
    }
    sst__buf_free(&c->body);
    sst__free(c->req.body);
    sst__free(c->req.path_copy);
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
        (unsigned)s->o.http_threads, MHD_OPTION_CONNECTION_LIMIT, (unsigned)s->o.max_connections,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)s->o.connection_timeout,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_LISTENING_ADDRESS_REUSE,
        (unsigned)1, MHD_OPTION_END);
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
