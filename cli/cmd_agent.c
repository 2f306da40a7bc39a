/* SPDX-License-Identifier: MIT */
/*
 * superstep agent: a ReAct agent on a durable thread, from the command line.
 *
 *   superstep agent --model URL|fake:FILE|openai:MODEL|anthropic:MODEL [options] PROMPT
 *
 * (its options: the agent usage in cmd_usage.c, `superstep help agent`).
 * Tokens are printed as they stream in; --thread continues a conversation. The
 * run's token usage is printed at the end (and is "usage" in --json).
 */
#define _POSIX_C_SOURCE 200809L
#include "cmd_agent.h"
#include "cmd_args.h"
#include "cmd_db.h"
#include "cmd_trace.h"
#include "cmd_usage.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "superstep/agent.h"
#include "superstep/checkpoint.h"
#include "superstep/json.h"
#include "superstep/lua.h"
#include "superstep/mcp.h"

typedef struct agent_args {
    const char *model, *model_name, *key_env, *tools, *system, *thread, *db, *prompt;
    long max_iterations;
    size_t memory_limit; /* --memory-limit for the tools script's Lua state; 0: the default */
    bool json;
    bool cont;    /* --continue: finish the thread's interrupted or crashed run, no new prompt */
    bool approve; /* --approve: each tool call waits for --resume */
    const char *resume; /* --resume approve|reject|JSON: answers every pending tool call */
    const char *temperature, *max_tokens, *tool_choice; /* request parameters */
    const char *response_format;                        /* a schema file or its JSON text */
    const char *strategy;                               /* --structured-strategy */
    bool cache_prompt;
    /* Middleware. */
    const char *interrupt_on[16]; /* --interrupt-on TOOL: human in the loop */
    size_t n_interrupt_on;
    long limit_model_calls, limit_tool_calls; /* per run; 0: none */
    long summarize_at, summarize_keep;        /* tokens; messages kept (default 6) */
    const char *fallback;                     /* --fallback-model SPEC */
    const char *otlp_endpoint;                /* --otlp-endpoint URL */
    const char *mcp[8];                       /* --mcp "CMD ARGS" (stdio servers) */
    size_t n_mcp;
    const char *mcp_url[8]; /* --mcp-url URL (Streamable HTTP servers) */
    size_t n_mcp_url;
    bool trace_content;
} agent_args;

static int usage(const char *fmt, const char *arg) {
    return sst_cli_usage_error("agent", fmt, arg);
}

static sst_code print_token(const char *text, size_t len, void *ud) {
    (void)ud;
    fwrite(text, 1, len, stdout);
    fflush(stdout);
    return SST_OK;
}

static int parse(int argc, char **argv, agent_args *a) {
    memset(a, 0, sizeof *a);
    a->model_name = "gpt-4o-mini";
    a->max_iterations = 10;
    a->summarize_keep = 6;
    for (int i = 2; i < argc; i++) {
        const char *o = argv[i];
        const char **slot = NULL;
        if (strcmp(o, "--json") == 0) {
            a->json = true;
            continue;
        } else if (strcmp(o, "--continue") == 0) {
            a->cont = true;
            continue;
        } else if (strcmp(o, "--approve") == 0) {
            a->approve = true;
            continue;
        } else if (strcmp(o, "--cache-prompt") == 0) {
            a->cache_prompt = true;
            continue;
        } else if (strcmp(o, "--trace-content") == 0) {
            a->trace_content = true;
            continue;
        } else if (strcmp(o, "--otlp-endpoint") == 0) {
            slot = &a->otlp_endpoint;
        } else if (strcmp(o, "--response-format") == 0) {
            slot = &a->response_format;
        } else if (strcmp(o, "--structured-strategy") == 0) {
            slot = &a->strategy;
        } else if (strcmp(o, "--resume") == 0) {
            slot = &a->resume;
        } else if (strcmp(o, "--temperature") == 0) {
            slot = &a->temperature;
        } else if (strcmp(o, "--max-tokens") == 0) {
            slot = &a->max_tokens;
        } else if (strcmp(o, "--tool-choice") == 0) {
            slot = &a->tool_choice;
        } else if (strcmp(o, "--model") == 0) {
            slot = &a->model;
        } else if (strcmp(o, "--model-name") == 0) {
            slot = &a->model_name;
        } else if (strcmp(o, "--api-key-env") == 0) {
            slot = &a->key_env;
        } else if (strcmp(o, "--tools") == 0) {
            slot = &a->tools;
        } else if (strcmp(o, "--system") == 0) {
            slot = &a->system;
        } else if (strcmp(o, "--thread") == 0) {
            slot = &a->thread;
        } else if (strcmp(o, "--db") == 0) {
            slot = &a->db;
        } else if (strcmp(o, "--max-iterations") == 0) {
            if (i + 1 >= argc) {
                return usage("option '%s' needs a value", o);
            }
            char *end;
            errno = 0;
            a->max_iterations = strtol(argv[++i], &end, 10);
            if (errno != 0 || *end != '\0' || a->max_iterations < 1 || a->max_iterations > 1000) {
                return usage("--max-iterations: expected 1 to 1000, got '%s'", argv[i]);
            }
            continue;
        } else if (strcmp(o, "--mcp") == 0 || strcmp(o, "--mcp-url") == 0) {
            if (i + 1 >= argc) {
                return usage("option '%s' needs a value", o);
            }
            bool url = strcmp(o, "--mcp-url") == 0;
            size_t *n = url ? &a->n_mcp_url : &a->n_mcp;
            if (*n == 8) {
                return usage("%s: at most 8 servers", o);
            }
            (url ? a->mcp_url : a->mcp)[(*n)++] = argv[++i];
            continue;
        } else if (strcmp(o, "--interrupt-on") == 0) {
            if (i + 1 >= argc) {
                return usage("option '%s' needs a value", o);
            }
            if (a->n_interrupt_on == sizeof a->interrupt_on / sizeof a->interrupt_on[0]) {
                return usage("%s", "--interrupt-on: at most 16 tools");
            }
            a->interrupt_on[a->n_interrupt_on++] = argv[++i];
            continue;
        } else if (strcmp(o, "--limit-model-calls") == 0 || strcmp(o, "--limit-tool-calls") == 0 ||
                   strcmp(o, "--summarize-at") == 0 || strcmp(o, "--summarize-keep") == 0) {
            if (i + 1 >= argc) {
                return usage("option '%s' needs a value", o);
            }
            char *end;
            errno = 0;
            long v = strtol(argv[++i], &end, 10);
            bool keep = strcmp(o, "--summarize-keep") == 0;
            if (errno != 0 || *end != '\0' || v < (keep ? 0 : 1) || v > 100000000) {
                char msg[160];
                snprintf(msg, sizeof msg, "%s: expected a number of %s, got '%.60s'", o,
                         keep ? "messages" : "at least 1", argv[i]);
                return usage("%s", msg);
            }
            long *slot_n = strcmp(o, "--limit-model-calls") == 0  ? &a->limit_model_calls
                           : strcmp(o, "--limit-tool-calls") == 0 ? &a->limit_tool_calls
                           : keep                                 ? &a->summarize_keep
                                                                  : &a->summarize_at;
            *slot_n = v;
            continue;
        } else if (strcmp(o, "--fallback-model") == 0) {
            slot = &a->fallback;
        } else if (strcmp(o, "--memory-limit") == 0) {
            if (i + 1 >= argc) {
                return usage("option '%s' needs a value", o);
            }
            if (!sst_cli_parse_bytes(argv[++i], &a->memory_limit)) {
                return usage("--memory-limit: expected a number of bytes above 0, optionally "
                             "with K, M or G (e.g. 500M), got '%s'",
                             argv[i]);
            }
            continue;
        } else if (o[0] == '-' && o[1] != '\0') {
            return usage("unknown option '%s'", o);
        } else if (a->prompt == NULL) {
            a->prompt = o;
            continue;
        } else {
            return usage("unexpected argument '%s' (quote the prompt)", o);
        }
        if (i + 1 >= argc) {
            return usage("option '%s' needs a value", o);
        }
        *slot = argv[++i];
    }
    if (a->model == NULL) {
        return usage("%s", "--model URL|fake:FILE|openai:MODEL|anthropic:MODEL is required");
    }
    if (a->strategy != NULL && strcmp(a->strategy, "auto") != 0 &&
        strcmp(a->strategy, "tool") != 0 && strcmp(a->strategy, "provider") != 0) {
        return usage("--structured-strategy: expected auto, tool or provider, got '%s'",
                     a->strategy);
    }
    if (a->key_env == NULL &&
        (strncmp(a->model, "http://", 7) == 0 || strncmp(a->model, "https://", 8) == 0)) {
        a->key_env = "OPENAI_API_KEY"; /* a bare URL is OpenAI-compatible */
    }
    if (a->resume != NULL) {
        a->cont = true; /* a resume continues the thread's run */
    }
    if (a->prompt == NULL && !a->cont) {
        return usage("%s", "missing PROMPT (or --continue / --resume with --thread)");
    }
    if (a->cont && (a->prompt != NULL || a->thread == NULL)) {
        return usage("%s", "--continue and --resume need --thread ID and no PROMPT");
    }
    return -1;
}

/* The request parameters given on the command line. */
static sst_code set_params(sst_model *model, const agent_args *a, sst_error *err) {
    const char *names[] = {"temperature", "max_tokens", "tool_choice"};
    const char *values[] = {a->temperature, a->max_tokens, a->tool_choice};
    for (size_t i = 0; i < 3; i++) {
        if (values[i] == NULL) {
            continue;
        }
        /* A number as given; anything that is not JSON (e.g. auto) as a string. */
        sst_error perr = {0};
        sst_value *v = sst_json_parse(values[i], &perr);
        if (v == NULL) {
            v = sst_string_new(values[i], err);
        }
        sst_code prc = v != NULL ? sst_model_set_param(model, names[i], v, err) : err->code;
        sst_value_unref(v);
        if (prc != SST_OK) {
            return prc;
        }
    }
    return SST_OK;
}

/* The middleware the options ask for (in @p mw, up to 5), and the fallback model (*fb). */
static sst_code build_middleware(const agent_args *a, sst_model *model, sst_middleware **mw,
                                 size_t *n, sst_model **fb, sst_error *err) {
    *n = 0;
    if (a->summarize_at > 0) {
        mw[*n] =
            sst_middleware_summarization(model, a->summarize_at, (size_t)a->summarize_keep, err);
        if (mw[(*n)++] == NULL) {
            return err->code;
        }
    }
    if (a->fallback != NULL) {
        *fb = sst_model_from_spec(a->fallback, a->model_name, NULL, err);
        mw[*n] = *fb != NULL ? sst_middleware_model_fallback(fb, 1, 1, err) : NULL;
        if (mw[(*n)++] == NULL) {
            return err->code;
        }
    }
    if (a->limit_model_calls > 0) {
        mw[*n] = sst_middleware_model_call_limit(-1, a->limit_model_calls, SST_LIMIT_END, err);
        if (mw[(*n)++] == NULL) {
            return err->code;
        }
    }
    if (a->limit_tool_calls > 0) {
        mw[*n] =
            sst_middleware_tool_call_limit(NULL, -1, a->limit_tool_calls, SST_LIMIT_CONTINUE, err);
        if (mw[(*n)++] == NULL) {
            return err->code;
        }
    }
    if (a->n_interrupt_on > 0) {
        sst_value *cfg = sst_object_empty();
        for (size_t i = 0; cfg != NULL && i < a->n_interrupt_on; i++) {
            cfg = sst_object_set_take(cfg, a->interrupt_on[i], sst_bool(true), err);
        }
        mw[*n] = cfg != NULL ? sst_middleware_human_in_the_loop(cfg, err) : NULL;
        sst_value_unref(cfg);
        if (mw[(*n)++] == NULL) {
            return err->code != SST_OK ? err->code : SST_ENOMEM;
        }
    }
    return SST_OK;
}

/*
 * --mcp "CMD ARGS": the command split at spaces (a part in '...' or "..." may hold
 * spaces) into @p argv (up to @p max - 1 words, NULL-terminated) in @p buf.
 */
static bool split_command(const char *cmd, char *buf, size_t n, const char **argv, size_t max) {
    size_t k = 0, w = 0;
    const char *p = cmd;
    while (*p != '\0') {
        while (*p == ' ') {
            p++;
        }
        if (*p == '\0') {
            break;
        }
        if (w + 1 >= max) {
            return false;
        }
        argv[w++] = buf + k;
        char quote = 0;
        while (*p != '\0' && (quote != 0 || *p != ' ')) {
            if (quote == 0 && (*p == '\'' || *p == '"')) {
                quote = *p++;
                continue;
            }
            if (quote != 0 && *p == quote) {
                quote = 0;
                p++;
                continue;
            }
            if (k + 1 >= n) {
                return false;
            }
            buf[k++] = *p++;
        }
        if (quote != 0) {
            return false;
        }
        buf[k++] = '\0';
    }
    argv[w] = NULL;
    return w > 0;
}

/* The MCP servers of --mcp and --mcp-url, connected (in @p clients), their tools in @p t. */
static sst_code connect_mcp(const agent_args *a, sst_toolset *t, sst_mcp_client **clients,
                            sst_error *err) {
    sst_mcp_opts o;
    sst_mcp_opts_init(&o);
    size_t k = 0;
    for (size_t i = 0; i < a->n_mcp + a->n_mcp_url; i++) {
        sst_mcp_client *c = NULL;
        if (i < a->n_mcp) {
            char buf[4096];
            const char *argv[64];
            if (!split_command(a->mcp[i], buf, sizeof buf, argv, 64)) {
                err->code = SST_EINVAL;
                snprintf(err->msg, sizeof err->msg,
                         "--mcp: '%.120s' is not a command (empty, too long, or a quote left "
                         "open)",
                         a->mcp[i]);
                return err->code;
            }
            c = sst_mcp_connect_stdio(argv, &o, err);
        } else {
            c = sst_mcp_connect_http(a->mcp_url[i - a->n_mcp], &o, err);
        }
        if (c == NULL) {
            return err->code;
        }
        clients[k++] = c;
        if (sst_toolset_add_mcp(t, c, NULL, err) != SST_OK) {
            return err->code;
        }
    }
    return SST_OK;
}

/* --response-format: JSON text (starting with '{'), else a file holding it (new). */
static sst_value *read_schema(const char *arg, sst_error *err) {
    sst_value *v = arg[0] == '{' ? sst_json_parse(arg, err) : sst_json_read_file(arg, NULL, err);
    if (v == NULL) {
        char msg[sizeof err->msg];
        memcpy(msg, err->msg, sizeof msg);
        snprintf(err->msg, sizeof err->msg, "--response-format: %.*s", (int)(sizeof err->msg - 20),
                 msg);
    }
    return v;
}

/* {"messages": [{"role": "user", "content": PROMPT}]} (new), NULL on failure. */
static sst_value *user_input(const char *prompt, sst_error *err) {
    sst_value *msg =
        sst_object_set_take(sst_object_empty(), "role", sst_string_new("user", NULL), err);
    msg =
        msg != NULL ? sst_object_set_take(msg, "content", sst_string_new(prompt, err), err) : NULL;
    sst_value *list = msg != NULL ? sst_array_push_take(sst_array_empty(), msg, err) : NULL;
    return list != NULL ? sst_object_set_take(sst_object_empty(), "messages", list, err) : NULL;
}

/* --json: one object with the status, the reply, the messages and any error. */
static void print_json_result(const sst_graph_result *r, const char *thread) {
    const sst_value *state = sst_graph_result_state(r);
    const sst_value *msgs = sst_object_get(state, "messages");
    const sst_value *last = sst_array_get(msgs, sst_array_len(msgs) - 1);
    const sst_value *stop = sst_object_get(state, "stop_reason");
    sst_run_status status = sst_graph_result_status(r);
    sst_value *out = sst_object_set_take(sst_object_empty(), "status",
                                         sst_string_new(sst_run_status_name(status), NULL), NULL);
    out = sst_object_set_take(out, "thread_id", sst_string_new(thread, NULL), NULL);
    out = sst_object_set_take(out, "reply",
                              sst_value_ref(sst_object_get(last, "content") != NULL
                                                ? sst_object_get(last, "content")
                                                : sst_null()),
                              NULL);
    out = sst_object_set_take(out, "messages", sst_value_ref(msgs), NULL);
    out = sst_object_set_take(out, "stop_reason", sst_value_ref(stop != NULL ? stop : sst_null()),
                              NULL);
    const sst_value *structured = sst_object_get(state, "structured_response");
    if (structured != NULL) {
        out = sst_object_set_take(out, "structured_response", sst_value_ref(structured), NULL);
    }
    const sst_value *used = sst_graph_result_usage(r);
    out = sst_object_set_take(out, "usage", sst_value_ref(used != NULL ? used : sst_null()), NULL);
    out = sst_object_set_take(out, "error",
                              status == SST_RUN_FAILED
                                  ? sst_string_new(sst_graph_result_error(r)->msg, NULL)
                                  : sst_null(),
                              NULL);
    char *text = out != NULL ? sst_json_write(out, SST_JSON_COMPACT, NULL, NULL) : NULL;
    if (text != NULL) {
        printf("%s\n", text);
    }
    sst_free(text);
    sst_value_unref(out);
}

/* "tokens: 120 in (100 cached), 15 out" for the run's usage, on stderr; nothing without. */
static void print_usage(const sst_value *u) {
    if (u == NULL) {
        return;
    }
    const sst_value *details = sst_object_get(u, "input_token_details");
    int64_t cached = sst_int_value(sst_object_get(details, "cache_read"));
    int64_t written = sst_int_value(sst_object_get(details, "cache_creation"));
    int64_t reasoning =
        sst_int_value(sst_object_get(sst_object_get(u, "output_token_details"), "reasoning"));
    fprintf(stderr, "tokens: %lld in", (long long)sst_int_value(sst_object_get(u, "input_tokens")));
    if (cached > 0 || written > 0) {
        fprintf(stderr, " (%lld read from cache, %lld written to it)", (long long)cached,
                (long long)written);
    }
    fprintf(stderr, ", %lld out", (long long)sst_int_value(sst_object_get(u, "output_tokens")));
    if (reasoning > 0) {
        fprintf(stderr, " (%lld reasoning)", (long long)reasoning);
    }
    fprintf(stderr, "\n");
}

/* The reply was streamed already: the outcome on stderr (and the calls awaiting approval). */
static void print_human_result(const sst_graph_result *r, const char *thread) {
    sst_run_status status = sst_graph_result_status(r);
    const sst_value *stop = sst_object_get(sst_graph_result_state(r), "stop_reason");
    const sst_value *structured = sst_object_get(sst_graph_result_state(r), "structured_response");
    printf("\n");
    if (structured != NULL && !sst_is_null(structured)) {
        char *text = sst_json_write(structured, SST_JSON_PRETTY, NULL, NULL);
        if (text != NULL) {
            printf("%s\n", text);
        }
        sst_free(text);
    }
    print_usage(sst_graph_result_usage(r));
    if (status == SST_RUN_FAILED) {
        fprintf(stderr, "superstep agent: %s\n", sst_graph_result_error(r)->msg);
    } else if (status == SST_RUN_INTERRUPTED) {
        const sst_value *ints = sst_graph_result_interrupts(r);
        for (size_t i = 0; i < sst_array_len(ints); i++) {
            const sst_value *value = sst_object_get(sst_array_get(ints, i), "value");
            const sst_value *call = sst_object_get(value, "approve_tool_call");
            const sst_value *fn = sst_object_get(call, "function");
            if (fn != NULL) {
                fprintf(stderr, "tool call waiting for approval: %s(%s)\n",
                        sst_string_cstr(sst_object_get(fn, "name")),
                        sst_string_cstr(sst_object_get(fn, "arguments")));
            }
            /* The human-in-the-loop middleware's requests (--interrupt-on). */
            const sst_value *reqs = sst_object_get(value, "action_requests");
            for (size_t k = 0; k < sst_array_len(reqs); k++) {
                const sst_value *rq = sst_array_get(reqs, k);
                char *args =
                    sst_json_write(sst_object_get(rq, "args"), SST_JSON_COMPACT, NULL, NULL);
                fprintf(stderr, "tool call waiting for a decision: %s(%s)\n",
                        sst_string_cstr(sst_object_get(rq, "name")), args != NULL ? args : "");
                sst_free(args);
            }
            if (sst_array_len(reqs) > 0) {
                fprintf(stderr,
                        "decide with: superstep agent ... --thread %s --resume "
                        "'{\"decisions\": [{\"type\": \"approve\"}, ...]}' (approve, edit, "
                        "reject or respond, one per call)\n",
                        thread);
                return;
            }
        }
        fprintf(stderr,
                "answer with: superstep agent ... --thread %s --resume approve|reject|"
                "'{\"arguments\": {...}}'\n",
                thread);
    } else {
        fprintf(stderr, "thread %s%s\n", thread, stop != NULL ? " (stopped: max iterations)" : "");
    }
}

/*
 * --resume: the answer (approve, reject, or JSON such as {"arguments": {...}})
 * for every pending tool call, by interrupt id (new). NULL with *rc set to an
 * exit code after printing a message, or with *rc < 0 and err filled.
 */
static sst_value *resume_answers(sst_graph_thread *th, const char *resume, const char *thread,
                                 sst_error *err, int *rc) {
    *rc = -1;
    sst_value *answer = strcmp(resume, "approve") == 0 || strcmp(resume, "reject") == 0
                            ? sst_string_new(resume, err)
                            : sst_json_parse(resume, err);
    if (answer == NULL && err->code == SST_EPARSE) {
        fprintf(stderr, "superstep agent: --resume: bad JSON: %s\n", err->msg);
        *rc = 1;
        return NULL;
    }
    sst_value *st = answer != NULL ? sst_graph_get_state(th, NULL, err) : NULL;
    const sst_value *pending = st != NULL ? sst_object_get(st, "interrupts") : NULL;
    sst_value *by_id = st != NULL ? sst_object_empty() : NULL;
    for (size_t i = 0; by_id != NULL && i < sst_array_len(pending); i++) {
        const sst_value *pid = sst_object_get(sst_array_get(pending, i), "id");
        by_id = sst_object_setv_take(by_id, pid, sst_value_ref(answer), err);
    }
    sst_value_unref(answer);
    sst_value_unref(st);
    if (by_id != NULL && sst_object_len(by_id) == 0) {
        sst_value_unref(by_id);
        fprintf(stderr, "superstep agent: thread '%s' has no tool call waiting for approval\n",
                thread);
        *rc = 1;
        return NULL;
    }
    return by_id;
}

int sst_cli_agent(int argc, char **argv) {
    agent_args a;
    int rc = parse(argc, argv, &a);
    if (rc >= 0) {
        return rc;
    }
    sst_error err = {0};
    sst_model *model = sst_model_from_spec(a.model, a.model_name, a.key_env, &err);
    sst_lua_opts lo;
    sst_lua_opts_init(&lo);
    lo.memory_limit = a.memory_limit;
    sst_lua_tools *tools =
        model != NULL && a.tools != NULL ? sst_lua_tools_load_opts(a.tools, &lo, &err) : NULL;
    const char *db = sst_cli_default_db(a.db);
    sst_checkpointer *cp = NULL;
    sst_agent *agent = NULL;
    sst_graph_thread *th = NULL;
    sst_value *input = NULL;
    sst_value *schema = NULL;
    sst_middleware *mws[8] = {NULL};
    size_t n_mw = 0;
    sst_model *fallback = NULL;
    sst_otlp_tracer *tracer = NULL;
    sst_toolset *own_tools = NULL;
    sst_mcp_client *mcp[16] = {NULL};
    if (model == NULL || (a.tools != NULL && tools == NULL)) {
        goto fail;
    }
    if (set_params(model, &a, &err) != SST_OK) {
        goto fail;
    }
    if (a.cache_prompt && sst_model_cache_prompt(model, true, &err) != SST_OK) {
        goto fail;
    }
    if (a.response_format != NULL && (schema = read_schema(a.response_format, &err)) == NULL) {
        goto fail;
    }
    if (build_middleware(&a, model, mws, &n_mw, &fallback, &err) != SST_OK) {
        goto fail;
    }
    const sst_toolset *use = tools != NULL ? sst_lua_tools_set(tools) : NULL;
    if (a.n_mcp + a.n_mcp_url > 0) { /* one tool set: the script's tools and the servers' */
        own_tools = sst_toolset_new(&err);
        if (own_tools == NULL ||
            (use != NULL && sst_toolset_extend(own_tools, use, &err) != SST_OK) ||
            connect_mcp(&a, own_tools, mcp, &err) != SST_OK) {
            goto fail;
        }
        use = own_tools;
    }
    cp = sst_cli_open_saver(db, SST_FLUSH_DEFAULT, &err);
    sst_agent_opts o;
    sst_agent_opts_init(&o);
    o.middleware = mws;
    o.n_middleware = n_mw;
    o.response_format = schema;
    o.structured_strategy = a.strategy == NULL                    ? SST_STRUCTURED_AUTO
                            : strcmp(a.strategy, "tool") == 0     ? SST_STRUCTURED_TOOL
                            : strcmp(a.strategy, "provider") == 0 ? SST_STRUCTURED_PROVIDER
                                                                  : SST_STRUCTURED_AUTO;
    o.system_prompt = a.system;
    o.max_iterations = a.max_iterations;
    o.on_token = a.json ? NULL : print_token;
    /* --resume answers --approve's questions, unless the human-in-the-loop middleware asks */
    o.approve_tools = a.approve || (a.resume != NULL && a.n_interrupt_on == 0);
    agent = cp != NULL ? sst_agent_new(model, use, &o, &err) : NULL;
    char fresh[37];
    const char *thread = a.thread;
    if (thread == NULL) {
        sst_cli_new_thread_id(fresh);
        thread = fresh;
    }
    th = agent != NULL ? sst_graph_thread_open(sst_agent_graph(agent), cp, thread, &err) : NULL;
    if (th == NULL) {
        goto fail;
    }
    if (!a.cont) {
        input = user_input(a.prompt, &err);
        if (input == NULL) {
            goto fail;
        }
    }
    bool trace_failed;
    tracer = sst_cli_tracer(a.otlp_endpoint, a.trace_content, &trace_failed);
    if (trace_failed) {
        rc = 1;
        goto out;
    }
    sst_invoke_opts io;
    sst_invoke_opts_init(&io);
    io.recursion_limit = sst_agent_recursion_limit(agent);
    io.tracer = sst_otlp_tracer_hooks(tracer);
    sst_value *by_id = NULL;
    if (a.resume != NULL) {
        by_id = resume_answers(th, a.resume, thread, &err, &rc);
        if (by_id == NULL) {
            if (rc >= 0) {
                goto out;
            }
            goto fail;
        }
        io.resume_by_id = by_id;
    }
    sst_graph_result *r = sst_graph_invoke(sst_agent_graph(agent), th, input, &io, &err);
    sst_value_unref(by_id);
    if (r == NULL) {
        goto fail;
    }
    sst_run_status status = sst_graph_result_status(r);
    if (a.json) {
        print_json_result(r, thread);
    } else {
        print_human_result(r, thread);
    }
    rc = status == SST_RUN_COMPLETED ? 0 : status == SST_RUN_INTERRUPTED ? 3 : 1;
    sst_graph_result_free(r);
    goto out;
fail:
    fprintf(stderr, "superstep agent: %s\n", err.msg);
    rc = 1;
out:
    sst_cli_tracer_done(tracer);
    sst_value_unref(schema);
    sst_value_unref(input);
    sst_graph_thread_free(th);
    sst_agent_free(agent);
    for (size_t i = 0; i < sizeof mws / sizeof mws[0]; i++) {
        sst_middleware_free(mws[i]);
    }
    sst_model_free(fallback);
    sst_toolset_free(own_tools);
    for (size_t i = 0; i < sizeof mcp / sizeof mcp[0]; i++) {
        sst_mcp_close(mcp[i]);
    }
    sst_checkpointer_free(cp);
    sst_lua_tools_free(tools);
    sst_model_free(model);
    return rc;
}
