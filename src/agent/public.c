/* SPDX-License-Identifier: MIT */
/* The public agent API (superstep/agent.h) over the internal pieces. */
#include <stdio.h>

#include "memory_tools.h"
#include "react.h"
#include "redact.h"
#include "superstep/agent.h"
#include "toolset.h"
#include "values/build.h"

struct sst_model {
    sst__model m;
    sst_value *params; /* owned object of extra request members */
    sst__fake_model fake;
    sst__llm_config llm;
    char *base_url, *name, *key_env; /* owned copies */
};

struct sst_toolset {
    sst__tools t;
};

struct sst_agent {
    sst__react r;
    sst__react_opts opts;
    sst__structured structured;  /* opts.structured points here when a response_format is set */
    sst_middleware **middleware; /* owned copy of the list (the middleware are borrowed) */
    char *system_prompt;
    sst__memory_tools *memory; /* owned; NULL without memory tools */
    sst__tools tools;          /* with memory: the tool set's tools and the memory tools */
};

static char *dup_or_null(const char *s, bool *oom) {
    if (s == NULL) {
        return NULL;
    }
    char *d = sst__strndup(s, strlen(s));
    *oom = *oom || d == NULL;
    return d;
}

/* A model of @p provider at @p base_url. */
static sst_model *remote_model(sst__llm_provider provider, const char *base_url, const char *model,
                               const char *api_key_env, sst_error *err) {
    if (base_url == NULL || model == NULL || model[0] == '\0') {
        sst__error(err, SST_EINVAL, "model: a base URL and a model name are needed");
        return NULL;
    }
    if (strncmp(base_url, "http://", 7) != 0 && strncmp(base_url, "https://", 8) != 0) {
        char shown[256];
        sst__url_redact(base_url, shown, sizeof shown);
        sst__error(err, SST_EINVAL, "model: '%s' is not an http(s) URL", shown);
        return NULL;
    }
    sst_model *m = sst__calloc(1, sizeof *m);
    if (m == NULL) {
        sst__enomem(err);
        return NULL;
    }
    bool oom = false;
    m->base_url = dup_or_null(base_url, &oom);
    m->name = dup_or_null(model, &oom);
    m->key_env = dup_or_null(api_key_env, &oom);
    if (oom) {
        sst_model_free(m);
        sst__enomem(err);
        return NULL;
    }
    sst__llm_config_init(&m->llm);
    m->llm.base_url = m->base_url;
    m->llm.model = m->name;
    m->llm.api_key_env = m->key_env;
    m->llm.provider = provider;
    m->m.llm = &m->llm;
    return m;
}

const sst__model *sst__model_of(const sst_model *m) {
    return &m->m;
}

sst_model *sst_model_openai(const char *base_url, const char *model, const char *api_key_env,
                            sst_error *err) {
    return remote_model(SST__LLM_OPENAI, base_url, model, api_key_env, err);
}

sst_model *sst_model_anthropic(const char *base_url, const char *model, const char *api_key_env,
                               sst_error *err) {
    return remote_model(SST__LLM_ANTHROPIC,
                        base_url != NULL ? base_url : "https://api.anthropic.com", model,
                        api_key_env, err);
}

sst_code sst_model_cache_prompt(sst_model *m, bool on, sst_error *err) {
    if (m == NULL || m->m.llm == NULL || m->llm.provider != SST__LLM_ANTHROPIC) {
        return sst__error(err, SST_EINVAL, "model: prompt caching is set for Anthropic models");
    }
    m->llm.cache_prompt = on;
    return SST_OK;
}

sst_model *sst_model_fake(const char *path, sst_error *err) {
    sst_model *m = sst__calloc(1, sizeof *m);
    if (m == NULL) {
        sst__enomem(err);
        return NULL;
    }
    if (sst__fake_model_load(&m->fake, path, err) != SST_OK) {
        sst__fake_model_free(&m->fake);
        sst__free(m);
        return NULL;
    }
    m->m.fake = &m->fake;
    return m;
}

sst_model *sst_model_from_spec(const char *spec, const char *model_name, const char *api_key_env,
                               sst_error *err) {
    if (spec != NULL && strncmp(spec, "fake:", 5) == 0) {
        return sst_model_fake(spec + 5, err);
    }
    if (spec != NULL && (strncmp(spec, "http://", 7) == 0 || strncmp(spec, "https://", 8) == 0)) {
        return sst_model_openai(spec, model_name, api_key_env, err);
    }
    /* "provider:MODEL" (the base URL from the environment) or "provider:URL" with model_name. */
    static const struct {
        const char *prefix, *url_env, *url, *key_env;
        sst__llm_provider provider;
    } named[] = {
        {"openai:", "OPENAI_BASE_URL", "https://api.openai.com/v1", "OPENAI_API_KEY",
         SST__LLM_OPENAI},
        {"anthropic:", "ANTHROPIC_BASE_URL", "https://api.anthropic.com", "ANTHROPIC_API_KEY",
         SST__LLM_ANTHROPIC},
    };
    for (size_t i = 0; spec != NULL && i < SST_ARRAY_LEN(named); i++) {
        size_t n = strlen(named[i].prefix);
        if (strncmp(spec, named[i].prefix, n) != 0) {
            continue;
        }
        const char *rest = spec + n;
        const char *key = api_key_env != NULL ? api_key_env : named[i].key_env;
        if (strncmp(rest, "http://", 7) == 0 || strncmp(rest, "https://", 8) == 0) {
            return remote_model(named[i].provider, rest, model_name, key, err);
        }
        const char *url = getenv(named[i].url_env);
        return remote_model(named[i].provider, url != NULL && url[0] != '\0' ? url : named[i].url,
                            rest, key, err);
    }
    char shown[256]; /* the spec may be a URL with a password in it */
    sst__url_redact(spec != NULL ? spec : "(none)", shown, sizeof shown);
    sst__error(err, SST_EINVAL,
               "model: '%s' is none of fake:FILE, an http(s) base URL, openai:MODEL or "
               "anthropic:MODEL",
               shown);
    return NULL;
}

sst_code sst_model_set_param(sst_model *m, const char *name, const sst_value *value,
                             sst_error *err) {
    SST__ERR_LOCAL(err);
    static const char *const reserved[] = {"model", "messages", "tools", "stream"};
    if (m->m.fake != NULL) {
        return sst__error(err, SST_EINVAL, "model: the scripted model takes no parameters");
    }
    for (size_t i = 0; i < SST_ARRAY_LEN(reserved); i++) {
        if (name == NULL || strcmp(name, reserved[i]) == 0) {
            return sst__error(err, SST_EINVAL, "model: '%s' is set by the client itself",
                              name != NULL ? name : "(null)");
        }
    }
    sst_value *p = sst_object_set_take(m->params != NULL ? m->params : sst_object_empty(), name,
                                       sst_value_ref(value), err);
    m->params = NULL;
    m->llm.params = NULL;
    if (p == NULL) {
        return sst__code(err);
    }
    m->params = p;
    m->llm.params = p;
    return SST_OK;
}

void sst_model_free(sst_model *m) {
    if (m == NULL) {
        return;
    }
    sst_value_unref(m->params);
    if (m->m.fake != NULL) {
        sst__fake_model_free(&m->fake);
    }
    sst__free(m->base_url);
    sst__free(m->name);
    sst__free(m->key_env);
    sst__free(m);
}

sst_toolset *sst_toolset_new(sst_error *err) {
    sst_toolset *t = sst__calloc(1, sizeof *t);
    if (t == NULL) {
        sst__enomem(err);
        return NULL;
    }
    sst__tools_init(&t->t);
    return t;
}

sst__tools *sst__toolset_tools(sst_toolset *t) {
    return &t->t;
}

void sst_toolset_free(sst_toolset *t) {
    if (t != NULL) {
        sst__tools_free(&t->t);
        sst__free(t);
    }
}

sst_code sst_toolset_add(sst_toolset *t, const char *name, const char *description,
                         const sst_value *parameters, sst_tool_fn fn, void *user_data,
                         sst_error *err) {
    return sst__tools_add(&t->t, name, description, parameters, fn, user_data, err);
}

/* The strategy @p want names for @p m: AUTO is the provider's own JSON mode for
 * OpenAI-compatible models, a tool for Anthropic and the scripted model. */
static sst__so_strategy strategy_for(const sst_model *m, sst_structured_strategy want) {
    if (want == SST_STRUCTURED_TOOL) {
        return SST__SO_TOOL;
    }
    if (want == SST_STRUCTURED_PROVIDER) {
        return SST__SO_PROVIDER;
    }
    return m->m.llm != NULL && m->llm.provider == SST__LLM_OPENAI ? SST__SO_PROVIDER : SST__SO_TOOL;
}

void sst_model_call_opts_init(sst_model_call_opts *o) {
    memset(o, 0, sizeof *o);
    o->max_attempts = 3;
}

/* One reply of @p m to @p msgs (the scripted model's next, or a request). */
static sst_value *one_reply(sst_model *m, const sst_value *msgs, const sst_value *tools,
                            const sst__structured *so, const sst_model_call_opts *o,
                            sst_error *err) {
    sst_value *params = NULL; /* the scripted model takes none */
    if (m->m.fake == NULL &&
        sst__structured_params(so, m->params, m->llm.provider, &params, err) != SST_OK) {
        return NULL;
    }
    sst_value *reply = sst__model_call(&m->m, msgs, tools, params, NULL, NULL, o->on_token,
                                       o->token_user_data, err);
    sst_value_unref(params);
    return reply;
}

/* The tools a call offers: the caller's, and the structured answer's (tool strategy). */
static sst_value *call_tools(const sst_value *tools, const sst__structured *so, sst_error *err) {
    sst_value *all = sst_array_empty();
    for (size_t i = 0; all != NULL && i < sst_array_len(tools); i++) {
        all = sst__push_take(all, sst_value_ref(sst_array_get(tools, i)), err);
    }
    if (all != NULL && so != NULL && so->strategy == SST__SO_TOOL) {
        all = sst__push_take(all, sst__structured_tool(so, err), err);
    }
    return all;
}

/* The structured call's loop: a reply, checked; a wrong answer goes back with its error. */
static sst_value *structured_call(sst_model *m, const sst_value *messages,
                                  const sst__structured *so, const sst_model_call_opts *o,
                                  sst_error *err) {
    sst_value *msgs = sst_value_ref(messages);
    sst_value *tools = call_tools(o->tools, so, err);
    sst_value *out = NULL;
    for (unsigned attempt = 1; msgs != NULL && tools != NULL; attempt++) {
        sst_value *reply = one_reply(m, msgs, tools, so, o, err);
        sst__so_outcome oc = {0};
        if (reply == NULL || sst__structured_check(so, reply, &oc, err) != SST_OK) {
            sst_value_unref(reply);
            break;
        }
        if (oc.value != NULL || oc.pending) { /* pending: calls of the caller's tools */
            out = oc.value != NULL ? sst__set_take(reply, "structured_response", oc.value, err)
                                   : reply;
            oc.value = NULL;
            sst__so_outcome_free(&oc);
            break;
        }
        if (attempt >= so->max_attempts) {
            sst__error(err, SST_EINVAL,
                       "structured output: no valid answer after %u attempts; the last: %s",
                       so->max_attempts, oc.error);
            sst_value_unref(reply);
            sst__so_outcome_free(&oc);
            break;
        }
        msgs = sst__push_take(msgs, reply, err);
        for (size_t i = 0; msgs != NULL && i < sst_array_len(oc.feedback); i++) {
            msgs = sst__push_take(msgs, sst_value_ref(sst_array_get(oc.feedback, i)), err);
        }
        sst__so_outcome_free(&oc);
    }
    sst_value_unref(msgs);
    sst_value_unref(tools);
    return out;
}

sst_value *sst_model_invoke(sst_model *m, const sst_value *messages, const sst_model_call_opts *o,
                            sst_error *err) {
    SST__ERR_LOCAL(err);
    sst_model_call_opts def;
    if (o == NULL) {
        sst_model_call_opts_init(&def);
        o = &def;
    }
    if (m == NULL || !sst_is_array(messages)) {
        sst__error(err, SST_EINVAL, "model invoke: a model and an array of messages are needed");
        return NULL;
    }
    if (o->response_format == NULL) {
        return one_reply(m, messages, o->tools, NULL, o, err);
    }
    sst__structured so;
    if (sst__structured_init(&so, o->response_format, strategy_for(m, o->strategy), o->max_attempts,
                             err) != SST_OK) {
        return NULL;
    }
    sst_value *out = structured_call(m, messages, &so, o, err);
    sst__structured_free(&so);
    return out;
}

sst_code sst_toolset_extend(sst_toolset *t, const sst_toolset *from, sst_error *err) {
    return sst__tools_extend(&t->t, &from->t, err);
}

void sst_agent_opts_init(sst_agent_opts *o) {
    memset(o, 0, sizeof *o);
    o->max_iterations = 10;
    o->structured_attempts = 3;
}

sst_agent *sst_agent_new(sst_model *model, const sst_toolset *tools, const sst_agent_opts *opts,
                         sst_error *err) {
    SST__ERR_LOCAL(err); /* the graph is built through several calls that need the code */
    static const sst__tools no_tools;
    if (model == NULL) {
        sst__error(err, SST_EINVAL, "agent: a model is needed");
        return NULL;
    }
    sst_agent_opts def;
    if (opts == NULL) {
        sst_agent_opts_init(&def);
        opts = &def;
    }
    if (opts->max_iterations < 1) {
        sst__error(err, SST_EINVAL, "agent: max_iterations must be at least 1");
        return NULL;
    }
    sst_agent *a = sst__calloc(1, sizeof *a);
    bool oom = a == NULL;
    if (a != NULL) {
        a->system_prompt = dup_or_null(opts->system_prompt, &oom);
    }
    if (oom) {
        sst_agent_free(a);
        sst__enomem(err);
        return NULL;
    }
    sst__react_opts_init(&a->opts);
    a->opts.system_prompt = a->system_prompt;
    a->opts.max_iterations = opts->max_iterations;
    a->opts.approve_tools = opts->approve_tools;
    a->opts.on_token = opts->on_token;
    a->opts.token_ud = opts->token_user_data;
    a->opts.on_event = opts->on_event;
    a->opts.event_ud = opts->event_user_data;
    a->opts.store = opts->store;
    if (opts->middleware != NULL && opts->n_middleware > 0) { /* the list is copied */
        a->middleware = sst__calloc(opts->n_middleware, sizeof *a->middleware);
        if (a->middleware == NULL) {
            sst_agent_free(a);
            sst__enomem(err);
            return NULL;
        }
        for (size_t i = 0; i < opts->n_middleware; i++) {
            if (opts->middleware[i] == NULL) {
                sst_agent_free(a);
                sst__error(err, SST_EINVAL, "agent: middleware %zu is NULL", i + 1);
                return NULL;
            }
            a->middleware[i] = opts->middleware[i];
        }
        a->opts.middleware = a->middleware;
        a->opts.n_middleware = opts->n_middleware;
    }
    if (opts->response_format != NULL) {
        if (sst__structured_init(&a->structured, opts->response_format,
                                 strategy_for(model, opts->structured_strategy),
                                 opts->structured_attempts, err) != SST_OK) {
            sst_agent_free(a);
            return NULL;
        }
        a->opts.structured = &a->structured;
    }
    const sst__tools *use = tools != NULL ? &tools->t : &no_tools;
    if (opts->memory_namespace != NULL) {
        /* The memory tools join a copy of the list: the caller's tool set stays as it is. */
        a->memory = sst__memory_tools_new(opts->memory_namespace, opts->n_memory_namespace, err);
        if (a->memory == NULL || sst__tools_extend(&a->tools, use, err) != SST_OK ||
            sst__memory_tools_add(&a->tools, a->memory, err) != SST_OK) {
            sst_agent_free(a);
            return NULL;
        }
        use = &a->tools;
    }
    if (sst__react_build(&a->r, &model->m, use, &a->opts, err) != SST_OK) {
        sst_agent_free(a);
        return NULL;
    }
    return a;
}

void sst_agent_free(sst_agent *a) {
    if (a == NULL) {
        return;
    }
    sst__react_free(&a->r);
    sst__structured_free(&a->structured);
    sst__free(a->middleware);
    sst__tools_free(&a->tools);
    sst__memory_tools_free(a->memory);
    sst__free(a->system_prompt);
    sst__free(a);
}

uint64_t sst_agent_recursion_limit(const sst_agent *a) {
    return 2 * (uint64_t)a->opts.max_iterations + 1;
}

const sst_compiled_graph *sst_agent_graph(const sst_agent *a) {
    return a->r.app;
}
