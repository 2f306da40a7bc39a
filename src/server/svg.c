/* SPDX-License-Identifier: MIT */
/*
 * Graphviz's dot layout as SVG (libgvc, Debian libgraphviz-dev): the picture of
 * a graph that `superstep graph --svg` prints and the web page shows.
 *
 * Process-wide state, on purpose: g_mu, g_gvc and g_msg below belong to no object.
 * sst_dot_to_svg is a free function (the CLI calls it with no server; every server
 * of the process shares it), and Graphviz itself is process-wide: its error handler
 * (agseterrf) is one global callback without user data, so its message can only land
 * in a global (g_msg), and cgraph keeps its error state (level, count, last text) in
 * globals too, so two contexts (one a server) would still share them and race. Thread
 * safety: every call, from any thread, holds g_mu for the whole of its Graphviz
 * work, reading and writing g_gvc and g_msg only then. The context is made on the
 * first call and lives as long as the process (a cache: made once, then only used
 * under g_mu); it is not freed at exit, as Graphviz's globals are not.
 *
 * The context has two plugins only: the dot layout and the core renderers (SVG),
 * loaded from Graphviz's plugin folder beside libgvc. Without the others (pango above
 * all) text is measured by Graphviz's own font metrics: drawings are the same on every
 * machine whatever fonts it has, no font list is scanned (fontconfig, 100 ms and more
 * the first time) and pango starts none of its threads. When those two plugins are not
 * where Debian puts them, every installed plugin is used instead.
 */
#include <dlfcn.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <gvc.h>

#include "common.h"
#include "superstep/server.h"

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER; /* every call's Graphviz work */
static GVC_t *g_gvc;    /* under g_mu: the context, made by the first call */
static char g_msg[200]; /* under g_mu: Graphviz's last error message (on_error) */

static int on_error(char *msg) {
    snprintf(g_msg, sizeof g_msg, "%s", msg);
    g_msg[strcspn(g_msg, "\n")] = '\0';
    return 0;
}

/* Graphviz's plugin @p name ("dot_layout"), from the folder libgvc's own holds, or NULL. */
static void *plugin(const char *name) {
    GVC_t *(*in_libgvc)(void) = gvContext;
    void *addr;
    memcpy(&addr, &in_libgvc, sizeof addr); /* a function's address, as dladdr takes it */
    Dl_info info;
    if (dladdr(addr, &info) == 0 || info.dli_fname == NULL) {
        return NULL;
    }
    char lib[1024], path[1200], sym[96];
    snprintf(lib, sizeof lib, "%s", info.dli_fname);
    snprintf(path, sizeof path, "%s/graphviz/libgvplugin_%s.so.6", dirname(lib), name);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    snprintf(sym, sizeof sym, "gvplugin_%s_LTX_library", name);
    return h != NULL ? dlsym(h, sym) : NULL;
}

/* The context: the dot layout and the core renderers only, else every plugin. */
static GVC_t *new_context(void) {
    static lt_symlist_t builtins[] = {{"gvplugin_dot_layout_LTX_library", NULL},
                                      {"gvplugin_core_LTX_library", NULL},
                                      {NULL, NULL}};
    builtins[0].address = plugin("dot_layout");
    builtins[1].address = plugin("core");
    if (builtins[0].address == NULL || builtins[1].address == NULL) {
        return gvContext();
    }
    return gvContextPlugins(builtins, 0);
}

/* The looks of every drawing, set before the layout (the DOT text's own attributes win). */
static void set_defaults(graph_t *g) {
    agattr(g, AGRAPH, "bgcolor", "transparent");
    agattr(g, AGRAPH, "fontname", "Helvetica,Arial,sans-serif");
    agattr(g, AGNODE, "fontname", "Helvetica,Arial,sans-serif");
    agattr(g, AGNODE, "fontsize", "12");
    agattr(g, AGEDGE, "fontname", "Helvetica,Arial,sans-serif");
    agattr(g, AGEDGE, "fontsize", "10");
}

char *sst_dot_to_svg(const char *dot, size_t *len, sst_error *err) {
    if (dot == NULL) {
        sst__error(err, SST_EINVAL, "dot_to_svg: no DOT text");
        return NULL;
    }
    char *out = NULL;
    pthread_mutex_lock(&g_mu);
    g_msg[0] = '\0';
    agseterrf(on_error);
    if (g_gvc == NULL) {
        g_gvc = new_context();
    }
    graph_t *g = g_gvc != NULL ? agmemread(dot) : NULL;
    if (g_gvc == NULL) {
        sst__error(err, SST_EIO, "dot_to_svg: Graphviz did not start (its plugins?)");
    } else if (g == NULL) {
        sst__error(err, SST_EPARSE, "dot_to_svg: %s", g_msg[0] ? g_msg : "not a DOT graph");
    } else {
        set_defaults(g);
        char *data = NULL;
        unsigned n = 0;
        if (gvLayout(g_gvc, g, "dot") != 0) {
            sst__error(err, SST_EIO, "dot_to_svg: the dot layout failed: %s",
                       g_msg[0] ? g_msg : "no layout plugin 'dot'");
        } else {
            if (gvRenderData(g_gvc, g, "svg", &data, &n) != 0 || data == NULL) {
                sst__error(err, SST_EIO, "dot_to_svg: rendering SVG failed: %s",
                           g_msg[0] ? g_msg : "no renderer 'svg'");
            } else if ((out = sst__strndup(data, n)) == NULL) {
                sst__error(err, SST_ENOMEM, "dot_to_svg: out of memory");
            } else if (len != NULL) {
                *len = n;
            }
            gvFreeRenderData(data);
            gvFreeLayout(g_gvc, g);
        }
        agclose(g);
    }
    pthread_mutex_unlock(&g_mu);
    return out;
}
