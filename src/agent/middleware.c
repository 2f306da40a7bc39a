/* SPDX-License-Identifier: MIT */
/* Agent middleware: the object, model requests, wrap chains and jumps; see middleware.h. */
#include "middleware.h"

#include <stdio.h>

#include "values/build.h"

/* ---- the object ---- */

sst_middleware *sst_middleware_new(const char *name, const sst_middleware_hooks *hooks,
                                   sst_error *err) {
    if (name == NULL || name[0] == '\0' || strlen(name) > 100 || strpbrk(name, ".:|") != NULL ||
        hooks == NULL) {
        sst__error(err, SST_EINVAL,
                   "middleware: a name (1 to 100 bytes, without '.', ':' or '|') and hooks are "
                   "needed");
        return NULL;
    }
    const sst_middleware_hooks *h = hooks;
    if (h->before_agent == NULL && h->before_model == NULL && h->after_model == NULL &&
        h->after_agent == NULL && h->wrap_model_call == NULL && h->wrap_tool_call == NULL &&
        h->add_fields == NULL) {
        sst__error(err, SST_EINVAL, "middleware '%s': it has no hook", name);
        return NULL;
    }
    sst_middleware *m = sst__calloc(1, sizeof *m);
    char *copy = sst__strndup(name, strlen(name));
    if (m == NULL || copy == NULL) {
        sst__free(m);
        sst__free(copy);
        sst__enomem(err);
        return NULL;
    }
    m->name = copy;
    m->h = *hooks;
    return m;
}

void sst_middleware_free(sst_middleware *m) {
    if (m == NULL) {
        return;
    }
    if (m->h.free_user_data != NULL) {
        m->h.free_user_data(m->h.user_data);
    }
    sst__free(m->name);
    sst__free(m);
}

const char *sst_middleware_name(const sst_middleware *m) {
    return m->name;
}

/* ---- model requests ---- */

const sst_value *sst_model_request_messages(const sst_model_request *r) {
    return r->messages;
}

sst_code sst_model_request_set_messages(sst_model_request *r, sst_value *messages, sst_error *err) {
    if (!sst_is_array(messages)) {
        sst_value_unref(messages);
        return sst__error(err, SST_EINVAL, "model request: messages must be an array");
    }
    sst_value_unref(r->messages);
    r->messages = messages;
    return SST_OK;
}

const char *sst_model_request_system_prompt(const sst_model_request *r) {
    return r->system_prompt;
}

sst_code sst_model_request_set_system_prompt(sst_model_request *r, const char *prompt,
                                             sst_error *err) {
    char *copy = prompt != NULL ? sst__strndup(prompt, strlen(prompt)) : NULL;
    if (prompt != NULL && copy == NULL) {
        return sst__enomem(err);
    }
    sst__free(r->system_prompt);
    r->system_prompt = copy;
    return SST_OK;
}

const sst_value *sst_model_request_tools(const sst_model_request *r) {
    return r->tools;
}

sst_code sst_model_request_set_tools(sst_model_request *r, sst_value *tools, sst_error *err) {
    if (!sst_is_array(tools)) {
        sst_value_unref(tools);
        return sst__error(err, SST_EINVAL, "model request: tools must be an array");
    }
    sst_value_unref(r->tools);
    r->tools = tools;
    return SST_OK;
}

void sst_model_request_set_model(sst_model_request *r, sst_model *m) {
    if (m != NULL) {
        r->model = sst__model_of(m);
    }
}

sst_node_ctx *sst_model_request_node(sst_model_request *r) {
    return r->ctx;
}

sst_value *sst__request_wire_messages(const sst_model_request *r, sst_error *err) {
    sst_value *msgs = sst_array_empty();
    if (r->system_prompt != NULL) {
        sst_value *sys =
            sst__set_take(sst_object_empty(), "role", sst_string_new("system", err), err);
        sys = sst__set_take(sys, "content", sst_string_new(r->system_prompt, err), err);
        msgs = sst__push_take(msgs, sys, err);
    }
    for (size_t i = 0; msgs != NULL && i < sst_array_len(r->messages); i++) {
        msgs = sst__push_take(msgs, sst_value_ref(sst_array_get(r->messages, i)), err);
    }
    return msgs;
}

/* ---- chains ---- */

typedef struct model_link {
    sst_middleware *const *mw;
    size_t n, at;
    sst__model_final_fn final;
    void *final_ud;
} model_link;

static sst_value *model_next(sst_model_request *req, void *data, sst_error *err) {
    model_link next = *(const model_link *)data;
    while (next.at < next.n && next.mw[next.at]->h.wrap_model_call == NULL) {
        next.at++; /* a middleware without the hook is passed over */
    }
    if (next.at == next.n) {
        return next.final(req, next.final_ud, err);
    }
    const sst_middleware *m = next.mw[next.at];
    next.at++;
    sst_value *reply = m->h.wrap_model_call(req, model_next, &next, m->h.user_data, err);
    if (reply == NULL && err->code == SST_OK) {
        sst__error(err, SST_ETASK, "middleware '%s': wrap_model_call gave no reply", m->name);
    }
    return reply;
}

sst_value *sst__run_model_chain(sst_middleware *const *mw, size_t n, sst_model_request *req,
                                sst__model_final_fn final, void *final_ud, sst_error *err) {
    model_link l = {mw, n, 0, final, final_ud};
    return model_next(req, &l, err);
}

typedef struct tool_link {
    sst_middleware *const *mw;
    size_t n, at;
    sst_node_ctx *ctx;
    sst__tool_final_fn final;
    void *final_ud;
} tool_link;

static sst_value *tool_next(const sst_value *call, void *data, sst_error *err) {
    tool_link next = *(const tool_link *)data;
    while (next.at < next.n && next.mw[next.at]->h.wrap_tool_call == NULL) {
        next.at++;
    }
    if (next.at == next.n) {
        return next.final(call, next.final_ud, err);
    }
    const sst_middleware *m = next.mw[next.at];
    next.at++;
    sst_value *msg = m->h.wrap_tool_call(call, next.ctx, tool_next, &next, m->h.user_data, err);
    if (msg == NULL && err->code == SST_OK) {
        sst__error(err, SST_ETASK, "middleware '%s': wrap_tool_call gave no tool message", m->name);
    }
    return msg;
}

sst_value *sst__run_tool_chain(sst_middleware *const *mw, size_t n, const sst_value *call,
                               sst_node_ctx *ctx, sst__tool_final_fn final, void *final_ud,
                               sst_error *err) {
    tool_link l = {mw, n, 0, ctx, final, final_ud};
    return tool_next(call, &l, err);
}

/* ---- node hooks and jumps ---- */

/* The node hook running on this thread (hooks run on their node's thread, start to end). */
static _Thread_local sst__hook_run *current;

sst_code sst__run_hook(sst_code (*fn)(sst_node_ctx *, void *), void *ud, sst_node_ctx *ctx,
                       const char **jump) {
    sst__hook_run run = {ctx, NULL};
    sst__hook_run *outer = current;
    current = &run;
    sst_code rc = fn(ctx, ud);
    current = outer;
    *jump = run.jump;
    return rc;
}

sst_code sst_agent_jump_to(sst_node_ctx *ctx, const char *target, sst_error *err) {
    static const char *const targets[] = {"model", "tools", "end"};
    if (current == NULL || current->ctx != ctx) {
        return sst__error(err, SST_EINVAL, "jump_to: only a middleware's node hook may jump");
    }
    for (size_t i = 0; target != NULL && i < SST_ARRAY_LEN(targets); i++) {
        if (strcmp(target, targets[i]) == 0) {
            current->jump = targets[i];
            return SST_OK;
        }
    }
    return sst__error(err, SST_EINVAL,
                      "jump_to: expected \"model\", \"tools\" or \"end\", got '%s'",
                      target != NULL ? target : "(null)");
}

/* ---- helpers ---- */

sst_value *sst__tool_message(const sst_value *call, const char *content, sst_error *err) {
    return sst__tool_message_take(call, sst_string_new(content, err), err);
}

sst_value *sst__message_take(const char *role, sst_value *content, sst_error *err) {
    sst_value *m = sst__set_take(sst_object_empty(), "role", sst_string_new(role, err), err);
    return sst__set_take(m, "content", content, err);
}

bool sst__message_is(const sst_value *m, const char *role) {
    const sst_value *r = sst_object_get(m, "role");
    if (!sst_is_string(r)) {
        r = sst_object_get(m, "type"); /* LangChain's shape: "ai", "tool" */
        if (sst_is_string(r) && strcmp(role, "assistant") == 0) {
            return strcmp(sst_string_cstr(r), "ai") == 0;
        }
    }
    return sst_is_string(r) && strcmp(sst_string_cstr(r), role) == 0;
}

size_t sst__last_ai_index(const sst_value *msgs) {
    for (size_t i = sst_array_len(msgs); i > 0; i--) {
        if (sst__message_is(sst_array_get(msgs, i - 1), "assistant")) {
            return i - 1;
        }
    }
    return SIZE_MAX;
}

bool sst__call_answered(const sst_value *msgs, size_t from, const sst_value *id) {
    for (size_t i = from + 1; i < sst_array_len(msgs); i++) {
        const sst_value *m = sst_array_get(msgs, i);
        if (sst__message_is(m, "tool") && sst_value_equal(sst_object_get(m, "tool_call_id"), id)) {
            return true;
        }
    }
    return false;
}
