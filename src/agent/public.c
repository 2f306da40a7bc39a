/* SPDX-License-Identifier: MIT */
/* The public agent API (superstep/agent.h) over the internal pieces. */
#include <stdio.h>

#include "memory_tools.h"
#include "react.h"
#include "redact.h"
#include "superstep/agent.h"
#include "toolset.h"

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

sst_model *sst_model_openai(const char *base_url, const char *model, const char *api_key_env,
                            sst_error *err) {
    if (base_url == NULL || model == NULL || model[0] == '\0') {
        sst__error(err, SST_EINVAL, "model: a base URL and a model name are needed");
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
    m->m.llm = &m->llm;
    return m;
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
    char shown[256]; /* the spec may be a URL with a password in it */
    sst__url_redact(spec != NULL ? spec : "(none)", shown, sizeof shown);
    sst__error(err, SST_EINVAL, "model: '%s' is neither fake:FILE nor an http(s) base URL", shown);
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

void sst_agent_opts_init(sst_agent_opts *o) {
    memset(o, 0, sizeof *o);
    o->max_iterations = 10;
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
