/* SPDX-License-Identifier: MIT */
/*
 * LangChain's HumanInTheLoopMiddleware: after a reply that calls tools named
 * in its configuration, one interrupt asks a human to decide on each such
 * call (approve, edit, reject, respond); the reply and the answers are then
 * written so that only approved or edited calls run.
 */
#include <stdio.h>

#include "middleware.h"
#include "superstep/json.h"
#include "values/build.h"

static const char *const k_decisions[] = {"approve", "edit", "reject", "respond"};

typedef struct hitl {
    sst_value *config; /* owned: {tool: {"allowed_decisions": [...], "description"?}} */
} hitl;

static void free_hitl(void *ud) {
    hitl *h = ud;
    sst_value_unref(h->config);
    sst__free(h);
}

static bool known_decision(const sst_value *v) {
    for (size_t i = 0; sst_is_string(v) && i < SST_ARRAY_LEN(k_decisions); i++) {
        if (strcmp(sst_string_cstr(v), k_decisions[i]) == 0) {
            return true;
        }
    }
    return false;
}

/* One tool's entry, normalised: {"allowed_decisions", "description"?}, or NULL when off. */
static sst_value *normalise(const char *tool, const sst_value *v, sst_error *err) {
    if (sst_is_bool(v) && !sst_bool_value(v)) {
        return NULL;
    }
    sst_value *all = sst_array_empty();
    for (size_t i = 0; all != NULL && i < SST_ARRAY_LEN(k_decisions); i++) {
        all = sst__push_take(all, sst_string_new(k_decisions[i], err), err);
    }
    if (sst_is_bool(v)) {
        return sst__set_take(sst_object_empty(), "allowed_decisions", all, err);
    }
    const sst_value *allowed = sst_object_get(v, "allowed_decisions");
    const sst_value *desc = sst_object_get(v, "description");
    bool ok = sst_is_object(v) && (allowed == NULL || sst_is_array(allowed)) &&
              (desc == NULL || sst_is_string(desc));
    for (size_t i = 0; ok && i < sst_array_len(allowed); i++) {
        ok = known_decision(sst_array_get(allowed, i));
    }
    if (!ok) {
        sst_value_unref(all);
        sst__error(err, SST_EINVAL,
                   "human in the loop: tool '%s': expected true, false or {\"allowed_decisions\": "
                   "[\"approve\", \"edit\", \"reject\", \"respond\"], \"description\": \"...\"}",
                   tool);
        return NULL;
    }
    sst_value *e =
        sst__set_take(sst_object_empty(), "allowed_decisions",
                      allowed != NULL ? (sst_value_unref(all), sst_value_ref(allowed)) : all, err);
    return desc != NULL ? sst__set_take(e, "description", sst_value_ref(desc), err) : e;
}

/* A call's arguments as a value: its JSON text parsed, or the text when it is not JSON. */
static sst_value *call_args(const sst_value *call, sst_error *err) {
    const sst_value *text = sst_object_get(sst_object_get(call, "function"), "arguments");
    if (!sst_is_string(text)) {
        return sst_object_empty();
    }
    sst_error local = {0};
    sst_value *v = sst_json_read(sst_string_cstr(text), sst_string_len(text), NULL, &local);
    return v != NULL ? v : sst_string_newn(sst_string_cstr(text), sst_string_len(text), err);
}

/* {"name", "args", "description"} for @p call, whose entry is @p entry. */
static sst_value *action_request(const sst_value *call, const sst_value *entry, sst_error *err) {
    sst_value *args = call_args(call, err);
    sst_value *r =
        sst__set_take(sst_object_empty(), "name", sst_string_new(sst__call_name(call), err), err);
    const sst_value *desc = sst_object_get(entry, "description");
    char *json = args != NULL ? sst_json_write(args, SST_JSON_COMPACT, NULL, err) : NULL;
    char text[1024];
    snprintf(text, sizeof text, "Tool execution requires approval\n\nTool: %s\nArgs: %.900s",
             sst__call_name(call), json != NULL ? json : "");
    sst_free(json);
    r = sst__set_take(r, "args", args, err);
    return sst__set_take(r, "description",
                         desc != NULL ? sst_value_ref(desc) : sst_string_new(text, err), err);
}

/* Applies decision @p d to @p call; the call to keep (new) and, for reject and respond,
 * the tool message answering it (*answer, new). NULL with @p err for a bad decision. */
static sst_value *apply(const sst_value *call, const sst_value *entry, const sst_value *d,
                        sst_value **answer, sst_error *err) {
    const sst_value *type = sst_object_get(d, "type");
    const sst_value *allowed = sst_object_get(entry, "allowed_decisions");
    bool ok = false;
    for (size_t i = 0; sst_is_string(type) && i < sst_array_len(allowed); i++) {
        ok = ok || sst_value_equal(type, sst_array_get(allowed, i));
    }
    if (!ok) {
        sst__error(err, SST_EINVAL,
                   "human in the loop: the decision for '%s' must be an object whose \"type\" is "
                   "one of its allowed decisions",
                   sst__call_name(call));
        return NULL;
    }
    const char *t = sst_string_cstr(type);
    const sst_value *message = sst_object_get(d, "message");
    if (strcmp(t, "approve") == 0) {
        return sst_value_ref(call);
    }
    if (strcmp(t, "reject") == 0 || strcmp(t, "respond") == 0) {
        char text[1024];
        if (sst_is_string(message)) {
            snprintf(text, sizeof text, "%s%s", strcmp(t, "reject") == 0 ? "error: " : "",
                     sst_string_cstr(message));
        } else if (strcmp(t, "reject") == 0) {
            const sst_value *id = sst_object_get(call, "id");
            snprintf(text, sizeof text,
                     "error: the user rejected the tool call for '%s' with id %s",
                     sst__call_name(call), sst_is_string(id) ? sst_string_cstr(id) : "");
        } else {
            sst__error(err, SST_EINVAL,
                       "human in the loop: a \"respond\" decision for '%s' needs a \"message\"",
                       sst__call_name(call));
            return NULL;
        }
        *answer = sst__tool_message(call, text, err);
        return *answer != NULL ? sst_value_ref(call) : NULL;
    }
    const sst_value *edited = sst_object_get(d, "edited_action");
    const sst_value *name = sst_object_get(edited, "name");
    const sst_value *args = sst_object_get(edited, "args");
    if (!sst_is_string(name) || !sst_is_object(args)) {
        sst__error(err, SST_EINVAL,
                   "human in the loop: an \"edit\" decision for '%s' needs \"edited_action\": "
                   "{\"name\": \"...\", \"args\": {...}}",
                   sst__call_name(call));
        return NULL;
    }
    char *json = sst_json_write(args, SST_JSON_COMPACT, NULL, err);
    sst_value *fn = sst_value_ref(sst_object_get(call, "function"));
    fn = sst__set_take(fn, "name", sst_value_ref(name), err);
    fn = sst__set_take(fn, "arguments", json != NULL ? sst_string_new(json, err) : NULL, err);
    sst_free(json);
    return sst__set_take(sst_value_ref(call), "function", fn, err);
}

static sst_code after_model(sst_node_ctx *ctx, void *ud) {
    const hitl *h = ud;
    const sst_value *msgs = sst_object_get(sst_node_state(ctx), "messages");
    size_t ai = sst__last_ai_index(msgs);
    const sst_value *reply = ai != SIZE_MAX ? sst_array_get(msgs, ai) : NULL;
    const sst_value *calls = sst_object_get(reply, "tool_calls");
    sst_error err = {0};
    sst_value *requests = sst_array_empty(), *configs = sst_array_empty();
    for (size_t i = 0; requests != NULL && configs != NULL && i < sst_array_len(calls); i++) {
        const sst_value *call = sst_array_get(calls, i);
        const sst_value *entry = sst_object_get(h->config, sst__call_name(call));
        if (entry == NULL || sst__call_answered(msgs, ai, sst_object_get(call, "id"))) {
            continue;
        }
        requests = sst__push_take(requests, action_request(call, entry, &err), &err);
        sst_value *rc = sst__set_take(sst_object_empty(), "action_name",
                                      sst_string_new(sst__call_name(call), &err), &err);
        rc = sst__set_take(rc, "allowed_decisions",
                           sst_value_ref(sst_object_get(entry, "allowed_decisions")), &err);
        configs = sst__push_take(configs, rc, &err);
    }
    if (requests == NULL || configs == NULL || sst_array_len(requests) == 0) {
        size_t asked = sst_array_len(requests);
        sst_value_unref(requests);
        sst_value_unref(configs);
        return asked == 0 && err.code == SST_OK
                   ? SST_OK
                   : sst_node_fail(ctx, sst__code(&err), "%s", err.msg);
    }
    size_t n_asked = sst_array_len(requests);
    sst_value *ask = sst__set_take(sst_object_empty(), "action_requests", requests, &err);
    ask = sst__set_take(ask, "review_configs", configs, &err);
    if (ask == NULL) {
        return sst_node_fail(ctx, sst__code(&err), "%s", err.msg);
    }
    const sst_value *resume = sst_node_interrupt(ctx, ask);
    if (resume == NULL) {
        return SST_EINTERRUPT;
    }
    const sst_value *decisions = sst_object_get(resume, "decisions");
    if (!sst_is_array(decisions) || sst_array_len(decisions) != n_asked) {
        return sst_node_fail(ctx, SST_EINVAL,
                             "human in the loop: resume with {\"decisions\": [...]}, one decision "
                             "for each of the %zu action requests, in order",
                             n_asked);
    }
    /* The reply again, with the calls as decided, then the answers of rejected ones. */
    sst_value *kept = sst_array_empty(), *answers = sst_array_empty();
    size_t k = 0;
    for (size_t i = 0; kept != NULL && answers != NULL && i < sst_array_len(calls); i++) {
        const sst_value *call = sst_array_get(calls, i);
        const sst_value *entry = sst_object_get(h->config, sst__call_name(call));
        if (entry == NULL || sst__call_answered(msgs, ai, sst_object_get(call, "id"))) {
            kept = sst__push_take(kept, sst_value_ref(call), &err);
            continue;
        }
        sst_value *answer = NULL;
        sst_value *c = apply(call, entry, sst_array_get(decisions, k++), &answer, &err);
        if (c == NULL) {
            sst_value_unref(kept);
            sst_value_unref(answers);
            return sst_node_fail(ctx, sst__code(&err), "%s", err.msg);
        }
        kept = sst__push_take(kept, c, &err);
        if (answer != NULL) {
            answers = sst__push_take(answers, answer, &err);
        }
    }
    sst_value *updated = sst__set_take(sst_value_ref(reply), "tool_calls", kept, &err);
    sst_value *list = sst__push_take(sst_array_empty(), updated, &err);
    for (size_t i = 0; list != NULL && i < sst_array_len(answers); i++) {
        list = sst__push_take(list, sst_value_ref(sst_array_get(answers, i)), &err);
    }
    sst_value_unref(answers);
    sst_code rc = list != NULL ? sst_node_update(ctx, "messages", list, &err) : sst__code(&err);
    return rc == SST_OK ? SST_OK : sst_node_fail(ctx, rc, "%s", err.msg);
}

sst_middleware *sst_middleware_human_in_the_loop(const sst_value *interrupt_on, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (!sst_is_object(interrupt_on)) {
        sst__error(err, SST_EINVAL,
                   "human in the loop: interrupt_on must be an object of tool names");
        return NULL;
    }
    hitl *h = sst__calloc(1, sizeof *h);
    if (h == NULL) {
        sst__enomem(err);
        return NULL;
    }
    h->config = sst_object_empty();
    for (size_t i = 0; h->config != NULL && i < sst_object_len(interrupt_on); i++) {
        const char *tool = sst_string_cstr(sst_object_key_at(interrupt_on, i));
        sst_error local = {0}; /* NULL without an error: a tool turned off */
        sst_value *e = normalise(tool, sst_object_value_at(interrupt_on, i), &local);
        if (e == NULL && local.code != SST_OK) {
            *err = local;
            free_hitl(h);
            return NULL;
        }
        if (e != NULL) {
            h->config = sst__set_take(h->config, tool, e, err);
        }
    }
    sst_middleware_hooks hooks = {
        .after_model = after_model, .user_data = h, .free_user_data = free_hitl};
    sst_middleware *m =
        h->config != NULL ? sst_middleware_new("HumanInTheLoopMiddleware", &hooks, err) : NULL;
    if (m == NULL) {
        free_hitl(h);
    }
    return m;
}
