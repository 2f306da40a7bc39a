/* SPDX-License-Identifier: MIT */
/*
 * The agent graph; see react.h. Without middleware: START -> llm_call ->
 * (tool calls) one `tool` task per call -> llm_call ... With middleware
 * (LangChain 1.x's create_agent), each node hook is a node of its own:
 *
 *   START -> before_agent hooks (first to last) -> before_model hooks (first
 *   to last; the loop's entry) -> llm_call -> after_model hooks (last to
 *   first) -> tools -> the loop's entry ... ; the end goes through the
 *   after_agent hooks (last to first) to END.
 *
 * A hook's jump (sst_agent_jump_to) is kept in the untracked field "jump_to",
 * which every hook node and llm_call rewrite, and read by the router after it.
 */
#include <stdio.h>

#include "react_int.h"
#include "values/build.h"

void sst__react_opts_init(sst__react_opts *o) {
    memset(o, 0, sizeof *o);
    o->max_iterations = 10;
}

void sst__react_event(const sst__agent *a, const char *kind, const sst_value *data) {
    if (a->opts->on_event != NULL && data != NULL) {
        a->opts->on_event(kind, data, a->opts->event_ud);
    }
}

/* The iteration limit: the run ends with a clear reason. */
static sst_code stop(sst_node_ctx *ctx, void *ud) {
    (void)ud;
    return sst_node_update(ctx, "stop_reason", sst_string_new("max_iterations", NULL), NULL);
}

/* ---- routing ---- */

/* The loop's entry, unless the iteration limit is reached (then "stop"). */
static sst_value *to_model(const sst__agent *a, const sst_value *state, sst_error *err) {
    if (sst_int_value(sst_object_get(state, "iteration")) >=
        sst_int_value(sst_object_get(state, "max_iterations"))) {
        return sst_string_new("stop", err);
    }
    return sst_string_new(a->loop_entry, err);
}

/*
 * "tools": one Send per call of the last reply that has no answer yet; none left: the
 * model again (a human answered them all, say).
 */
static sst_value *to_tools(const sst__agent *a, const sst_value *state, sst_error *err) {
    const sst_value *msgs = sst_object_get(state, "messages");
    size_t ai = sst__last_ai_index(msgs);
    const sst_value *calls =
        ai != SIZE_MAX ? sst_object_get(sst_array_get(msgs, ai), "tool_calls") : NULL;
    if (sst_int_value(sst_object_get(state, "iteration")) >=
        sst_int_value(sst_object_get(state, "max_iterations"))) {
        return sst_string_new("stop", err);
    }
    sst_value *sends = sst_array_empty();
    for (size_t i = 0; sends != NULL && i < sst_array_len(calls); i++) {
        const sst_value *call = sst_array_get(calls, i);
        if (!sst__call_answered(msgs, ai, sst_object_get(call, "id"))) {
            sends = sst__push_take(sends, sst_send_new("tool", sst_value_ref(call), err), err);
        }
    }
    if (sends != NULL && sst_array_len(sends) == 0) {
        sst_value_unref(sends);
        return to_model(a, state, err);
    }
    return sends;
}

/* Where a jump goes: "model", "tools" or "end" (from an after_agent hook: the end). */
static sst_value *resolve_jump(const sst__agent *a, const char *jump, bool from_exit,
                               const sst_value *state, sst_error *err) {
    if (strcmp(jump, "model") == 0) {
        return sst_string_new(a->loop_entry, err);
    }
    if (strcmp(jump, "tools") == 0) {
        return to_tools(a, state, err);
    }
    return sst_string_new(from_exit ? SST_END : a->exit_node, err);
}

/* True when the structured answer's tool message follows the last reply. */
static bool structured_answered(const sst__agent *a, const sst_value *msgs, size_t ai) {
    const sst__structured *so = a->opts->structured;
    if (so == NULL || so->strategy != SST__SO_TOOL) {
        return false;
    }
    for (size_t i = ai + 1; i < sst_array_len(msgs); i++) {
        const sst_value *name = sst_object_get(sst_array_get(msgs, i), "name");
        if (sst_is_string(name) && strcmp(sst_string_cstr(name), so->name) == 0) {
            return true;
        }
    }
    return false;
}

/* After the model (and its after_model hooks): a jump, tools, the model again, or the end. */
static sst_value *after_model(const sst_value *state, void *ud, sst_error *err) {
    const sst__agent *a = ud;
    const sst_value *jump = sst_object_get(state, "jump_to");
    if (sst_is_string(jump)) {
        return resolve_jump(a, sst_string_cstr(jump), false, state, err);
    }
    if (sst_int_value(sst_object_get(state, "structured_retries")) > 0) {
        return to_model(a, state, err); /* a wrong structured answer: ask again */
    }
    const sst_value *msgs = sst_object_get(state, "messages");
    size_t ai = sst__last_ai_index(msgs);
    const sst_value *calls =
        ai != SIZE_MAX ? sst_object_get(sst_array_get(msgs, ai), "tool_calls") : NULL;
    if (sst_array_len(calls) == 0 || structured_answered(a, msgs, ai)) {
        return sst_string_new(a->exit_node, err);
    }
    return to_tools(a, state, err);
}

/* After a node hook: its jump, else its next node (or, the last after_model hook, the
 * model's router). */
static sst_value *after_hook(const sst_value *state, void *ud, sst_error *err) {
    const sst__hook *h = ud;
    const sst_value *jump = sst_object_get(state, "jump_to");
    if (sst_is_string(jump)) {
        return resolve_jump(h->a, sst_string_cstr(jump), h->after_agent, state, err);
    }
    if (h->next[0] == '\0') {
        return after_model(state, h->a, err);
    }
    return sst_string_new(h->next, err);
}

/* ---- node hooks ---- */

static sst_code hook_node(sst_node_ctx *ctx, void *ud) {
    const sst__hook *h = ud;
    const char *jump = NULL;
    sst_code rc = sst__run_hook(h->fn, h->mw->h.user_data, ctx, &jump);
    if (rc != SST_OK) {
        return rc;
    }
    sst_error err = {0};
    rc = sst_node_update(ctx, "jump_to", jump != NULL ? sst_string_new(jump, &err) : sst_null(),
                         &err);
    return rc == SST_OK ? SST_OK : sst_node_fail(ctx, rc, "%s", err.msg);
}

/* ---- building ---- */

enum { BEFORE_AGENT, BEFORE_MODEL, AFTER_MODEL, AFTER_AGENT, N_KINDS };
static const char *const k_kind_names[N_KINDS] = {"before_agent", "before_model", "after_model",
                                                  "after_agent"};

static sst_code (*hook_fn(const sst_middleware *m, int kind))(sst_node_ctx *, void *) {
    switch (kind) {
        case BEFORE_AGENT:
            return m->h.before_agent;
        case BEFORE_MODEL:
            return m->h.before_model;
        case AFTER_MODEL:
            return m->h.after_model;
        default:
            return m->h.after_agent;
    }
}

/*
 * The hooks as nodes, in the order they run: before_agent and before_model first to
 * last, after_model and after_agent last to first; each one's next node is set, and the
 * loop's entry and exit found.
 */
static sst_code plan_hooks(sst__agent *a, sst_error *err) {
    sst_middleware *const *mw = a->opts->middleware;
    size_t n = a->opts->n_middleware;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = i + 1; j < n; j++) {
            if (strcmp(mw[i]->name, mw[j]->name) == 0) {
                return sst__error(err, SST_EINVAL, "agent: two middleware are named '%s'",
                                  mw[i]->name);
            }
        }
    }
    a->hooks = sst__calloc(4 * n + 1, sizeof *a->hooks);
    if (a->hooks == NULL) {
        return sst__enomem(err);
    }
    size_t first[N_KINDS], count[N_KINDS];
    for (int kind = 0; kind < N_KINDS; kind++) {
        first[kind] = a->n_hooks;
        count[kind] = 0;
        bool reverse = kind == AFTER_MODEL || kind == AFTER_AGENT;
        for (size_t k = 0; k < n; k++) {
            sst_middleware *m = mw[reverse ? n - 1 - k : k];
            if (hook_fn(m, kind) == NULL) {
                continue;
            }
            sst__hook *h = &a->hooks[a->n_hooks++];
            h->a = a;
            h->mw = m;
            h->fn = hook_fn(m, kind);
            h->after_agent = kind == AFTER_AGENT;
            snprintf(h->node, sizeof h->node, "%s.%s", m->name, k_kind_names[kind]);
            count[kind]++;
        }
        a->jumps = a->jumps || count[kind] > 0;
    }
    snprintf(a->loop_entry, sizeof a->loop_entry, "%s",
             count[BEFORE_MODEL] > 0 ? a->hooks[first[BEFORE_MODEL]].node : "llm_call");
    snprintf(a->exit_node, sizeof a->exit_node, "%s",
             count[AFTER_AGENT] > 0 ? a->hooks[first[AFTER_AGENT]].node : SST_END);
    for (int kind = 0; kind < N_KINDS; kind++) {
        for (size_t k = 0; k < count[kind]; k++) {
            sst__hook *h = &a->hooks[first[kind] + k];
            const char *next = k + 1 < count[kind]    ? a->hooks[first[kind] + k + 1].node
                               : kind == BEFORE_AGENT ? a->loop_entry
                               : kind == BEFORE_MODEL ? "llm_call"
                               : kind == AFTER_MODEL  ? "" /* the model's router */
                                                      : SST_END;
            snprintf(h->next, sizeof h->next, "%s", next);
        }
    }
    return SST_OK;
}

static bool has_tool(const sst__tools *tools, const char *name) {
    for (size_t i = 0; tools != NULL && i < tools->n; i++) {
        if (strcmp(tools->items[i].name, name) == 0) {
            return true;
        }
    }
    return false;
}

/* The agent's state fields (and the middleware's). */
static sst_code add_fields(sst_graph *g, const sst__agent *a, sst_error *err) {
    const sst__react_opts *opts = a->opts;
    sst_value *prompt =
        opts->system_prompt != NULL ? sst_string_new(opts->system_prompt, err) : NULL;
    sst_code rc =
        sst_graph_add_field(g, "messages", sst_reducer_add_messages(), sst_array_empty(), err);
    if (rc == SST_OK) {
        rc = sst_graph_add_field(g, "iteration", sst_reducer_sum(), sst_int_new(0, err), err);
    }
    if (rc == SST_OK) {
        rc = sst_graph_add_field(g, "max_iterations", sst_reducer_replace(),
                                 sst_int_new(opts->max_iterations, err), err);
    }
    if (rc == SST_OK && prompt != NULL) {
        rc = sst_graph_add_field(g, "system_prompt", sst_reducer_replace(), prompt, err);
        prompt = NULL;
    }
    sst_value_unref(prompt);
    /* Seed 002's agent fields: every message ever produced, the tool scratchpad, a shared
     * context, the tools offered and the last model reply. */
    if (rc == SST_OK) {
        rc = sst_graph_add_field(g, "full_messages", sst_reducer_append(), sst_array_empty(), err);
    }
    if (rc == SST_OK) {
        rc = sst_graph_add_field(g, "scratchpad", sst_reducer_append(), sst_array_empty(), err);
    }
    if (rc == SST_OK) {
        rc = sst_graph_add_field(g, "context", sst_reducer_merge(), sst_object_empty(), err);
    }
    if (rc == SST_OK) {
        sst_value *schema = sst__tools_schema(a->tools, err);
        rc = schema != NULL ? sst_graph_add_field(g, "tools", sst_reducer_replace(), schema, err)
                            : sst__code(err);
    }
    if (rc == SST_OK) {
        rc = sst_graph_add_field(g, "last_response", sst_reducer_replace(), NULL, err);
    }
    if (rc == SST_OK && opts->structured != NULL) {
        rc = sst_graph_add_field(g, "structured_response", sst_reducer_replace(), NULL, err);
        if (rc == SST_OK) {
            rc = sst_graph_add_field(g, "structured_retries", sst_reducer_replace(),
                                     sst_int_new(0, err), err);
        }
        if (rc == SST_OK && opts->structured->strategy == SST__SO_TOOL &&
            has_tool(a->tools, opts->structured->name)) {
            rc = sst__error(err, SST_EINVAL,
                            "agent: response_format's tool '%s' has the name of a tool: give the "
                            "schema another \"title\"",
                            opts->structured->name);
        }
    }
    /* The middleware's own fields; "jump_to" and the per-run counts are untracked (each
     * middleware names up to 8). */
    const char **untracked = sst__calloc(1 + 8 * opts->n_middleware, sizeof *untracked);
    if (rc == SST_OK && untracked == NULL) {
        rc = sst__enomem(err);
    }
    size_t n_untracked = 0;
    if (rc == SST_OK && a->jumps) {
        rc = sst_graph_add_field(g, "jump_to", sst_reducer_replace(), NULL, err);
        untracked[n_untracked++] = "jump_to";
    }
    for (size_t i = 0; rc == SST_OK && i < opts->n_middleware; i++) {
        const sst_middleware *m = opts->middleware[i];
        const char *mine[8];
        size_t more = 0;
        if (m->h.add_fields != NULL) {
            rc = m->h.add_fields(g, m->h.user_data, mine, &more, err);
            for (size_t k = 0; rc == SST_OK && k < more && k < 8; k++) {
                untracked[n_untracked++] = mine[k];
            }
        }
    }
    if (rc == SST_OK && n_untracked > 0) {
        rc = sst_graph_set_untracked_fields(g, untracked, n_untracked, err);
    }
    sst__free(untracked);
    return rc;
}

/* A conditional edge from @p from through @p route (user data @p ud), with its targets. */
static sst_code add_router(sst_graph *g, const sst__agent *a, const char *from,
                           sst_value *(*route)(const sst_value *, void *, sst_error *), void *ud,
                           const char *next, bool model_router, sst_error *err) {
    const char *targets[8];
    size_t n = 0;
    if (model_router) {
        targets[n++] = "tool";
        targets[n++] = "stop";
        targets[n++] = a->exit_node;
        if (a->opts->structured != NULL || a->jumps) {
            targets[n++] = a->loop_entry; /* a wrong structured answer, a jump */
        }
    } else {
        targets[n++] = next;
        targets[n++] = a->loop_entry;
        targets[n++] = "tool";
        targets[n++] = "stop";
        targets[n++] = a->exit_node;
        targets[n++] = SST_END;
    }
    sst_value *map = sst_array_empty();
    for (size_t i = 0; i < n && map != NULL; i++) {
        bool seen = false;
        for (size_t j = 0; j < i; j++) {
            seen = seen || strcmp(targets[i], targets[j]) == 0;
        }
        if (!seen) {
            map = sst__push_take(map, sst_string_new(targets[i], err), err);
        }
    }
    sst_code rc = map != NULL ? sst_graph_add_conditional_edges(g, from, route, ud, map, err)
                              : sst__code(err);
    sst_value_unref(map);
    return rc;
}

static sst_code add_nodes_and_edges(sst_graph *g, sst__agent *a, sst_error *err) {
    sst_node_opts no;
    sst_node_opts_init(&no);
    /* The model call retries (a flaky provider): nodes have no retry by default. */
    sst_retry_policy_init(&no.retry);
    no.retry.initial_interval_s = 0.2;
    sst_code rc = sst_graph_add_node(g, "llm_call", sst__react_llm_call, a, &no, err);
    if (rc == SST_OK) {
        rc = sst_graph_add_node(g, "tool", sst__react_tool, a, NULL, err);
    }
    if (rc == SST_OK) {
        rc = sst_graph_add_node(g, "stop", stop, NULL, NULL, err);
    }
    for (size_t i = 0; rc == SST_OK && i < a->n_hooks; i++) {
        rc = sst_graph_add_node(g, a->hooks[i].node, hook_node, &a->hooks[i], NULL, err);
    }
    /* START to the first before_agent hook, else the loop's entry. */
    const char *entry = a->loop_entry;
    for (size_t i = 0; i < a->n_hooks; i++) {
        if (strstr(a->hooks[i].node, ".before_agent") != NULL) {
            entry = a->hooks[i].node;
            break;
        }
    }
    if (rc == SST_OK) {
        rc = sst_graph_add_edge(g, SST_START, entry, err);
    }
    for (size_t i = 0; rc == SST_OK && i < a->n_hooks; i++) {
        rc = add_router(g, a, a->hooks[i].node, after_hook, &a->hooks[i], a->hooks[i].next,
                        a->hooks[i].next[0] == '\0', err);
    }
    /* The model to its last after_model hook, else to its router. */
    const char *after = NULL;
    for (size_t i = 0; i < a->n_hooks; i++) {
        if (after == NULL && strstr(a->hooks[i].node, ".after_model") != NULL) {
            after = a->hooks[i].node;
        }
    }
    if (rc == SST_OK) {
        rc = after != NULL ? sst_graph_add_edge(g, "llm_call", after, err)
                           : add_router(g, a, "llm_call", after_model, a, NULL, true, err);
    }
    if (rc == SST_OK) {
        rc = sst_graph_add_edge(g, "tool", a->loop_entry, err);
    }
    if (rc == SST_OK) {
        rc = sst_graph_add_edge(g, "stop", a->exit_node, err);
    }
    return rc;
}

void sst__react_free(sst__react *r) {
    sst_compiled_graph_free(r->app);
    sst_graph_free(r->graph);
    sst__agent *a = r->agent;
    if (a != NULL) {
        sst__free(a->hooks);
        sst__free(a);
    }
    memset(r, 0, sizeof *r);
}

sst_code sst__react_build(sst__react *r, const sst__model *model, const sst__tools *tools,
                          const sst__react_opts *opts, sst_error *err) {
    memset(r, 0, sizeof *r);
    sst__agent *a = sst__calloc(1, sizeof *a);
    sst_graph *g = a != NULL ? sst_graph_new(err) : NULL;
    if (g == NULL) {
        sst__free(a);
        return a == NULL ? sst__enomem(err) : sst__code(err);
    }
    r->agent = a;
    r->graph = g;
    a->model = model;
    a->tools = tools;
    a->opts = opts;
    sst_code rc = plan_hooks(a, err);
    if (rc == SST_OK) {
        rc = add_fields(g, a, err);
    }
    if (rc == SST_OK) {
        rc = add_nodes_and_edges(g, a, err);
    }
    sst_compile_opts co;
    sst_compile_opts_init(&co);
    co.store = opts->store;
    if (rc == SST_OK && (r->app = sst_graph_compile(g, &co, err)) == NULL) {
        rc = sst__code(err);
    }
    if (rc != SST_OK) {
        sst__react_free(r);
    }
    return rc;
}
