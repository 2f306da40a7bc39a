/* SPDX-License-Identifier: MIT */
/*
 * Threads: in memory (sst_graph_thread_new) or durable through a checkpointer
 * under a thread id and a namespace (sst_graph_thread_open; a subgraph's own
 * with sst_graph_thread_open_ns), and the run key whose task ids a thread's
 * run uses (named anew for each run, kept by a resume).
 */
#include <string.h>

#include "graph_int.h"

void sst_invoke_opts_init(sst_invoke_opts *o) {
    memset(o, 0, sizeof *o);
    o->recursion_limit = 25;
}

/* ---- threads ---- */

sst_graph_thread *sst_graph_thread_new(const sst_compiled_graph *cg, sst_error *err) {
    if (cg == NULL) {
        sst__error(err, SST_EINVAL, "thread: NULL compiled graph");
        return NULL;
    }
    sst_graph_thread *t = sst__calloc(1, sizeof *t);
    if (t == NULL) {
        sst__enomem(err);
        return NULL;
    }
    t->cg = cg;
    atomic_init(&t->busy, false);
    t->public_state = sst_object_empty();
    t->pending = sst_array_empty();
    t->last_step = -2;
    return t;
}

sst_graph_thread *sst__thread_open(const sst_compiled_graph *cg, sst_checkpointer *cp,
                                   const char *thread_id, const char *ns, sst_error *err) {
    if (cp == NULL || thread_id == NULL || thread_id[0] == '\0') {
        sst__error(err, SST_EINVAL, "thread open: needs a checkpointer and a thread id");
        return NULL;
    }
    sst_graph_thread *t = sst_graph_thread_new(cg, err);
    if (t == NULL) {
        return NULL;
    }
    t->cp = sst_checkpointer_ref(cp); /* the store lives while the thread does */
    t->thread_id = sst__strndup(thread_id, strlen(thread_id));
    t->ns = sst__strndup(ns, strlen(ns));
    if (t->thread_id == NULL || t->ns == NULL) {
        sst_graph_thread_free(t);
        sst__enomem(err);
        return NULL;
    }
    return t;
}

sst_graph_thread *sst_graph_thread_open(const sst_compiled_graph *cg, sst_checkpointer *cp,
                                        const char *thread_id, sst_error *err) {
    return sst__thread_open(cg, cp, thread_id, "", err);
}

const sst_compiled_graph *sst_graph_thread_graph(const sst_graph_thread *t) {
    return t != NULL ? t->cg : NULL;
}

void sst_graph_thread_free(sst_graph_thread *t) {
    if (t == NULL) {
        return;
    }
    sst_value_unref(t->state);
    sst_value_unref(t->public_state);
    sst_value_unref(t->resume_point);
    sst_value_unref(t->restart_input);
    sst_value_unref(t->run_usage);
    sst_value_unref(t->pending);
    sst_value_unref(t->exit_groups);
    sst_value_unref(t->exit_writes);
    sst__free(t->thread_id);
    sst__free(t->ns);
    sst_value_unref(t->parent_cp);
    sst_value_unref(t->pp_map);
    sst__free(t->run_key);
    sst_checkpointer_free(t->cp);
    sst__free(t);
}

const sst_value *sst_graph_thread_state(const sst_graph_thread *t) {
    return t->public_state;
}

sst_code sst__set_run_key(sst_graph_thread *th, const char *key, sst_error *err) {
    char *copy = sst__strndup(key, strlen(key));
    if (copy == NULL) {
        return sst__enomem(err);
    }
    sst__free(th->run_key);
    th->run_key = copy;
    return SST_OK;
}

sst_code sst__name_run(sst_graph_thread *th, sst_error *err) {
    char id[37];
    sst__uuid7(&th->id_clock, id);
    /* The run part is short: stored with every checkpoint. Task ids only need to differ
     * between the runs of one thread. */
    sst__buf b;
    sst__buf_init(&b);
    sst__buf_printf(&b, "%s/%08llx", th->cp != NULL ? th->thread_id : "memory",
                    (unsigned long long)(sst__hash_bytes(id, strlen(id), 0) & 0xffffffffu));
    char *key = sst__buf_detach(&b, NULL);
    if (key == NULL) {
        return sst__enomem(err);
    }
    sst__free(th->run_key);
    th->run_key = key;
    th->runs++;
    return SST_OK;
}
