/* SPDX-License-Identifier: MIT */
/*
 * Graphviz's dot layout as SVG (libgvc, Debian libgraphviz-dev): the picture of
 * a graph that `superstep graph --svg` prints and the web page shows.
 *
 * No state of its own between calls: each call makes its Graphviz context and frees it
 * before returning (0.2 to 0.5 ms of a 2 ms drawing; the server keeps each assistant's
 * drawings, so it draws once). What stays process-wide is Graphviz's, not ours:
 * - g_mu: Graphviz is not thread-safe whatever the contexts (cgraph keeps its error
 *   state, the dot layout its working state, libgvc its emit state in globals, and
 *   gvContextPlugins sets the default node label on cgraph's global prototype), so
 *   every call, from any thread or server, holds g_mu for the whole of its Graphviz
 *   work;
 * - g_msg: its error handler (agseterrf) is one global callback without user data, so
 *   its message can only land in a global; written and read under g_mu within one call,
 *   cleared at its start;
 * - g_plugins: the addresses of the two plugins' libraries, found once (pthread_once)
 *   and never changed after: an immutable cache (the libraries stay loaded).
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
static char g_msg[200]; /* under g_mu: Graphviz's last error message (on_error) */
static pthread_once_t g_plugins_once = PTHREAD_ONCE_INIT;
static void *g_plugins[2]; /* set once (find_plugins): dot_layout's and core's, or NULL */

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

static void find_plugins(void) {
    g_plugins[0] = plugin("dot_layout");
    g_plugins[1] = plugin("core");
}

/* A new context in @p builtins (which it keeps: freed with it): the dot layout and the
 * core renderers only, else every plugin; NULL when Graphviz does not start. */
static GVC_t *new_context(lt_symlist_t builtins[3]) {
    pthread_once(&g_plugins_once, find_plugins);
    if (g_plugins[0] == NULL || g_plugins[1] == NULL) {
        return gvContext();
    }
    builtins[0] = (lt_symlist_t){"gvplugin_dot_layout_LTX_library", g_plugins[0]};
    builtins[1] = (lt_symlist_t){"gvplugin_core_LTX_library", g_plugins[1]};
    builtins[2] = (lt_symlist_t){NULL, NULL};
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
    lt_symlist_t builtins[3];
    pthread_mutex_lock(&g_mu);
    g_msg[0] = '\0';
    agseterrf(on_error);
    GVC_t *gvc = new_context(builtins);
    graph_t *g = gvc != NULL ? agmemread(dot) : NULL;
    if (gvc == NULL) {
        sst__error(err, SST_EIO, "dot_to_svg: Graphviz did not start (its plugins?)");
    } else if (g == NULL) {
        sst__error(err, SST_EPARSE, "dot_to_svg: %s", g_msg[0] ? g_msg : "not a DOT graph");
    } else {
        set_defaults(g);
        char *data = NULL;
        unsigned n = 0;
        if (gvLayout(gvc, g, "dot") != 0) {
            sst__error(err, SST_EIO, "dot_to_svg: the dot layout failed: %s",
                       g_msg[0] ? g_msg : "no layout plugin 'dot'");
        } else {
            if (gvRenderData(gvc, g, "svg", &data, &n) != 0 || data == NULL) {
                sst__error(err, SST_EIO, "dot_to_svg: rendering SVG failed: %s",
                           g_msg[0] ? g_msg : "no renderer 'svg'");
            } else if ((out = sst__strndup(data, n)) == NULL) {
                sst__error(err, SST_ENOMEM, "dot_to_svg: out of memory");
            } else if (len != NULL) {
                *len = n;
            }
            gvFreeRenderData(data);
            gvFreeLayout(gvc, g);
        }
        agclose(g);
    }
    if (gvc != NULL) {
        gvFreeContext(gvc);
    }
    pthread_mutex_unlock(&g_mu);
    return out;
}
