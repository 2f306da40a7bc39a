/* SPDX-License-Identifier: MIT */
/*
 * Where served graphs come from (sst_graph_source): a Lua script (one Lua state
 * per thread that runs it), or anything else a host hands in: a C graph, a
 * Python graph (python/src/serve.c). The API threads get one graph when it is
 * added; each worker gets its own on first use, unless the source is shared.
 * A langgraph.json spec naming a Python file goes to the loader the Python
 * module sets (sst_server_set_graph_loader).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "server_int.h"
#include "superstep/functional.h"
#include "superstep/id.h"

/* ---- a Lua script as a source ---- */

static void *lua_acquire(void *ud, const sst_compiled_graph **graph, sst_error *err) {
    sst_lua_script *script = sst_lua_script_load(ud, err);
    *graph = script != NULL ? sst_lua_script_graph(script) : NULL;
    return script;
}

static void lua_release(void *ud, void *inst) {
    (void)ud;
    sst_lua_script_free(inst);
}

static void lua_free(void *ud) {
    sst__free(ud);
}

static char *dup_or_null(const char *s) {
    if (s == NULL) {
        return NULL;
    }
    size_t n = strlen(s) + 1;
    char *d = sst__malloc(n);
    if (d != NULL) {
        memcpy(d, s, n);
    }
    return d;
}

sst_code sst_server_add_graph(sst_server *s, const char *graph_id, const char *path,
                              sst_error *err) {
    if (s == NULL || graph_id == NULL || graph_id[0] == '\0' || path == NULL) {
        return sst__error(err, SST_EINVAL, "serve: a graph needs an id and a script path");
    }
    char *copy = dup_or_null(path);
    if (copy == NULL) {
        return sst__enomem(err);
    }
    sst_graph_source src = {.acquire = lua_acquire,
                            .release = lua_release,
                            .free = lua_free,
                            .user_data = copy,
                            .path = path};
    return sst_server_add_graph_source(s, graph_id, &src, err);
}

/* ---- any source ---- */

static sst_code refuse(const sst_graph_source *src, sst_error *err, sst_code code, const char *what,
                       const char *id) {
    if (src != NULL && src->free != NULL) {
        src->free(src->user_data);
    }
    return sst__error(err, code, "serve: %s '%s'", what, id != NULL ? id : "");
}

sst_code sst_server_add_graph_source(sst_server *s, const char *graph_id,
                                     const sst_graph_source *src, sst_error *err) {
    if (s == NULL || graph_id == NULL || graph_id[0] == '\0') {
        return refuse(src, err, SST_EINVAL, "a graph needs an id: got", graph_id);
    }
    if (src == NULL || src->acquire == NULL || src->release == NULL) {
        return refuse(src, err, SST_EINVAL, "a graph source needs acquire and release: graph",
                      graph_id);
    }
    if (s->started) {
        return refuse(src, err, SST_EINVAL, "graphs are added before the server starts: graph",
                      graph_id);
    }
    if (srv_graph_find(s, graph_id) != NULL) {
        return refuse(src, err, SST_EINVAL, "a graph is given twice:", graph_id);
    }
    if (!sst__grow((void **)&s->graphs, &s->cap_graphs, s->n_graphs + 1, sizeof *s->graphs, 4)) {
        return refuse(src, err, SST_ENOMEM, "out of memory adding graph", graph_id);
    }
    const sst_compiled_graph *cg = NULL;
    void *reader = src->acquire(src->user_data, &cg, err);
    if (reader == NULL || cg == NULL) {
        if (reader != NULL) {
            src->release(src->user_data, reader);
        }
        if (sst__code(err) == SST_OK) {
            sst__error(err, SST_EINVAL, "the source gave no graph");
        }
        if (src->path != NULL) {
            sst__error_prefix(err, "serve: graph '%s' (%s): ", graph_id, src->path);
        } else {
            sst__error_prefix(err, "serve: graph '%s': ", graph_id);
        }
        if (src->free != NULL) {
            src->free(src->user_data);
        }
        return sst__code(err);
    }
    srv_graph *g = &s->graphs[s->n_graphs];
    char buf[PATH_MAX];
    const char *real = src->path != NULL ? realpath(src->path, buf) : NULL;
    *g = (srv_graph){.id = dup_or_null(graph_id),
                     .path = dup_or_null(src->path),
                     .real = dup_or_null(real),
                     .src = *src,
                     .reader = reader,
                     .graph = cg,
                     .entrypoint = sst_compiled_graph_is_entrypoint(cg)};
    g->src.path = NULL;
    pthread_mutex_init(&g->mu, NULL);
    if (g->id == NULL || (src->path != NULL && g->path == NULL) ||
        (real != NULL && g->real == NULL) ||
        sst_uuid5(SRV_ASSISTANT_NS, graph_id, g->assistant_id, err) != SST_OK) {
        sst__free(g->id);
        sst__free(g->path);
        sst__free(g->real);
        src->release(src->user_data, reader);
        if (src->free != NULL) {
            src->free(src->user_data);
        }
        pthread_mutex_destroy(&g->mu);
        return sst__error_unless_set(err, SST_ENOMEM, "out of memory");
    }
    s->n_graphs++;
    return SST_OK;
}

void srv_graphs_free(sst_server *s) {
    for (size_t i = 0; i < s->n_graphs; i++) {
        srv_graph *g = &s->graphs[i];
        g->src.release(g->src.user_data, g->reader);
        if (g->src.free != NULL) {
            g->src.free(g->src.user_data);
        }
        for (size_t k = 0; k < g->n_svg; k++) {
            sst_free(g->svg[k].svg);
        }
        pthread_mutex_destroy(&g->mu);
        sst__free(g->id);
        sst__free(g->path);
        sst__free(g->real);
    }
    sst__free(s->graphs);
    s->graphs = NULL;
    s->n_graphs = 0;
}

const sst_compiled_graph *srv_graph_get(srv_graph *g, void **inst, sst_error *err) {
    *inst = NULL;
    if (g->src.shared) {
        return g->graph;
    }
    const sst_compiled_graph *cg = NULL;
    *inst = g->src.acquire(g->src.user_data, &cg, err);
    if (*inst == NULL || cg == NULL) {
        srv_graph_put(g, *inst);
        *inst = NULL;
        if (sst__code(err) == SST_OK) {
            sst__error(err, SST_EINVAL, "the source gave no graph");
        }
        sst__error_prefix(err, "graph '%s': ", g->id);
        return NULL;
    }
    return cg;
}

void srv_graph_put(srv_graph *g, void *inst) {
    if (inst != NULL) {
        g->src.release(g->src.user_data, inst);
    }
}

/* ---- Python specs in a config ---- */

bool sst_graph_spec_is_python(const char *spec) {
    if (spec == NULL) {
        return false;
    }
    const char *colon = strrchr(spec, ':');
    size_t n = colon != NULL ? (size_t)(colon - spec) : strlen(spec);
    return n > 3 && memcmp(spec + n - 3, ".py", 3) == 0;
}

void sst_server_set_graph_loader(sst_server *s, sst_graph_loader fn, void *user_data) {
    s->loader = fn;
    s->loader_data = user_data;
}

sst_code srv_add_graph_spec(sst_server *s, const char *graph_id, const char *spec, sst_error *err) {
    if (!sst_graph_spec_is_python(spec)) {
        return sst_server_add_graph(s, graph_id, spec, err);
    }
    if (s->loader == NULL) {
        return sst__error(err, SST_ENOTSUP,
                          "serve: graph '%s' (%s) is a Python graph: serve the config with "
                          "`python3 -m superstep serve CONFIG` (`superstep serve` runs it)",
                          graph_id, spec);
    }
    return s->loader(s->loader_data, s, graph_id, spec, err);
}
