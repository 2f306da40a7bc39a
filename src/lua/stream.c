/* SPDX-License-Identifier: MIT */
/*
 * app:stream(input, config [, mode | {modes} | opts [, opts]]): a live
 * iterator over the chunks of a run (LangGraph's stream).
 *
 * The run happens on a helper thread. Its stream callback hands each chunk
 * to the iterator and waits until the loop asks for the next one, so the
 * two threads strictly alternate (a mutex and a condition variable, the
 * flag run_turn saying whose turn it is): while the loop body runs the run
 * is paused, and while the run goes on the iterator waits inside its call.
 * Lua nodes of the run must still use the state the loop runs in; the
 * iterator lends that state to the helper thread (sst__lua_runtime_lend)
 * before it gives the helper its turn, and takes it back when its own turn
 * comes, so one lua_State is only ever used by one thread at a time.
 *
 * Ending the loop early (break, an error in the body, or the collector for
 * an abandoned iterator) stops the run: the callback then fails, the run
 * ends, and the helper thread is joined. Events delivered on other threads
 * (SST_STREAM_MESSAGES from worker threads with workers > 1) cannot be
 * handed over while the helper may be running Lua on the lent state; they
 * are queued and yielded at the helper's next chunk or at the end.
 */
#include "lua_int.h"
#include "values/build.h"

#define SST_LUA_STREAM "superstep.stream"

typedef struct queued {
    sst_stream_mode mode;
    sst_value *event; /* owned */
    char *ns;         /* owned: the namespace of a subgraph's event, or NULL */
} queued;

typedef struct lstream {
    sst__lua_call call; /* the run's options and values */
    sst__lua_rt *rt;
    bool multi;         /* a list of modes: yield (mode, chunk) */
    bool entry;         /* an entrypoint app: values without a return value are not yielded */
    bool subgraphs;     /* the subgraphs' events too: yield (namespace, ...) first */
    bool sync_ready;    /* mu and cv were initialised */
    bool started;       /* the helper thread exists */
    bool joined;        /* ... and was joined */
    bool finished;      /* the iterator yields nothing more */
    pthread_t helper;   /* valid once started */
    pthread_mutex_t mu; /* lock order: mu, then the runtime's mu (never both here) */
    pthread_cond_t cv;
    /* guarded by mu: */
    bool run_turn;               /* the helper's turn; the iterator waits */
    bool done;                   /* the invoke returned */
    bool stop;                   /* the loop ended early: the callback fails */
    sst_stream_mode ev_mode;     /* the chunk handed over ... */
    const char *ev_ns;           /* ... its namespace (borrowed likewise) ... */
    const sst_value *ev;         /* ... borrowed while the helper waits in the callback */
    queued *queue;               /* chunks of other threads; owned */
    size_t q_head, q_len, q_cap; /* ring of q_cap slots */
    sst_graph_result *result;    /* the run's, once done */
    sst_error err;               /* when the invoke could not start */
} lstream;

static const struct {
    const char *name;
    sst_stream_mode mode;
} modes[] = {{"values", SST_STREAM_VALUES},          {"updates", SST_STREAM_UPDATES},
             {"custom", SST_STREAM_CUSTOM},          {"debug", SST_STREAM_DEBUG},
             {"messages", SST_STREAM_MESSAGES},      {"tasks", SST_STREAM_TASKS},
             {"checkpoints", SST_STREAM_CHECKPOINTS}};

static const char *mode_name(sst_stream_mode m) {
    for (size_t i = 0; i < SST_ARRAY_LEN(modes); i++) {
        if (modes[i].mode == m) {
            return modes[i].name;
        }
    }
    return "unknown";
}

/* ---- the helper thread's side ---- */

/* Adds a chunk of another thread to the queue (under mu); takes @p event, copies @p ns. */
static sst_code enqueue(lstream *s, sst_stream_mode mode, sst_value *event, const char *ns) {
    char *ns_copy = ns != NULL && ns[0] != '\0' ? sst__strndup(ns, strlen(ns)) : NULL;
    if (ns != NULL && ns[0] != '\0' && ns_copy == NULL) {
        sst_value_unref(event);
        return SST_ENOMEM;
    }
    if (s->q_len == s->q_cap) {
        size_t cap = s->q_cap ? s->q_cap * 2 : 8;
        queued *q = sst__malloc(cap * sizeof *q);
        if (q == NULL) {
            sst_value_unref(event);
            sst__free(ns_copy);
            return SST_ENOMEM;
        }
        for (size_t i = 0; i < s->q_len; i++) {
            q[i] = s->queue[(s->q_head + i) % s->q_cap];
        }
        sst__free(s->queue);
        s->queue = q;
        s->q_head = 0;
        s->q_cap = cap;
    }
    s->queue[(s->q_head + s->q_len++) % s->q_cap] = (queued){mode, event, ns_copy};
    return SST_OK;
}

/* True when the state @p v has no root value (or a null one). */
static bool no_root_value(const sst_value *v) {
    const sst_value *root = sst_object_get(v, SST_ROOT);
    return root == NULL || sst_is_null(root);
}

static sst_code on_event_ns(sst_stream_mode mode, const char *ns, const char *node,
                            const sst_value *event, void *ud) {
    (void)node;
    lstream *s = ud;
    if (mode == SST_STREAM_VALUES && s->entry && no_root_value(event)) {
        return SST_OK; /* an entrypoint's values are its return values: none yet */
    }
    pthread_mutex_lock(&s->mu);
    if (s->stop) {
        pthread_mutex_unlock(&s->mu);
        return SST_EINVAL; /* stops the run; its result is dropped */
    }
    if (!pthread_equal(pthread_self(), s->helper)) {
        sst_code rc = enqueue(s, mode, sst_value_ref(event), ns);
        pthread_mutex_unlock(&s->mu);
        return rc;
    }
    s->ev = event;
    s->ev_mode = mode;
    s->ev_ns = ns;
    s->run_turn = false;
    pthread_cond_broadcast(&s->cv);
    while (!s->run_turn) {
        pthread_cond_wait(&s->cv, &s->mu);
    }
    s->ev = NULL;
    bool stop = s->stop;
    pthread_mutex_unlock(&s->mu);
    return stop ? SST_EINVAL : SST_OK;
}

static sst_code on_event(sst_stream_mode mode, const char *node, const sst_value *event, void *ud) {
    return on_event_ns(mode, "", node, event, ud);
}

static void *helper_main(void *arg) {
    lstream *s = arg;
    pthread_mutex_lock(&s->mu);
    while (!s->run_turn) {
        pthread_cond_wait(&s->cv, &s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    sst__lua_call *c = &s->call;
    sst_error err = {0};
    sst_graph_result *r = sst_graph_invoke(c->app->cg, c->thread != NULL ? c->thread->t : NULL,
                                           c->input, &c->o, &err);
    pthread_mutex_lock(&s->mu);
    s->result = r;
    s->err = err;
    s->done = true;
    s->run_turn = false;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* ---- the iterator's side ---- */

/*
 * Gives the helper its turn, with this thread's Lua state, and waits until
 * it hands over a chunk or ends; @p stop asks it to end.
 */
static void helper_turn(lstream *s, bool stop) {
    pthread_t self = pthread_self();
    bool lent = sst__lua_runtime_lend(s->rt, self, s->helper);
    pthread_mutex_lock(&s->mu);
    s->stop = s->stop || stop;
    s->run_turn = true;
    pthread_cond_broadcast(&s->cv);
    while (s->run_turn || (stop && !s->done)) {
        pthread_cond_wait(&s->cv, &s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    if (lent) {
        sst__lua_runtime_lend(s->rt, s->helper, self);
    }
}

/* Ends the run now if it is going on, and joins the helper; the iterator yields no more. */
static void stop_stream(lstream *s) {
    s->finished = true;
    if (s->started && !s->joined) {
        helper_turn(s, true);
        pthread_join(s->helper, NULL);
        s->joined = true;
    }
    sst_graph_result_free(s->result);
    s->result = NULL;
    sst__lua_call_release(&s->call);
}

static int stream_gc(lua_State *L) {
    lstream *s = luaL_checkudata(L, 1, SST_LUA_STREAM);
    stop_stream(s);
    for (size_t i = 0; i < s->q_len; i++) {
        sst_value_unref(s->queue[(s->q_head + i) % s->q_cap].event);
        sst__free(s->queue[(s->q_head + i) % s->q_cap].ns);
    }
    sst__free(s->queue);
    s->queue = NULL;
    s->q_len = 0;
    sst__lua_call_clear(&s->call);
    if (s->sync_ready) {
        pthread_mutex_destroy(&s->mu);
        pthread_cond_destroy(&s->cv);
        s->sync_ready = false;
    }
    return 0;
}

static int stream_close(lua_State *L) {
    stop_stream(luaL_checkudata(L, 1, SST_LUA_STREAM));
    return 0;
}

/* Pushes @p u, an update {SST_ROOT: v}, as v (other values as they are). */
static void push_root_update(lua_State *L, const sst_value *u) {
    const sst_value *v = sst_object_get(u, SST_ROOT);
    sst__lua_push_table(L, v != NULL ? v : u);
}

/*
 * Pushes an updates chunk of a root graph: {node: update} with each update
 * {SST_ROOT: v} shown as v; a node that wrote several times shows the list
 * of its values (as LangGraph's).
 */
static void push_root_updates(lua_State *L, const sst_value *ev) {
    if (!sst_is_object(ev)) {
        sst__lua_push_table(L, ev);
        return;
    }
    lua_createtable(L, 0, (int)sst_object_len(ev));
    for (size_t i = 0; i < sst_object_len(ev); i++) {
        const sst_value *u = sst_object_value_at(ev, i);
        sst__lua_push_table(L, sst_object_key_at(ev, i));
        if (sst_is_array(u)) {
            lua_createtable(L, (int)sst_array_len(u), 0);
            for (size_t k = 0; k < sst_array_len(u); k++) {
                push_root_update(L, sst_array_get(u, k));
                lua_rawseti(L, -2, (lua_Integer)k + 1);
            }
        } else {
            push_root_update(L, u);
        }
        lua_rawset(L, -3);
    }
}

/* Pushes namespace @p ns ("a:1|b:2") as LangGraph's tuple: a list of its parts ({} for ""). */
static void push_ns(lua_State *L, const char *ns) {
    lua_newtable(L);
    lua_Integer i = 0;
    while (ns != NULL && *ns != '\0') {
        size_t len = strcspn(ns, "|");
        lua_pushlstring(L, ns, len);
        lua_rawseti(L, -2, ++i);
        ns += len;
        ns += *ns == '|';
    }
    if (i == 0) {
        luaL_setmetatable(L, SST_LUA_ARRAY);
    }
}

/*
 * An entrypoint's checkpoint as LangGraph's: its values are its return value (null
 * before it returned), not the root state {SST_ROOT: v}, as get_state shows them. @p ev
 * is a checkpoints chunk or a debug event; other events come back as they are (new).
 */
static sst_value *entry_checkpoint(sst_stream_mode mode, const sst_value *ev) {
    const sst_value *p = ev;
    if (mode == SST_STREAM_DEBUG) {
        const char *type = sst_string_cstr(sst_object_get(ev, "type"));
        p = type != NULL && strcmp(type, "checkpoint") == 0 ? sst_object_get(ev, "payload") : NULL;
    }
    const sst_value *values = sst_object_get(p, "values");
    if (!sst_is_object(values)) {
        return sst_value_ref(ev);
    }
    const sst_value *root = sst_object_get(values, SST_ROOT);
    sst_value *shown = sst__set_take(sst_value_ref(p), "values",
                                     sst_value_ref(root != NULL ? root : sst_null()), NULL);
    if (mode == SST_STREAM_DEBUG && shown != NULL) {
        shown = sst__set_take(sst_value_ref(ev), "payload", shown, NULL);
    }
    return shown != NULL ? shown : sst_value_ref(ev);
}

/*
 * Pushes a chunk: (mode, chunk) with several modes, else the chunk; with subgraphs the
 * namespace @p ns first. Returns the count.
 */
static int push_chunk(lua_State *L, const lstream *s, sst_stream_mode mode, const char *ns,
                      const sst_value *ev) {
    if (s->subgraphs) {
        push_ns(L, ns);
    }
    if (s->multi) {
        lua_pushstring(L, mode_name(mode));
    }
    const sst_compiled_graph *cg = s->call.app->cg;
    if (mode == SST_STREAM_VALUES) {
        sst__lua_push_state(L, cg, ev);
    } else if (mode == SST_STREAM_UPDATES && sst_compiled_graph_has_root(cg)) {
        push_root_updates(L, ev);
    } else if (s->entry && (mode == SST_STREAM_CHECKPOINTS || mode == SST_STREAM_DEBUG)) {
        sst_value *shown = entry_checkpoint(mode, ev);
        sst__lua_push_table(L, shown);
        sst_value_unref(shown);
    } else {
        sst__lua_push_table(L, ev);
    }
    return (s->multi ? 2 : 1) + (s->subgraphs ? 1 : 0);
}

/* Yields the oldest queued chunk, if any (0: none). */
static int pop_queued(lua_State *L, lstream *s) {
    pthread_mutex_lock(&s->mu);
    bool any = s->q_len > 0;
    queued q = {0};
    if (any) {
        q = s->queue[s->q_head];
        s->q_head = (s->q_head + 1) % s->q_cap;
        s->q_len--;
    }
    pthread_mutex_unlock(&s->mu);
    if (!any) {
        return 0;
    }
    sst__lua_push_owned(L, q.event); /* collected even if the conversion raises */
    lua_pushstring(L, q.ns != NULL ? q.ns : "");
    sst__free(q.ns);
    int n = push_chunk(L, s, q.mode, lua_tostring(L, -1), q.event);
    lua_remove(L, -n - 1);
    lua_remove(L, -n - 1);
    return n;
}

static void start(lua_State *L, lstream *s) {
    if (pthread_create(&s->helper, NULL, helper_main, s) != 0) {
        s->finished = true;
        sst__lua_raisef(L, SST_ENOMEM, "stream: cannot start a thread for the run");
    }
    s->started = true;
}

/* The run has ended and every chunk was yielded: raises its error, or returns 0 (the end). */
static int report(lua_State *L, lstream *s) {
    s->finished = true;
    sst__lua_call_release(&s->call);
    sst_graph_result *r = s->result;
    s->result = NULL;
    if (r == NULL || sst_graph_result_status(r) == SST_RUN_FAILED) {
        return sst__lua_raise_run_error(L, r, &s->err);
    }
    sst_graph_result_free(r);
    return 0;
}

static int stream_next(lua_State *L) {
    lstream *s = luaL_checkudata(L, lua_upvalueindex(1), SST_LUA_STREAM);
    if (s->finished) {
        return 0;
    }
    int n = pop_queued(L, s);
    if (n > 0) {
        return n;
    }
    if (!s->joined) {
        if (!s->started) {
            start(L, s);
        }
        helper_turn(s, false);
        /* The helper now waits in the callback (the chunk stays valid) or has ended. */
        pthread_mutex_lock(&s->mu);
        const sst_value *ev = s->ev;
        sst_code rc = SST_OK;
        if (ev != NULL && s->q_len > 0) { /* older chunks of other threads go first */
            rc = enqueue(s, s->ev_mode, sst_value_ref(ev), s->ev_ns);
            ev = NULL;
        }
        bool done = s->done;
        pthread_mutex_unlock(&s->mu);
        if (rc != SST_OK) {
            return sst__lua_raise_enomem(L);
        }
        if (ev != NULL) {
            return push_chunk(L, s, s->ev_mode, s->ev_ns, ev);
        }
        if (done) {
            pthread_join(s->helper, NULL);
            s->joined = true;
        }
        if ((n = pop_queued(L, s)) > 0) {
            return n;
        }
    }
    return report(L, s);
}

/* The mode bits of a name or a list of names at @p idx; *multi for a list. */
static unsigned parse_modes(lua_State *L, int idx, bool *multi) {
    *multi = lua_type(L, idx) == LUA_TTABLE;
    if (lua_isnil(L, idx)) {
        return SST_STREAM_VALUES;
    }
    if (!*multi && lua_type(L, idx) != LUA_TSTRING) {
        sst__lua_raisef(L, SST_EINVAL, "stream: stream_mode must be a mode name or a list, got %s",
                        luaL_typename(L, idx));
    }
    size_t n = *multi ? lua_rawlen(L, idx) : 1;
    unsigned bits = 0;
    for (size_t i = 1; i <= n; i++) {
        if (*multi) {
            lua_rawgeti(L, idx, (lua_Integer)i);
        } else {
            lua_pushvalue(L, idx);
        }
        const char *name = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        size_t m = 0;
        while (name != NULL && m < SST_ARRAY_LEN(modes) && strcmp(modes[m].name, name) != 0) {
            m++;
        }
        if (name == NULL || m == SST_ARRAY_LEN(modes)) {
            sst__lua_raisef(L, SST_EINVAL,
                            "stream: unknown stream mode '%s' (values, updates, custom, messages, "
                            "debug, tasks, checkpoints)",
                            name != NULL ? name : luaL_typename(L, -1));
        }
        bits |= (unsigned)modes[m].mode;
        lua_pop(L, 1);
    }
    return bits;
}

/*
 * Sorts the arguments after the config: (mode | {modes} | opts [, opts]).
 * Returns the index of the modes (0: none) and sets *opts (0: none).
 */
static int stream_args(lua_State *L, int *opts) {
    int mode_idx = 0;
    *opts = 0;
    if (lua_type(L, 4) == LUA_TSTRING || (lua_istable(L, 4) && lua_rawlen(L, 4) > 0)) {
        mode_idx = 4;
    } else if (lua_istable(L, 4)) {
        *opts = 4;
    } else if (!lua_isnil(L, 4)) {
        sst__lua_raisef(L, SST_EINVAL,
                        "stream: expected a mode, a list of modes or options, got %s",
                        luaL_typename(L, 4));
    }
    if (!lua_isnil(L, 5)) {
        if (!lua_istable(L, 5) || *opts != 0) {
            sst__lua_raisef(L, SST_EINVAL, "stream: options must be one table after the mode");
        }
        *opts = 5;
    }
    if (*opts != 0 && lua_getfield(L, *opts, "stream_mode") != LUA_TNIL) {
        if (mode_idx != 0) {
            sst__lua_raisef(L, SST_EINVAL,
                            "stream: the mode is given twice (argument and "
                            "stream_mode)");
        }
        lua_replace(L, 6);
        return 6;
    }
    return mode_idx;
}

int sst__lua_app_stream(lua_State *L) {
    static const char *const known[] = {
        "stream_mode",      "durability",      "recursion_limit", "context",
        "interrupt_before", "interrupt_after", "subgraphs",       NULL};
    lua_settop(L, 6);
    int opts;
    int mode_idx = stream_args(L, &opts);
    lua_settop(L, 6);
    bool multi;
    unsigned bits = parse_modes(L, mode_idx != 0 ? mode_idx : 6, &multi);
    bool entry = sst_compiled_graph_is_entrypoint(sst__lua_check_app(L, 1)->cg);
    if (mode_idx == 0 && entry) {
        bits = SST_STREAM_UPDATES; /* LangGraph's entrypoint streams updates by default */
    }
    lstream *s = lua_newuserdatauv(L, sizeof *s, 1);
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->sync_ready = true;
    luaL_setmetatable(L, SST_LUA_STREAM);
    int self = lua_gettop(L);
    sst__lua_call_prepare(L, &s->call, self, opts, known, "stream");
    sst__lua_root_input(L, &s->call);
    s->rt = sst__lua_runtime(L);
    s->multi = multi;
    s->entry = entry;
    s->call.o.stream_modes = bits;
    s->call.o.stream = on_event;
    s->call.o.stream_user_data = s;
    if (opts != 0 && lua_getfield(L, opts, "subgraphs") != LUA_TNIL) {
        s->subgraphs = lua_toboolean(L, -1);
        s->call.o.subgraphs = s->subgraphs;
        s->call.o.stream_ns = s->subgraphs ? on_event_ns : NULL;
    }
    if (opts != 0) {
        lua_pop(L, 1);
    }
    lua_pushvalue(L, self);
    lua_pushcclosure(L, stream_next, 1);
    lua_pushnil(L);
    lua_pushnil(L);
    lua_pushvalue(L, self); /* the generic for's closing value: a break stops the run */
    return 4;
}

void sst__lua_open_stream(lua_State *L) {
    luaL_newmetatable(L, SST_LUA_STREAM);
    lua_pushcfunction(L, stream_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, stream_close);
    lua_setfield(L, -2, "__close");
    lua_pop(L, 1);
}
