/* SPDX-License-Identifier: MIT */
/*
 * LangGraph's wire shapes made from ours: Thread, ThreadState and Run
 * (as LangGraph's server answers them; see
 * ../shared/peers/langgraphjs-server/observed/).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server_int.h"

sst_value *srv_iso_time(int64_t ms, sst_error *err) {
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    if (ms < 0 || gmtime_r(&secs, &tm) == NULL) {
        return sst_null();
    }
    char buf[64];
    snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
    return sst_string_new(buf, err);
}

/* {"thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint_map": null} of a config, or
 * null. */
sst_value *srv_checkpoint_of(const char *thread_id, const sst_value *config, sst_error *err) {
    const sst_value *c = sst_object_get(config, "configurable");
    const sst_value *id = sst_object_get(c, "checkpoint_id");
    if (!sst_is_string(id)) {
        return sst_null();
    }
    const sst_value *ns = sst_object_get(c, "checkpoint_ns");
    sst_value *o =
        sst__set_take(sst_object_empty(), "thread_id", sst_string_new(thread_id, err), err);
    o = sst__set_take(o, "checkpoint_ns",
                      sst_is_string(ns) ? sst_value_ref(ns) : sst_string_empty(), err);
    o = sst__set_take(o, "checkpoint_id", sst_value_ref(id), err);
    return sst__set_take(o, "checkpoint_map", sst_null(), err);
}

/* @p v's member @p key, or @p def (new references). */
static sst_value *or_default(const sst_value *v, const char *key, sst_value *def) {
    const sst_value *m = sst_object_get(v, key);
    if (m != NULL) {
        sst_value_unref(def);
        return sst_value_ref(m);
    }
    return def;
}

/* A task as LangGraph's ThreadState task: {id, name, error, interrupts, checkpoint, state,
 * result}. */
static sst_value *task_of(const char *thread_id, const sst_value *t, sst_error *err) {
    sst_value *o = sst__set_take(sst_object_empty(), "id", or_default(t, "id", sst_null()), err);
    o = sst__set_take(o, "name", or_default(t, "name", sst_null()), err);
    o = sst__set_take(o, "error", or_default(t, "error", sst_null()), err);
    o = sst__set_take(o, "interrupts", or_default(t, "interrupts", sst_array_empty()), err);
    o = sst__set_take(o, "path", or_default(t, "path", sst_array_empty()), err);
    const sst_value *state = sst_object_get(t, "state");
    bool snap = sst_is_object(state) && sst_object_get(state, "values") != NULL;
    o = sst__set_take(
        o, "checkpoint",
        state != NULL && !snap ? srv_checkpoint_of(thread_id, state, err) : sst_null(), err);
    o = sst__set_take(o, "state", snap ? srv_thread_state(thread_id, state, err) : sst_null(), err);
    if (sst_object_get(t, "result") != NULL) {
        o = sst__set_take(o, "result", sst_value_ref(sst_object_get(t, "result")), err);
    }
    return o;
}

const sst_value *srv_unroot(const sst_value *values) {
    const sst_value *root = sst_object_len(values) == 1 ? sst_object_get(values, SST_ROOT) : NULL;
    return root != NULL ? root : values;
}

sst_value *srv_thread_state(const char *thread_id, const sst_value *snap, sst_error *err) {
    sst_value *tasks = sst_array_empty();
    const sst_value *ts = sst_object_get(snap, "tasks");
    for (size_t i = 0; i < sst_array_len(ts); i++) {
        tasks = sst__push_take(tasks, task_of(thread_id, sst_array_get(ts, i), err), err);
    }
    const sst_value *values = sst_object_get(snap, "values");
    sst_value *o =
        sst__set_take(sst_object_empty(), "values",
                      sst_value_ref(values != NULL ? srv_unroot(values) : sst_object_empty()), err);
    o = sst__set_take(o, "next", or_default(snap, "next", sst_array_empty()), err);
    o = sst__set_take(o, "tasks", tasks, err);
    o = sst__set_take(o, "metadata", or_default(snap, "metadata", sst_object_empty()), err);
    o = sst__set_take(o, "created_at", or_default(snap, "created_at", sst_null()), err);
    o = sst__set_take(o, "checkpoint",
                      srv_checkpoint_of(thread_id, sst_object_get(snap, "config"), err), err);
    o = sst__set_take(o, "parent_checkpoint",
                      srv_checkpoint_of(thread_id, sst_object_get(snap, "parent_config"), err),
                      err);
    return sst__set_take(o, "interrupts", or_default(snap, "interrupts", sst_array_empty()), err);
}

static sst_value *str_or_null(const char *s, sst_error *err) {
    return s != NULL ? sst_string_new(s, err) : sst_null();
}

sst_value *srv_run_value(const sst_queued_run *run, sst_error *err) {
    sst_value *o =
        sst__set_take(sst_object_empty(), "run_id", sst_string_new(run->run_id, err), err);
    const sst_value *kw = run->kwargs;
    bool temporary = sst_is_bool(sst_object_get(kw, "temporary")) &&
                     sst_bool_value(sst_object_get(kw, "temporary"));
    o = sst__set_take(o, "thread_id", temporary ? sst_null() : sst_string_new(run->thread_id, err),
                      err);
    o = sst__set_take(o, "assistant_id", str_or_null(run->assistant_id, err), err);
    o = sst__set_take(o, "created_at", srv_iso_time(run->created_at, err), err);
    o = sst__set_take(o, "updated_at", srv_iso_time(run->updated_at, err), err);
    o = sst__set_take(o, "status", sst_string_new(sst_queue_status_name(run->status), err), err);
    o = sst__set_take(o, "metadata",
                      sst_value_ref(run->metadata != NULL ? run->metadata : sst_object_empty()),
                      err);
    sst_value *shown = sst_value_ref(kw != NULL ? kw : sst_object_empty());
    if (sst_object_get(shown, "traceparent") != NULL) { /* ours, not LangGraph's */
        shown = sst_object_remove_take(shown, "traceparent", err);
    }
    o = sst__set_take(o, "kwargs", shown, err);
    return sst__set_take(o, "multitask_strategy", str_or_null(run->multitask_strategy, err), err);
}

sst_value *srv_merged(const sst_value *base, const sst_value *over, sst_error *err) {
    sst_value *o = sst_value_ref(sst_is_object(base) ? base : sst_object_empty());
    for (size_t i = 0; sst_is_object(over) && i < sst_object_len(over) && o != NULL; i++) {
        o = sst__setv_take(o, sst_object_key_at(over, i),
                           sst_value_ref(sst_object_value_at(over, i)), err);
    }
    return o;
}

bool srv_true(const sst_value *v) {
    return sst_is_bool(v) && sst_bool_value(v);
}

sst_value *srv_hidden_get(sst_server *s, const char *sub, const char *key, bool *missing,
                          sst_error *err) {
    const char *const ns[] = {SRV_RESERVED_NS, sub};
    sst_value *item = sst_store_get(s->store, ns, 2, key, 0, err);
    *missing = item != NULL && sst_is_null(item);
    sst_value *v = item != NULL && !*missing ? sst_value_ref(sst_object_get(item, "value")) : NULL;
    sst_value_unref(item);
    return v;
}

int64_t srv_env_offset_ms(const char *var) {
    const char *v = getenv(var);
    if (v == NULL || v[0] == '\0') {
        return 0;
    }
    char *end;
    long long n = strtoll(v, &end, 10);
    return *end == '\0' && n > -INT64_C(31536000000) && n < INT64_C(31536000000) ? (int64_t)n : 0;
}
