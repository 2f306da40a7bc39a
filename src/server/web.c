/* SPDX-License-Identifier: MIT */
/*
 * The web page: GET / answers index.html and GET /ui/<name> the page's other
 * files, from the copy built into the server (web.h), or from the directory
 * sst_server_opts.web_dir names (read on every request, for work on the page).
 * They need no token: they hold no data, and the page asks for the token the
 * API then needs.
 */
#include <stdio.h>
#include <string.h>

#include "server_int.h"
#include "web.h"

/* The content type of a file by its extension. */
static const char *type_of(const char *name) {
    static const struct {
        const char *ext, *type;
    } k_types[] = {
        {".html", "text/html; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},
        {".js", "text/javascript; charset=utf-8"},
        {".svg", "image/svg+xml"},
        {".png", "image/png"},
        {".json", "application/json"},
        {".ico", "image/x-icon"},
        {".txt", "text/plain; charset=utf-8"},
    };
    const char *dot = strrchr(name, '.');
    for (size_t i = 0; dot != NULL && i < sizeof k_types / sizeof k_types[0]; i++) {
        if (strcmp(dot, k_types[i].ext) == 0) {
            return k_types[i].type;
        }
    }
    return "application/octet-stream";
}

/* A name the page may have: one plain path segment, no dot file. */
static bool plain_name(const char *name) {
    return name[0] != '\0' && name[0] != '.' && strchr(name, '/') == NULL &&
           strchr(name, '\\') == NULL && strlen(name) < 128;
}

/* Reads @p name from the web_dir into res (text); false when it is not there. */
static bool from_dir(const sst_server *s, const char *name, srv_response *res) {
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", s->web_dir, name) >= sizeof path) {
        return false;
    }
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return false;
    }
    sst__buf b;
    sst__buf_init(&b);
    bool ok = sst__buf_read_file(&b, f, 0) && !b.oom;
    fclose(f);
    size_t len = 0;
    char *text = sst__buf_detach(&b, &len);
    if (ok && text == NULL && len == 0) {
        text = sst__strndup("", 0); /* an empty file */
    }
    if (!ok || text == NULL) {
        sst__free(text);
        srv_error(res, 500, "cannot read %s", path);
        return true;
    }
    res->text = text;
    res->text_len = len;
    return true;
}

/* Points res at the built-in copy of @p name; false when there is none. */
static bool from_assets(const char *name, srv_response *res) {
    for (const srv_web_asset *f = srv_web_assets; f->name != NULL; f++) {
        if (strcmp(f->name, name) == 0) {
            res->bytes = f->data;
            res->bytes_len = f->len;
            return true;
        }
    }
    return false;
}

static void serve(srv_request *r, srv_response *res, const char *name) {
    const sst_server *s = r->s;
    if (s->o.no_web) {
        srv_error(res, 404, "%s not found (the web page is off: --no-web)", r->url);
        return;
    }
    bool found =
        plain_name(name) && (s->web_dir != NULL ? from_dir(s, name, res) : from_assets(name, res));
    if (!found) {
        srv_error(res, 404, "%s not found", r->url);
        return;
    }
    if (res->status == 200) {
        res->type = type_of(name);
        res->web = true;
    }
}

void srv_web_index(srv_request *r, srv_response *res) {
    serve(r, res, "index.html");
}

void srv_web_file(srv_request *r, srv_response *res) {
    serve(r, res, r->param[0]);
}
