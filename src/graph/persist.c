/* SPDX-License-Identifier: MIT */
/*
 * Durable threads: checkpoints written through a checkpointer, read back by
 * replaying deltas onto the nearest snapshot, and the state-management API
 * (get_state, history, update_state, forks). docs/checkpoints.md has the
 * record layout and the numbering of steps.
 *
 * A checkpoint at step s holds the state before superstep s and, in "next",
 * the tasks of superstep s. Its body is either the whole state (a snapshot,
 * every K checkpoints) or the groups of deltas since its parent (one group
 * per superstep, replayed in order through the reducers). Deltas are the
 * tasks' writes after sst_schema_prepare_delta, so message ids are fixed
 * before anything is stored and a replay is exact.
 */
#include <stdio.h>
#include <string.h>

#include "graph_persist.h"
#include "values/build.h"

#define DEFAULT_SNAPSHOT_EVERY 64

/* ---- small helpers ---- */

/* Points *field at a copy of @p s in @p buf (NULL for NULL); never allocates. */
static sst_code set_id(char **field, char buf[SST__ID_MAX], const char *s, sst_error *err) {
    if (s != NULL && strlen(s) >= SST__ID_MAX) {
        return sst__error(err, SST_EINVAL, "checkpoint id '%.40s...' is over %d bytes", s,
                          SST__ID_MAX - 1);
    }
    if (s != NULL && s != buf) {
        memmove(buf, s, strlen(s) + 1);
    }
    *field = s != NULL ? buf : NULL;
    return SST_OK;
}

#define SET_LAST(th, s, err)   set_id(&(th)->last_id, (th)->last_id_buf, (s), (err))
#define SET_LATEST(th, s, err) set_id(&(th)->latest_id, (th)->latest_id_buf, (s), (err))

/* ---- resume points ---- */

static int name_cmp(const void *a, const void *b) {
    return strcmp(sst_string_cstr(*(const sst_value *const *)a),
                  sst_string_cstr(*(const sst_value *const *)b));
}

sst_value *sst__start_point(const sst_compiled_graph *cg, uint64_t superstep,
                            const sst_value *targets, sst_error *err) {
    /* Vertex tasks in name order (each once), then Sends in order: the engine's task order. */
    size_t n = sst_array_len(targets);
    const sst_value **names = sst__calloc(n + 1, sizeof *names);
    if (names == NULL) {
        sst__enomem(err);
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const sst_value *x = sst_array_get(targets, i);
        if (!sst_is_string(x)) {
            continue;
        }
        bool dup = false;
        for (size_t j = 0; j < k && !dup; j++) {
            dup = sst_value_equal(names[j], x);
        }
        if (!dup) {
            names[k++] = x;
        }
    }
    qsort(names, k, sizeof *names, name_cmp);
    sst_value *tasks = sst_array_empty();
    for (size_t i = 0; i < k && tasks != NULL; i++) {
        sst_value *d = sst__set_take(sst_object_empty(), "vertex", sst_value_ref(names[i]), err);
        tasks = d != NULL ? sst_array_push_take(tasks, d, err) : (sst_value_unref(tasks), NULL);
    }
    sst__free(names);
    int64_t send = 0;
    for (size_t i = 0; i < n && tasks != NULL; i++) {
        const sst_value *x = sst_array_get(targets, i);
        if (sst_is_string(x)) {
            continue;
        }
        sst_value *d = sst__set_take(sst_object_empty(), "vertex",
                                     sst_value_ref(sst_object_get(x, "__send__")), err);
        d = sst__set_take(d, "send", sst_int_new(send++, err), err);
        d = sst__set_take(d, "input", sst_value_ref(sst_object_get(x, "arg")), err);
        const sst_value *tm = sst_object_get(x, "timeout");
        if (tm != NULL) {
            d = sst__set_take(d, "timeout", sst_value_ref(tm), err);
        }
        tasks = d != NULL ? sst_array_push_take(tasks, d, err) : (sst_value_unref(tasks), NULL);
    }
    SST_UNUSED(cg);
    sst_value *rp =
        sst__set_take(sst_object_empty(), "superstep", sst_int_new((int64_t)superstep, err), err);
    rp = sst__set_take(rp, "tasks", tasks, err);
    rp = sst__set_take(rp, "pending", sst_array_empty(), err);
    return sst__set_take(rp, "resume", sst_object_empty(), err);
}

static bool has_tasks(const sst_value *next) {
    return sst_array_len(sst_object_get(next, "tasks")) > 0;
}

/* ---- reading checkpoints ---- */

/* Applies one record's delta groups to @p state (takes). */
static sst_value *apply_groups(const sst_compiled_graph *cg, sst_value *state,
                               const sst_value *groups, sst_error *err) {
    for (size_t i = 0; i < sst_array_len(groups) && state != NULL; i++) {
        const sst_value *g = sst_array_get(groups, i);
        size_t n = sst_array_len(g);
        const sst_value **deltas = sst__malloc((n + 1) * sizeof *deltas);
        if (deltas == NULL) {
            sst_value_unref(state);
            sst__enomem(err);
            return NULL;
        }
        for (size_t k = 0; k < n; k++) {
            deltas[k] = sst_array_get(g, k);
        }
        state = sst_schema_apply(cg->schema, state, deltas, n, err);
        sst__free(deltas);
    }
    return state;
}

/*
 * The state a record stands for: its snapshot, or its ancestors' snapshot
 * with every delta group since replayed. At most K + 1 records are read.
 */
static sst_value *materialize(sst_graph_thread *th, const sst_value *rec, sst_error *err) {
    const sst_value **chain = NULL;
    sst_value **owned = NULL;
    size_t n = 0, cap = 0;
    const sst_value *cur = rec;
    sst_value *state = NULL;
    for (;;) {
        state = sst__cache_get(th->cp, th->thread_id, sst_string_cstr(sst_object_get(cur, "id")));
        if (state != NULL) {
            break;
        }
        const sst_value *kind = sst_object_get(cur, "kind");
        if (sst_is_string(kind) && strcmp(sst_string_cstr(kind), "snapshot") == 0) {
            state = sst_value_ref(sst_object_get(cur, "body"));
            break;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            const sst_value **c = sst__realloc(chain, cap * sizeof *c);
            sst_value **o = sst__realloc(owned, cap * sizeof *o);
            if (c != NULL) {
                chain = c;
            }
            if (o != NULL) {
                owned = o;
            }
            if (c == NULL || o == NULL) {
                sst__enomem(err);
                break;
            }
        }
        chain[n] = cur;
        owned[n] = NULL;
        n++;
        const sst_value *parent = sst_object_get(cur, "parent");
        if (!sst_is_string(parent)) {
            state = sst_schema_initial_state(th->cg->schema, err);
            break;
        }
        sst_value *p = sst__record_get(th, sst_string_cstr(parent), err);
        if (p == NULL) {
            sst__error_prefix(err, "checkpoint %s: reading its parent",
                              sst_string_cstr(sst_object_get(rec, "id")));
            break;
        }
        owned[n - 1] = p;
        cur = p;
    }
    for (size_t i = n; i-- > 0 && state != NULL;) {
        state = apply_groups(th->cg, state, sst_object_get(chain[i], "body"), err);
    }
    if (state != NULL) {
        sst__cache_put(th->cp, th->thread_id, sst_string_cstr(sst_object_get(rec, "id")), state);
    }
    for (size_t i = 0; i < n; i++) {
        sst_value_unref(owned[i]);
    }
    sst__free(chain);
    sst__free(owned);
    return state;
}

sst_value *sst__persist_materialize(sst_graph_thread *th, const sst_value *rec, sst_error *err) {
    return materialize(th, rec, err);
}

static void set_public(sst_graph_thread *th, sst_value *state) {
    sst_value *pub = sst__graph_public_state(state, NULL);
    if (pub != NULL) {
        sst_value_unref(th->public_state);
        th->public_state = pub;
    }
    sst_value_unref(th->state);
    th->state = state;
}

/* A thread with no checkpoint yet: the schema's initial state, nothing to resume. */
static sst_code load_new_thread(sst_graph_thread *th, sst_error *err) {
    sst_value *state = sst_schema_initial_state(th->cg->schema, err);
    if (state == NULL) {
        return sst__code(err);
    }
    set_public(th, state);
    sst_value_unref(th->resume_point);
    th->resume_point = NULL;
    sst_value_unref(th->pending);
    th->pending = sst_array_empty();
    th->skip_before = false;
    SET_LAST(th, NULL, err);
    SET_LATEST(th, NULL, err);
    th->restart = false;
    sst_value_unref(th->restart_input);
    th->restart_input = NULL;
    sst_value_unref(th->parent_cp);
    th->parent_cp = NULL;
    th->last_step = -2;
    th->since_snapshot = 0;
    return SST_OK;
}

sst_code sst__persist_empty(sst_graph_thread *th, sst_error *err) {
    sst_code rc = load_new_thread(th, err);
    if (rc == SST_OK) {
        th->since_snapshot = UINT64_MAX - 1; /* the next checkpoint is a snapshot */
        th->rebased = true;                  /* with no parent beside the others: a branch */
    }
    return rc;
}

sst_code sst__persist_load(sst_graph_thread *th, const char *id, sst_error *err) {
    sst_error local;
    sst_error_clear(&local);
    sst_value *rec = sst__record_get(th, id, &local);
    /* Loading an older checkpoint: the newest one's id, to tell a fork (headers only). */
    sst_value *latest =
        id == NULL || rec == NULL ? sst_value_ref(rec) : sst__record_list(th, NULL, NULL, 1, err);
    if (rec != NULL && latest == NULL) {
        sst_value_unref(rec);
        return sst__code(err);
    }
    if (latest != NULL && id != NULL) {
        sst_value *head = sst_value_ref(sst_array_get(latest, 0));
        sst_value_unref(latest);
        latest = head;
    }
    if (rec == NULL) {
        sst_value_unref(latest);
        if (local.code == SST_ENOTFOUND && id == NULL) {
            return load_new_thread(th, err);
        }
        if (err != NULL) {
            *err = local;
        }
        return local.code != SST_OK ? local.code : SST_ENOTFOUND;
    }
    sst_value *state = materialize(th, rec, err);
    if (state == NULL) {
        sst_value_unref(rec);
        sst_value_unref(latest);
        return sst__code(err);
    }
    set_public(th, state);
    const sst_value *next = sst_object_get(rec, "next");
    const sst_value *writes = sst_object_get(rec, "writes");
    sst_value_unref(th->resume_point);
    th->resume_point = NULL;
    if (has_tasks(next)) {
        sst_value *rp = sst_value_ref(next);
        if (sst_is_object(writes)) {
            const sst_value *pend = sst_object_get(writes, "pending");
            const sst_value *res = sst_object_get(writes, "resume");
            rp = sst__set_take(rp, "pending",
                               sst_value_ref(pend != NULL ? pend : sst_array_empty()), err);
            rp = sst__set_take(rp, "resume", sst_value_ref(res != NULL ? res : sst_object_empty()),
                               err);
            const sst_value *calls = sst_object_get(writes, "calls");
            if (rp != NULL && sst_array_len(calls) > 0) {
                rp = sst__set_take(rp, "calls", sst_value_ref(calls), err);
            }
        }
        if (rp == NULL) {
            sst_value_unref(rec);
            sst_value_unref(latest);
            return sst__code(err);
        }
        th->resume_point = rp;
    }
    /* An input or fork checkpoint with no next tasks is the start of a run whose
     * first loop checkpoint never committed: that run is started again. */
    const sst_value *meta = sst_object_get(rec, "metadata");
    const char *source = sst_string_cstr(sst_object_get(meta, "source"));
    const sst_value *pp = sst_object_get(meta, "pp"), *parents = sst_object_get(meta, "parents");
    sst_value_unref(th->parent_cp);
    th->parent_cp = sst_is_string(pp)        ? sst_value_ref(pp)
                    : sst_is_object(parents) ? sst_value_ref(parents)
                                             : NULL;
    sst_value_unref(th->restart_input);
    th->restart_input = NULL;
    th->restart = id == NULL && !has_tasks(next) && source != NULL &&
                  (strcmp(source, "input") == 0 || strcmp(source, "fork") == 0);
    if (th->restart) {
        const sst_value *in = sst_object_get(sst_object_get(meta, "writes"), SST_START);
        th->restart_input = in != NULL && !sst_is_null(in) ? sst_value_ref(in) : NULL;
    }
    const sst_value *ints = sst_object_get(writes, "interrupts");
    sst_value_unref(th->pending);
    th->pending = sst_value_ref(sst_is_array(ints) ? ints : sst_array_empty());
    th->skip_before = sst_bool_value(sst_object_get(writes, "skip_before"));
    const char *run_key = sst_string_cstr(sst_object_get(rec, "run_key"));
    sst_code idrc = sst__set_run_key(th, run_key != NULL ? run_key : "", err);
    idrc = idrc == SST_OK ? SET_LAST(th, sst_string_cstr(sst_object_get(rec, "id")), err) : idrc;
    if (idrc == SST_OK) {
        idrc = SET_LATEST(th, latest != NULL ? sst_string_cstr(sst_object_get(latest, "id")) : NULL,
                          err);
    }
    /* New ids sort after the thread's newest one, whichever process or invoke made it. */
    uint64_t seen = sst__uuid7_clock(th->latest_id);
    th->id_clock = seen > th->id_clock ? seen : th->id_clock;
    th->last_step = sst_int_value(sst_object_get(rec, "step"));
    th->since_snapshot = (uint64_t)sst_int_value(sst_object_get(rec, "since_snapshot"));
    sst_value_unref(rec);
    sst_value_unref(latest);
    return idrc;
}

/* ---- writing checkpoints ---- */

static uint64_t snapshot_every(const sst_invoke_opts *o) {
    return o != NULL && o->snapshot_every > 0 ? o->snapshot_every : DEFAULT_SNAPSHOT_EVERY;
}

/*
 * Writes one checkpoint after th->last_id: a snapshot of @p state every K
 * checkpoints, else the delta @p groups. Takes nothing; updates th.
 */
/* True for a configurable key LangGraph copies into checkpoint metadata. */
static bool metadata_key(const sst_value *key, const sst_value *v) {
    const char *k = sst_string_cstr(key);
    return strncmp(k, "__", 2) != 0 && strncmp(k, "checkpoint_", 11) != 0 &&
           strcmp(k, "thread_id") != 0 && strcmp(k, "writes") != 0 && strcmp(k, "source") != 0 &&
           strcmp(k, "step") != 0 && strcmp(k, "parents") != 0 && strcmp(k, "usage") != 0 &&
           (sst_is_string(v) || sst_is_number(v) || sst_is_bool(v));
}

/*
 * The run's configurable keys for checkpoint metadata (new reference), or NULL: none.
 * A subgraph's checkpoint keeps the one its parent graph's task ran from as "pp" (from
 * its run's checkpoint map, else, for the state API, from the checkpoint @p th loaded):
 * LangGraph's "parents" map is that checkpoint's own plus it (sst__parents_of), so each
 * checkpoint stores one id whatever the depth.
 */
static sst_value *config_metadata(const sst_graph_thread *th, const sst_invoke_opts *o,
                                  sst_error *err) {
    const sst_value *conf = o != NULL ? sst_object_get(o->config, "configurable") : NULL;
    sst_value *m = NULL;
    for (size_t i = 0; i < sst_object_len(conf); i++) {
        const sst_value *k = sst_object_key_at(conf, i), *v = sst_object_value_at(conf, i);
        if (metadata_key(k, v)) {
            m = sst__setv_take(m != NULL ? m : sst_object_empty(), k, sst_value_ref(v), err);
            if (m == NULL) {
                return NULL;
            }
        }
    }
    /* A subgraph's checkpoints name their ancestors' (LangGraph's metadata "parents"). */
    if (th->ns == NULL || th->ns[0] == '\0') {
        return m;
    }
    const sst_value *map = sst_object_get(conf, "checkpoint_map");
    if (sst_is_object(map) && o->durability == SST_DURABILITY_EXIT) {
        /* Its ancestors' checkpoints are written at their ends, under other ids than the
         * map's: the whole map is kept, since the chain could not be followed back. */
        return sst__set_take(m != NULL ? m : sst_object_empty(), "parents", sst_value_ref(map),
                             err);
    }
    size_t up = sst__parent_ns_len(th->ns, strlen(th->ns));
    const sst_value *pp = sst_is_object(map) ? sst_object_getn(map, th->ns, up) : th->parent_cp;
    if (sst_is_object(pp)) { /* the state API on a checkpoint that kept the whole map */
        return sst__set_take(m != NULL ? m : sst_object_empty(), "parents", sst_value_ref(pp), err);
    }
    if (sst_is_string(pp)) {
        m = sst__set_take(m != NULL ? m : sst_object_empty(), "pp", sst_value_ref(pp), err);
    }
    return m;
}

/* @p meta (taken, may be NULL) with the invoke's model usage so far, if any. */
static sst_value *with_usage(const sst_graph_thread *th, sst_value *meta, sst_error *err) {
    if (th->run_usage == NULL) {
        return meta;
    }
    return sst__set_take(meta != NULL ? meta : sst_object_empty(), "usage",
                         sst_value_ref(th->run_usage), err);
}

/* @p v (an object) without the graph's untracked fields (new reference; NULL on ENOMEM). */
static sst_value *untracked_dropped(const sst_compiled_graph *cg, const sst_value *v,
                                    sst_error *err) {
    sst_value *out = sst_value_ref(v);
    const sst_value *names = cg->g->untracked_fields;
    for (size_t i = 0; i < sst_array_len(names) && out != NULL; i++) {
        const char *name = sst_string_cstr(sst_array_get(names, i));
        if (sst_object_get(out, name) != NULL) {
            out = sst_object_remove_take(out, name, err);
        }
    }
    return out;
}

/* The delta groups without the untracked fields (new reference; NULL on ENOMEM). */
static sst_value *groups_dropped(const sst_compiled_graph *cg, const sst_value *groups,
                                 sst_error *err) {
    sst_value *out = sst_array_empty();
    for (size_t g = 0; g < sst_array_len(groups) && out != NULL; g++) {
        const sst_value *group = sst_array_get(groups, g);
        sst_value *copy = sst_array_empty();
        for (size_t k = 0; k < sst_array_len(group) && copy != NULL; k++) {
            copy = sst__push_take(copy, untracked_dropped(cg, sst_array_get(group, k), err), err);
        }
        out = sst__push_take(out, copy, err);
    }
    return out;
}

/* ---- durability "async": checkpoints handed to the writer (writer.c) ---- */

/* A checkpoint for the writer: the sst__put with what it points to owned. */
typedef struct put_job {
    sst_graph_thread *th; /* lives until its invoke waited for th->ticket */
    sst__put w;
    char id[37], parent[SST__ID_MAX];
    char *run_key;
    sst_value *state, *groups, *next, *writes_meta, *extra_meta;
} put_job;

static void put_job_free(void *data) {
    put_job *j = data;
    sst__free(j->run_key);
    sst_value_unref(j->state);
    sst_value_unref(j->groups);
    sst_value_unref(j->next);
    sst_value_unref(j->writes_meta);
    sst_value_unref(j->extra_meta);
    sst__free(j);
}

static sst_code put_job_run(void *data, sst_error *err) {
    put_job *j = data;
    sst_code rc = sst__record_put(j->th, &j->w, err);
    if (rc != SST_OK) {
        /* Short: the saver's own message names the store and often the thread, and an
         * error message holds SST_ERROR_MSG_MAX bytes. */
        sst__error_prefix(err, "async write of step %lld", (long long)j->w.step);
    }
    return rc;
}

static sst_value *ref_or_null(const sst_value *v) {
    return v != NULL ? sst_value_ref(v) : NULL;
}

/*
 * Hands checkpoint @p w to th's writer. A graph level has at most one superstep's
 * checkpoint in flight: the previous one must be stored before this one goes (its
 * failure is this call's), unless th->chain (a run's input and first loop checkpoint).
 */
static sst_code put_async(sst_graph_thread *th, const sst__put *w, sst_error *err) {
    bool chained = th->chain;
    th->chain = false;
    if (!chained && th->ticket != 0 && sst__writer_wait(th->writer, th->ticket, err) != SST_OK) {
        return sst__code(err);
    }
    if (sst__writer_claim(th->writer, !chained, &th->ticket)) {
        /* A handoff would cost more than it overlaps (writer.c): written here, in order. */
        sst_code rc = sst__record_put(th, w, err);
        if (rc != SST_OK) {
            sst__error_prefix(err, "async write of step %lld", (long long)w->step);
        }
        sst__writer_release(th->writer, rc, err);
        return rc;
    }
    put_job *j = sst__calloc(1, sizeof *j);
    char *key = w->run_key != NULL ? sst__strndup(w->run_key, strlen(w->run_key)) : NULL;
    if (j == NULL || (w->run_key != NULL && key == NULL)) {
        sst__free(j);
        sst__free(key);
        return sst__enomem(err);
    }
    j->th = th;
    j->w = *w;
    snprintf(j->id, sizeof j->id, "%s", w->id);
    snprintf(j->parent, sizeof j->parent, "%s", w->parent != NULL ? w->parent : "");
    j->run_key = key;
    j->state = ref_or_null(w->state);
    j->groups = ref_or_null(w->groups);
    j->next = ref_or_null(w->next);
    j->writes_meta = ref_or_null(w->writes_meta);
    j->extra_meta = ref_or_null(w->extra_meta);
    j->w.id = j->id;
    j->w.parent = w->parent != NULL ? j->parent : NULL;
    j->w.run_key = key;
    j->w.state = j->state;
    j->w.groups = j->groups;
    j->w.next = j->next;
    j->w.writes_meta = j->writes_meta;
    j->w.extra_meta = j->extra_meta;
    return sst__writer_submit(th->writer, put_job_run, put_job_free, j, &th->ticket, err);
}

sst_code sst__persist_flush(sst_graph_thread *th, sst_error *err) {
    if (th == NULL || th->writer == NULL || th->ticket == 0) {
        return SST_OK;
    }
    return sst__writer_wait(th->writer, th->ticket, err);
}

/*
 * What a checkpoint of @p th with resume point @p next means beside its record
 * (SST_PUT_*): the run's last (the root graph's, no task left, nothing written after it:
 * th->run_ending), the thread's lock taken with it (deferred to the run's first
 * checkpoint) or given back with it (the run's last, when the invoke holds the lock).
 */
static unsigned put_flags(const sst_graph_thread *th, const sst_value *next) {
    int lock = atomic_load(&th->lock);
    bool last = th->run_ending && (th->ns == NULL || th->ns[0] == '\0') &&
                (next == NULL || !has_tasks(next));
    unsigned flags = last ? SST_PUT_RUN_END : 0;
    if (lock == SST__LOCK_DEFERRED) {
        flags |= SST_PUT_TAKE_LOCK;
    }
    if (last && (lock == SST__LOCK_DEFERRED || lock == SST__LOCK_HELD)) {
        flags |= SST_PUT_GIVE_LOCK;
    }
    if (th->hold && !last) {
        flags |= SST_PUT_WITH_NEXT;
    }
    return flags;
}

/* sst__persist_put with only tracked fields in @p state and @p groups. */
static sst_code put_tracked(sst_graph_thread *th, int64_t step, const char *source,
                            const sst_value *state, const sst_value *groups, const sst_value *next,
                            const sst_value *writes_meta, const sst_invoke_opts *o,
                            sst_error *err) {
    char id[37];
    if (th->exit_id[0] != '\0') { /* the id it was streamed with (durability "exit") */
        snprintf(id, sizeof id, "%s", th->exit_id);
        th->exit_id[0] = '\0';
    } else {
        sst__uuid7(&th->id_clock, id); /* time-ordered: ids sort in creation order */
    }
    bool snapshot = th->last_id == NULL || th->since_snapshot + 1 >= snapshot_every(o);
    /* Stamped here, not by the writer of durability "async" (which stores two checkpoints
     * in a row), and strictly increasing within the thread, as the ids are: sorting a
     * thread's checkpoints by created_at gives their order even when several were made
     * in one millisecond (then 1 ms apart each). */
    int64_t now = (int64_t)sst__now_ms();
    th->created_ms = now > th->created_ms ? now : th->created_ms + 1;
    sst__put w = {
        .created_at = th->created_ms,
        .id = id,
        .parent = th->last_id,
        .source = source,
        .run_key = th->run_key,
        .step = step,
        .snapshot = snapshot,
        /* After an older checkpoint than the latest: a fork, exempt from the head check. */
        .fork = th->rebased || (th->last_id != NULL && th->latest_id != NULL &&
                                strcmp(th->last_id, th->latest_id) != 0),
        .since = snapshot ? 0 : th->since_snapshot + 1,
        .state = state,
        .groups = groups,
        .next = next != NULL && has_tasks(next) ? next : NULL,
        .writes_meta = writes_meta,
        .extra_meta = with_usage(th, config_metadata(th, o, err), err),
        .flags = put_flags(th, next),
    };
    th->run_ending = false;
    bool after_hold = th->after_hold;
    th->after_hold = false;
    /* Durability "async": stored by the writer while the next superstep runs; th goes on
     * from the new id at once (a failure fails the run, and the next invoke reloads). A
     * checkpoint that takes the thread's lock is stored here, before anything runs; so are
     * a run's input checkpoint held for the next and that next one (the same OS thread). */
    sst_code rc =
        th->writer != NULL && !after_hold && !(w.flags & (SST_PUT_TAKE_LOCK | SST_PUT_WITH_NEXT))
            ? put_async(th, &w, err)
            : sst__record_put(th, &w, err);
    th->after_hold = rc == SST_OK && (w.flags & SST_PUT_WITH_NEXT) != 0;
    sst_value_unref((sst_value *)w.extra_meta);
    th->rebased = false;
    if (rc != SST_OK) {
        return rc;
    }
    sst__cache_put(th->cp, th->thread_id, id, state);
    SET_LAST(th, id, err); /* our ids fit: nothing to fail after the commit */
    SET_LATEST(th, id, err);
    th->last_step = step;
    th->since_snapshot = w.since;
    return SST_OK;
}

sst_code sst__persist_put(sst_graph_thread *th, int64_t step, const char *source,
                          const sst_value *state, const sst_value *groups, const sst_value *next,
                          const sst_value *writes_meta, const sst_invoke_opts *o, sst_error *err) {
    if (th->cg->g->untracked_fields != NULL) { /* never stored: a checkpoint without them */
        sst_value *s = untracked_dropped(th->cg, state, err);
        sst_value *gr = s != NULL && groups != NULL ? groups_dropped(th->cg, groups, err) : NULL;
        sst_code rc = s != NULL && (groups == NULL || gr != NULL)
                          ? put_tracked(th, step, source, s, gr, next, writes_meta, o, err)
                          : sst__code(err);
        sst_value_unref(s);
        sst_value_unref(gr);
        return rc;
    }
    return put_tracked(th, step, source, state, groups, next, writes_meta, o, err);
}

static sst_code put_input_checkpoint(sst_graph_thread *th, const sst_value *input, bool fork,
                                     const sst_invoke_opts *o, sst_error *err) {
    sst_value *in_meta = sst__set_take(sst_object_empty(), SST_START,
                                       sst_value_ref(input != NULL ? input : sst_null()), err);
    sst_code rc = in_meta != NULL ? SST_OK : sst__code(err);
    if (rc == SST_OK) {
        rc = sst__persist_put(th, th->last_step + 1, fork ? "fork" : "input", th->state,
                              sst_array_empty(), NULL, in_meta, o, err);
    }
    sst_value_unref(in_meta);
    return rc;
}

sst_code sst__persist_start_groups(sst_graph_thread *th, const sst_value *prepared,
                                   const sst_invoke_opts *o, sst_value **groups, sst_error *err) {
    *groups = NULL;
    th->restart = false;
    sst_value *group = prepared != NULL
                           ? sst_array_push_take(sst_array_empty(), sst_value_ref(prepared), err)
                           : sst_array_empty();
    sst_value *all = group != NULL ? sst_array_push_take(sst_array_empty(), group, err) : NULL;
    if (all == NULL) {
        return sst__code(err);
    }
    if (o->durability == SST_DURABILITY_EXIT) {
        /* The input is held back with the supersteps' deltas: one checkpoint per invoke. */
        sst_value_unref(th->exit_groups);
        sst_value_unref(th->exit_writes);
        th->exit_writes = NULL;
        th->exit_groups = all;
        return SST_OK;
    }
    *groups = all;
    return SST_OK;
}

sst_code sst__persist_start(sst_graph_thread *th, bool restart, const sst_value *input,
                            const sst_value *prepared, const sst_value *state_after,
                            const sst_value *rp, bool fork, const sst_invoke_opts *o,
                            sst_error *err) {
    sst_value *groups;
    sst_code rc = sst__persist_start_groups(th, prepared, o, &groups, err);
    if (rc != SST_OK || groups == NULL) {
        return rc; /* failed, or held back (durability "exit") */
    }
    /* The input checkpoint (step -1 of a new thread): the state before the input.
     * A restarted run has it already. With a writer, both go to it at once. */
    if (!restart) {
        /* Committed with the first loop checkpoint when the invoke holds the thread's lock
         * (or takes it with this checkpoint), the saver takes the lock in its puts (the one
         * that holds a put for the next) and nothing is in flight before it: one commit for
         * both (SST_PUT_WITH_NEXT; a crash between them loses both, the run not begun). */
        th->hold = atomic_load(&th->lock) != SST__LOCK_NONE &&
                   (sst_checkpointer_flags(th->cp) & SST_SAVER_LOCK_IN_PUT) != 0 &&
                   (th->writer == NULL || th->ticket == 0);
        rc = put_input_checkpoint(th, input, fork, o, err);
        th->hold = false;
        th->chain = rc == SST_OK;
    }
    if (rc != SST_OK) {
        sst_value_unref(groups);
        return rc;
    }
    /* The first loop checkpoint: the input applied, START's routing as next. */
    rc = sst__persist_put(th, th->last_step + 1, "loop", state_after, groups, rp, NULL, o, err);
    sst_value_unref(groups);
    th->chain = false;
    return rc;
}

sst_code sst__persist_replay(sst_graph_thread *th, const sst_invoke_opts *o, sst_error *err) {
    /* Answering the replayed checkpoint's interrupts now: its tasks keep their ids and
     * the siblings' pending writes; only the answers stored on it are dropped. */
    bool answer = o->resume != NULL || o->resume_by_id != NULL;
    sst_value *rp = sst__asked_afresh(th->resume_point, answer, err);
    sst_value *groups = sst_array_empty();
    sst_code rc = rp == NULL ? sst__code(err) : answer ? SST_OK : sst__name_run(th, err);
    if (rc == SST_OK) {
        rc = sst__persist_put(th, th->last_step, "fork", th->state, groups, rp, NULL, o, err);
    }
    sst_value_unref(groups);
    if (rc != SST_OK) {
        sst_value_unref(rp);
        return rc;
    }
    sst_value_unref(th->resume_point);
    th->resume_point = rp;
    if (!answer) {
        sst_value_unref(th->pending);
        th->pending = sst_array_empty();
        th->skip_before = false;
    }
    return SST_OK;
}

sst_code sst__persist_superstep(sst_graph_thread *th, const sst_superstep_stats *st,
                                const sst_invoke_opts *o, sst_error *err) {
    sst_value *group = sst_array_empty();
    sst_value *writes = sst_object_empty();
    for (size_t i = 0; i < st->tasks && group != NULL && writes != NULL; i++) {
        /* Every task's delta, empty ones too, in task order: the snapshot of the parent
         * checkpoint reads task i's result at index i. */
        const sst_value *d = st->task[i].delta;
        group = sst_array_push_take(group, d != NULL ? sst_value_ref(d) : sst_object_empty(), err);
        /* Metadata names the nodes that wrote; the updates themselves are the body. */
        writes = sst_object_set_take(writes, st->task[i].vertex, sst_bool(true), err);
    }
    if (group == NULL || writes == NULL) {
        sst_value_unref(group);
        sst_value_unref(writes);
        return sst__code(err);
    }
    sst_code rc = SST_OK;
    if (o->durability == SST_DURABILITY_EXIT) {
        /* Held back until the invoke ends: one checkpoint for all of them. */
        th->exit_groups = sst_array_push_take(
            th->exit_groups != NULL ? th->exit_groups : sst_array_empty(), group, err);
        rc = th->exit_groups != NULL ? SST_OK : sst__code(err);
        group = NULL;
        sst_value_unref(th->exit_writes); /* the metadata names the last superstep's writers */
        th->exit_writes = sst_value_ref(writes);
    } else {
        sst_value *groups = sst_array_push_take(sst_array_empty(), group, err);
        group = NULL;
        rc = groups != NULL ? sst__persist_put(th, sst__lg_step(th->cg, st->superstep), "loop",
                                               st->state, groups, st->next, writes, o, err)
                            : sst__code(err);
        sst_value_unref(groups);
    }
    sst_value_unref(writes);
    return rc;
}

/*
 * Durability "exit", as LangGraph's: the root graph writes its checkpoint at its end; a
 * subgraph only when it stopped (interrupted, failed) or keeps its state (a namespace with
 * no task ids: SST_SUBGRAPH_KEEP all the way down).
 */
static bool exit_kept(const sst_graph_thread *th, const sst_run_result *rr) {
    return th->ns == NULL || th->ns[0] == '\0' || sst_run_result_status(rr) != SST_RUN_COMPLETED ||
           strchr(th->ns, ':') == NULL;
}

sst_code sst__persist_stop(sst_graph_thread *th, const sst_run_result *rr,
                           const sst_value *interrupts, bool skip_before, const sst_invoke_opts *o,
                           sst_error *err) {
    const sst_value *rp = sst_run_result_resume_point(rr);
    /* The run's end, an interrupt and an error wait for every checkpoint handed to the
     * writer; one that failed fails the run with the saver's error. */
    sst_code frc = sst__persist_flush(th, err);
    if (frc != SST_OK) {
        return frc;
    }
    if (th->exit_groups != NULL && !exit_kept(th, rr)) {
        sst_value_unref(th->exit_groups); /* a subgraph that ran to its end leaves nothing */
        sst_value_unref(th->exit_writes);
        th->exit_groups = th->exit_writes = NULL;
    }
    if (th->exit_groups != NULL) {
        /* SST_DURABILITY_EXIT: everything since the start in one checkpoint. */
        int64_t step = sst__lg_step(th->cg, sst_run_result_supersteps(rr)) - 1;
        sst_value *groups = th->exit_groups, *writes = th->exit_writes;
        th->exit_groups = NULL;
        th->exit_writes = NULL;
        /* An entrypoint stopped in its step: the input checkpoint, as LangGraph saves it. */
        bool input = th->cg->g->entrypoint && writes == NULL;
        th->run_ending = sst_run_result_status(rr) == SST_RUN_COMPLETED && !input;
        sst_code rc = sst__persist_put(th, step, input ? "input" : "loop", sst_run_result_state(rr),
                                       groups, has_tasks(rp) ? rp : NULL, writes, o, err);
        sst_value_unref(groups);
        sst_value_unref(writes);
        if (rc != SST_OK) {
            return rc;
        }
    }
    if (sst_run_result_status(rr) == SST_RUN_COMPLETED || th->last_id == NULL) {
        return SST_OK;
    }
    bool failed = sst_run_result_status(rr) == SST_RUN_FAILED;
    /* A cancelled run (sst_invoke_opts.cancelled) leaves its thread idle, as LangGraph's
     * server does: nothing failed, and the next run goes on from where it stopped. */
    bool cancelled = failed && sst_run_result_error(rr)->code == SST_ECANCELLED;
    return sst__persist_writes(th, rp, interrupts, skip_before,
                               failed && !cancelled ? sst_run_result_error(rr)->msg : NULL,
                               cancelled, err);
}

sst_code sst__persist_writes(sst_graph_thread *th, const sst_value *rp, const sst_value *interrupts,
                             bool skip_before, const char *error, bool idle, sst_error *err) {
    /* Writes on a checkpoint go after it (and everything handed over before it). */
    if (th->writer != NULL && sst__writer_drain(th->writer, err) != SST_OK) {
        return sst__code(err);
    }
    /* The lock went back with the run's last checkpoint, and something is written after all
     * (a stream callback failed on the last events): under the lock again, or not at all. */
    if (atomic_load(&th->lock) == SST__LOCK_GIVEN) {
        if (sst_checkpointer_lock(th->cp, th->thread_id, false, err) != SST_OK) {
            return sst__code(err);
        }
        atomic_store(&th->lock, SST__LOCK_HELD);
    }
    const sst_value *pend = sst_object_get(rp, "pending"), *res = sst_object_get(rp, "resume");
    sst_value *w = sst__set_take(sst_object_empty(), "pending",
                                 sst_value_ref(pend != NULL ? pend : sst_array_empty()), err);
    w = sst__set_take(w, "resume", sst_value_ref(res != NULL ? res : sst_object_empty()), err);
    w = sst__set_take(w, "interrupts",
                      sst_value_ref(interrupts != NULL ? interrupts : sst_array_empty()), err);
    w = sst__set_take(w, "skip_before", sst_bool(skip_before), err);
    const sst_value *calls = sst_object_get(rp, "calls");
    if (w != NULL && sst_array_len(calls) > 0) {
        w = sst__set_take(w, "calls", sst_value_ref(calls), err); /* the tasks' results */
    }
    if (error != NULL) {
        w = sst__set_take(w, "error", sst_string_new(error, err), err);
    }
    if (w == NULL) {
        return sst__code(err);
    }
    sst_payload p = {.value = w};
    sst_code rc = sst_checkpointer_put_writes(th->cp, th->thread_id, th->ns, th->last_id, &p,
                                              error != NULL ? SST_THREAD_ERROR
                                              : idle        ? SST_THREAD_IDLE
                                                            : SST_THREAD_INTERRUPTED,
                                              false, err);
    sst_value_unref(w);
    return rc;
}

sst_code sst__persist_copy(sst_graph_thread *th, const sst_graph_thread *from, sst_error *err) {
    sst_code rc = sst__set_run_key(th, from->run_key != NULL ? from->run_key : "", err);
    if (rc == SST_OK) {
        rc = sst__persist_rebase(th, NULL, from->last_step, err);
    }
    if (rc != SST_OK) {
        return rc;
    }
    set_public(th, sst_value_ref(from->state));
    const sst_value *rp = from->resume_point;
    sst_value *next = rp != NULL ? sst_object_remove_take(sst_value_ref(rp), "pending", err) : NULL;
    next = next != NULL ? sst_object_remove_take(next, "resume", err) : NULL;
    next = next != NULL && sst_object_get(next, "calls") != NULL
               ? sst_object_remove_take(next, "calls", err)
               : next;
    if (rp != NULL && next == NULL) {
        return sst__code(err);
    }
    sst_value *groups = sst_array_empty();
    rc = sst__persist_put(th, from->last_step, "fork", th->state, groups, next, NULL, NULL, err);
    sst_value_unref(groups);
    /* The siblings' writes stay; the answers are asked afresh, as a replay asks them. */
    sst_value_unref(th->resume_point);
    th->resume_point = rc == SST_OK && rp != NULL ? sst__asked_afresh(rp, true, err) : NULL;
    sst_value_unref(next);
    if (rc == SST_OK && rp != NULL && th->resume_point == NULL) {
        return sst__code(err);
    }
    if (rc == SST_OK && sst_array_len(sst_object_get(rp, "pending")) > 0) {
        rc = sst__persist_writes(th, th->resume_point, NULL, false, NULL, false, err);
    }
    return rc;
}

sst_code sst__persist_rebase(sst_graph_thread *th, const char *parent_id, int64_t parent_step,
                             sst_error *err) {
    sst_code rc = SET_LAST(th, parent_id, err);
    if (rc == SST_OK) {
        th->last_step = parent_step;
        th->since_snapshot = UINT64_MAX - 1; /* the next checkpoint is a snapshot */
        th->rebased = true;                  /* and a branch, exempt from the head check */
    }
    return rc;
}

/* ---- the state API ---- */

static sst_code need_durable(const sst_graph_thread *t, const char *what, sst_error *err) {
    if (t == NULL || t->cp == NULL) {
        return sst__error(err, SST_EINVAL, "%s: not a durable thread (open it with a checkpointer)",
                          what);
    }
    return SST_OK;
}

/* The snapshot of checkpoint @p id (NULL: the latest), @p child as for sst__snapshot. */
static sst_value *snapshot_at(sst_graph_thread *t, const char *id, const sst_value *child,
                              sst_value **rec_out, sst_error *err) {
    sst_value *rec = sst__record_get(t, id, err);
    if (rec == NULL) {
        return NULL;
    }
    sst_value *state = materialize(t, rec, err);
    sst_value *s = state != NULL ? sst__snapshot(t, rec, state, child, id == NULL, err) : NULL;
    sst_value_unref(state);
    if (rec_out != NULL && s != NULL) {
        *rec_out = rec;
    } else {
        sst_value_unref(rec);
    }
    return s;
}

sst_value *sst_graph_get_state(sst_graph_thread *t, const char *checkpoint_id, sst_error *err) {
    if (need_durable(t, "get_state", err) != SST_OK) {
        return NULL;
    }
    sst_value *s = snapshot_at(t, checkpoint_id, NULL, NULL, err);
    return s != NULL ? sst__snapshot_subgraphs(t, s, false, err) : NULL;
}

sst_value *sst_graph_get_state_nested(sst_graph_thread *t, const char *checkpoint_id,
                                      sst_error *err) {
    if (need_durable(t, "get_state", err) != SST_OK) {
        return NULL;
    }
    sst_value *s = snapshot_at(t, checkpoint_id, NULL, NULL, err);
    return s != NULL ? sst__snapshot_subgraphs(t, s, true, err) : NULL;
}

sst_value *sst__snapshots_of(sst_graph_thread *t, const sst_value *list, const char *newer,
                             sst_error *err) {
    /* the newer neighbour, when it is this one's child */
    sst_value *child = newer != NULL ? sst__record_get(t, newer, err) : NULL;
    if (newer != NULL && child == NULL) {
        return NULL;
    }
    sst_value *out = sst_array_empty();
    for (size_t i = 0; i < sst_array_len(list) && out != NULL; i++) {
        const sst_value *id = sst_object_get(sst_array_get(list, i), "id");
        bool is_child = child != NULL && sst_value_equal(sst_object_get(child, "parent"), id);
        sst_value *rec = NULL;
        sst_value *s = snapshot_at(t, sst_string_cstr(id), is_child ? child : NULL, &rec, err);
        s = s != NULL ? sst__snapshot_subgraphs(t, s, false, err) : NULL;
        sst_value_unref(child);
        child = rec;
        out = s != NULL ? sst_array_push_take(out, s, err) : (sst_value_unref(out), NULL);
    }
    sst_value_unref(child);
    return out;
}

sst_value *sst_graph_get_state_history(sst_graph_thread *t, const sst_value *filter, size_t limit,
                                       sst_error *err) {
    if (need_durable(t, "get_state_history", err) != SST_OK) {
        return NULL;
    }
    sst_value *list = sst__record_list(t, filter, NULL, limit, err);
    sst_value *out = list != NULL ? sst__snapshots_of(t, list, NULL, err) : NULL;
    sst_value_unref(list);
    return out;
}

/* The routing of @p node (as if it had just written @p update) on @p state. */
sst_code sst__route_as(const sst_compiled_graph *cg, size_t node, const sst_value *state,
                       sst_value **targets, sst_error *err) {
    const sst__route *r = &cg->routes[node];
    const char *name = cg->g->nodes[node].name;
    *targets = sst_array_empty();
    for (size_t i = 0; i < r->n_edges && *targets != NULL; i++) {
        sst_value *s = sst_string_new(cg->g->nodes[r->edges[i]].name, err);
        *targets =
            s != NULL ? sst_array_push_take(*targets, s, err) : (sst_value_unref(*targets), NULL);
    }
    for (size_t i = 0; i < r->n_branches && *targets != NULL; i++) {
        const sst__branch *b = &cg->g->branches[r->branches[i]];
        sst_value *res = b->router(state, b->user_data, err);
        if (res == NULL) {
            sst__error_prefix(err, "update_state: router of node '%s' failed", name);
            return sst__code(err);
        }
        sst_code rc = sst__route_result(cg, b, name, res, targets, err);
        sst_value_unref(res);
        if (rc != SST_OK) {
            return rc;
        }
    }
    return *targets != NULL ? SST_OK : sst__code(err);
}
