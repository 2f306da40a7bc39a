/* SPDX-License-Identifier: MIT */
/*
 * CORS: which browser origins may call the API, as langgraph.json's "http.cors" says
 * (LangGraph's CorsConfig: allow_origins, allow_origin_regex, allow_methods,
 * allow_headers, allow_credentials, expose_headers, max_age), answered as LangGraph's
 * Python server (Starlette's CORSMiddleware) answers: a preflight OPTIONS gets the rules
 * or a 400 naming what it asked for that is not allowed; every other response to an
 * allowed origin carries Access-Control-Allow-Origin (and the rest). Without "http.cors"
 * only loopback origins (http://localhost:5173, http://127.0.0.1:3000, ...) are allowed:
 * a page on any other site the user visits cannot drive the local server.
 */
#include <microhttpd.h>
#include <regex.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cors.h"

#define ALL_METHODS "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT"
/* The SDK reads a stream's run id from Content-Location: always exposed. */
#define ALWAYS_EXPOSED "Content-Location"

struct srv_cors {
    char *origins; /* allowed origins, ", "-joined; NULL: none listed */
    bool any_origin;
    bool loopback; /* the default: loopback origins only */
    bool has_regex;
    regex_t regex;
    char *methods; /* ", "-joined, or NULL: any */
    char *headers; /* ", "-joined, or NULL: any (the requested ones are echoed) */
    char *expose;  /* ", "-joined */
    bool credentials;
    long max_age;
};

/* True when the token @p tok (@p n bytes) is in the ", "-joined @p list (case-insensitive). */
static bool in_list(const char *list, const char *tok, size_t n) {
    for (const char *p = list; p != NULL && *p != '\0';) {
        p += strspn(p, ", \t");
        size_t k = strcspn(p, ",");
        while (k > 0 && (p[k - 1] == ' ' || p[k - 1] == '\t')) {
            k--;
        }
        if (k == n && k > 0 && strncasecmp(p, tok, n) == 0) {
            return true;
        }
        p += strcspn(p, ",");
    }
    return false;
}

/* True for http(s)://localhost, 127.0.0.1 or [::1], with or without a port. */
static bool is_loopback(const char *origin) {
    const char *p = origin;
    if (strncmp(p, "http://", 7) == 0) {
        p += 7;
    } else if (strncmp(p, "https://", 8) == 0) {
        p += 8;
    } else {
        return false;
    }
    static const char *const hosts[] = {"localhost", "127.0.0.1", "[::1]"};
    for (size_t i = 0; i < sizeof hosts / sizeof hosts[0]; i++) {
        size_t n = strlen(hosts[i]);
        if (strncmp(p, hosts[i], n) != 0) {
            continue;
        }
        const char *q = p + n;
        if (*q == '\0') {
            return true;
        }
        if (*q != ':' || q[1] == '\0') {
            return false;
        }
        return strspn(q + 1, "0123456789") == strlen(q + 1) && strlen(q + 1) <= 5;
    }
    return false;
}

static bool origin_allowed(const srv_cors *c, const char *origin) {
    if (c->any_origin) {
        return true;
    }
    if (c->loopback && is_loopback(origin)) {
        return true;
    }
    if (c->origins != NULL && strchr(origin, ',') == NULL &&
        in_list(c->origins, origin, strlen(origin))) {
        return true;
    }
    return c->has_regex && regexec(&c->regex, origin, 0, NULL, 0) == 0;
}

/* The strings of list @p v joined with ", " (new) into *out; false after an error naming
 * @p name. */
static bool joined(const sst_value *v, const char *file, const char *name, char **out,
                   sst_error *err) {
    if (!sst_is_array(v)) {
        sst__error(err, SST_EINVAL, "%s: http.cors.%s must be a list of strings", file, name);
        return false;
    }
    sst__buf b;
    sst__buf_init(&b);
    for (size_t i = 0; i < sst_array_len(v); i++) {
        const sst_value *s = sst_array_get(v, i);
        const char *t = sst_is_string(s) ? sst_string_cstr(s) : NULL;
        if (t == NULL || t[0] == '\0' || strpbrk(t, ",\r\n") != NULL) {
            sst__buf_free(&b);
            sst__error(err, SST_EINVAL,
                       "%s: http.cors.%s[%zu] must be a non-empty string without commas or "
                       "line breaks",
                       file, name, i);
            return false;
        }
        sst__buf_printf(&b, "%s%s", i > 0 ? ", " : "", t);
    }
    *out = sst__buf_detach(&b, NULL);
    if (*out == NULL) {
        sst__enomem(err);
        return false;
    }
    return true;
}

static bool is_star(const char *list) {
    return list != NULL && in_list(list, "*", 1);
}

static bool configure(srv_cors *c, const sst_value *conf, const char *file, sst_error *err) {
    static const char *const known[] = {
        "allow_origins",     "allow_origin_regex", "allow_methods", "allow_headers",
        "allow_credentials", "expose_headers",     "max_age",       NULL};
    if (!sst_is_object(conf)) {
        sst__error(err, SST_EINVAL, "%s: http.cors must be an object", file);
        return false;
    }
    for (size_t i = 0; i < sst_object_len(conf); i++) {
        const char *k = sst_string_cstr(sst_object_key_at(conf, i));
        bool ok = false;
        for (size_t j = 0; known[j] != NULL && !ok; j++) {
            ok = strcmp(k, known[j]) == 0;
        }
        if (!ok) {
            sst__error(err, SST_EINVAL,
                       "%s: unknown member http.cors.%s (known: allow_origins, "
                       "allow_origin_regex, allow_methods, allow_headers, allow_credentials, "
                       "expose_headers, max_age)",
                       file, k);
            return false;
        }
    }
    const sst_value *v = sst_object_get(conf, "allow_origins");
    if (v != NULL && !joined(v, file, "allow_origins", &c->origins, err)) {
        return false;
    }
    c->any_origin = is_star(c->origins);
    if ((v = sst_object_get(conf, "allow_origin_regex")) != NULL) {
        if (!sst_is_string(v)) {
            sst__error(err, SST_EINVAL, "%s: http.cors.allow_origin_regex must be a string", file);
            return false;
        }
        /* Python's re.fullmatch: the whole origin matches. */
        sst__buf b;
        sst__buf_init(&b);
        sst__buf_printf(&b, "^(%s)$", sst_string_cstr(v));
        char *re = sst__buf_detach(&b, NULL);
        int rc = re != NULL ? regcomp(&c->regex, re, REG_EXTENDED | REG_NOSUB) : REG_ESPACE;
        sst__free(re);
        if (rc != 0) {
            sst__error(err, SST_EINVAL,
                       "%s: http.cors.allow_origin_regex is not a POSIX extended regular "
                       "expression",
                       file);
            return false;
        }
        c->has_regex = true;
    }
    if ((v = sst_object_get(conf, "allow_methods")) != NULL &&
        !joined(v, file, "allow_methods", &c->methods, err)) {
        return false;
    }
    if ((v = sst_object_get(conf, "allow_headers")) != NULL &&
        !joined(v, file, "allow_headers", &c->headers, err)) {
        return false;
    }
    char *expose = NULL;
    if ((v = sst_object_get(conf, "expose_headers")) != NULL &&
        !joined(v, file, "expose_headers", &expose, err)) {
        return false;
    }
    if (expose != NULL && expose[0] != '\0') {
        sst__buf b;
        sst__buf_init(&b);
        sst__buf_printf(&b, "%s, %s", ALWAYS_EXPOSED, expose);
        sst__free(c->expose);
        c->expose = sst__buf_detach(&b, NULL);
    }
    sst__free(expose);
    if ((v = sst_object_get(conf, "allow_credentials")) != NULL) {
        if (!sst_is_bool(v)) {
            sst__error(err, SST_EINVAL, "%s: http.cors.allow_credentials must be true or false",
                       file);
            return false;
        }
        c->credentials = sst_bool_value(v);
    }
    if ((v = sst_object_get(conf, "max_age")) != NULL) {
        if (!sst_is_int(v) || sst_int_value(v) < 0 || sst_int_value(v) > 86400 * 365) {
            sst__error(err, SST_EINVAL,
                       "%s: http.cors.max_age must be a whole number of seconds, 0 or more", file);
            return false;
        }
        c->max_age = (long)sst_int_value(v);
    }
    if (c->expose == NULL) {
        sst__enomem(err);
        return false;
    }
    return true;
}

srv_cors *srv_cors_new(const sst_value *conf, const char *file, sst_error *err) {
    srv_cors *c = sst__calloc(1, sizeof *c);
    if (c == NULL) {
        sst__enomem(err);
        return NULL;
    }
    c->max_age = 600;
    c->expose = sst__strndup(ALWAYS_EXPOSED, strlen(ALWAYS_EXPOSED));
    if (conf == NULL) {
        c->loopback = true;
        if (c->expose == NULL) {
            sst__enomem(err);
            srv_cors_free(c);
            return NULL;
        }
        return c;
    }
    if (!configure(c, conf, file, err)) {
        srv_cors_free(c);
        return NULL;
    }
    return c;
}

void srv_cors_free(srv_cors *c) {
    if (c == NULL) {
        return;
    }
    if (c->has_regex) {
        regfree(&c->regex);
    }
    sst__free(c->origins);
    sst__free(c->methods);
    sst__free(c->headers);
    sst__free(c->expose);
    sst__free(c);
}

/* Access-Control-Allow-Origin (and Vary, and -Credentials) for an allowed @p origin. */
static void add_origin(const srv_cors *c, struct MHD_Response *resp, const char *origin) {
    bool echo = !c->any_origin || c->credentials;
    MHD_add_response_header(resp, "Access-Control-Allow-Origin", echo ? origin : "*");
    if (echo) {
        MHD_add_response_header(resp, "Vary", "Origin");
    }
    if (c->credentials) {
        MHD_add_response_header(resp, "Access-Control-Allow-Credentials", "true");
    }
}

void srv_cors_apply(const srv_cors *c, struct MHD_Connection *conn, struct MHD_Response *resp) {
    const char *origin =
        c != NULL ? MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin") : NULL;
    if (origin == NULL || !origin_allowed(c, origin)) {
        if (c != NULL && !c->any_origin) {
            MHD_add_response_header(resp, "Vary", "Origin");
        }
        return;
    }
    add_origin(c, resp, origin);
    MHD_add_response_header(resp, "Access-Control-Expose-Headers", c->expose);
}

/* Queues a 400 {"detail": ...} preflight refusal. */
static int refuse(struct MHD_Connection *conn, const char *what, const char *value) {
    char body[600];
    char shown[200];
    snprintf(shown, sizeof shown, "%s", value);
    for (char *p = shown; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20) {
            *p = '?';
        }
    }
    int n = snprintf(body, sizeof body,
                     "{\"detail\":\"Disallowed CORS %s: %s (langgraph.json's http.cors)\"}", what,
                     shown);
    struct MHD_Response *resp = MHD_create_response_from_buffer(
        n > 0 && (size_t)n < sizeof body ? (size_t)n : 0, body, MHD_RESPMEM_MUST_COPY);
    if (resp == NULL) {
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    MHD_add_response_header(resp, "Vary", "Origin");
    enum MHD_Result rc = MHD_queue_response(conn, 400, resp);
    MHD_destroy_response(resp);
    return rc;
}

bool srv_cors_preflight(const srv_cors *c, struct MHD_Connection *conn, const char *method,
                        int *queued) {
    if (c == NULL || strcmp(method, "OPTIONS") != 0) {
        return false;
    }
    const char *origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
    const char *want =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Access-Control-Request-Method");
    if (origin == NULL || want == NULL) {
        return false;
    }
    const char *hdrs =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Access-Control-Request-Headers");
    if (!origin_allowed(c, origin)) {
        *queued = refuse(conn, "origin", origin);
        return true;
    }
    if (c->methods != NULL && !is_star(c->methods) && !in_list(c->methods, want, strlen(want))) {
        *queued = refuse(conn, "method", want);
        return true;
    }
    if (hdrs != NULL && c->headers != NULL && !is_star(c->headers)) {
        for (const char *p = hdrs; *p != '\0';) {
            p += strspn(p, ", \t");
            size_t k = strcspn(p, ", \t");
            if (k > 0 && !in_list(c->headers, p, k)) {
                char one[128];
                snprintf(one, sizeof one, "%.*s", (int)(k < 120 ? k : 120), p);
                *queued = refuse(conn, "header", one);
                return true;
            }
            p += k;
        }
    }
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (resp == NULL) {
        *queued = MHD_NO;
        return true;
    }
    add_origin(c, resp, origin);
    MHD_add_response_header(resp, "Access-Control-Allow-Methods",
                            c->methods == NULL || is_star(c->methods) ? ALL_METHODS : c->methods);
    if (c->headers == NULL || is_star(c->headers)) {
        if (hdrs != NULL) {
            MHD_add_response_header(resp, "Access-Control-Allow-Headers", hdrs);
        }
    } else {
        MHD_add_response_header(resp, "Access-Control-Allow-Headers", c->headers);
    }
    char age[32];
    snprintf(age, sizeof age, "%ld", c->max_age);
    MHD_add_response_header(resp, "Access-Control-Max-Age", age);
    *queued = MHD_queue_response(conn, 200, resp);
    MHD_destroy_response(resp);
    return true;
}
