/* SPDX-License-Identifier: MIT */
/*
 * superstep agent: a ReAct agent on a durable thread, from the command line.
 *
 *   superstep agent --model URL|fake:FILE [--model-name NAME] [--api-key-env VAR]
 *                   [--tools SCRIPT.lua] [--system TEXT] [--max-iterations N]
 *                   [--thread ID] [--db PATH] [--memory-limit BYTES] [--json] PROMPT
 *
 * Tokens are printed as they stream in; --thread continues a conversation.
 */
#define _POSIX_C_SOURCE 200809L
#include "cmd_agent.h"
#include "cmd_args.h"
#include "cmd_db.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "superstep/agent.h"
#include "superstep/checkpoint.h"
#include "superstep/json.h"
#include "superstep/lua.h"

typedef struct agent_args {
    const char *model, *model_name, *key_env, *tools, *system, *thread, *db, *prompt;
    long max_iterations;
    size_t memory_limit; /* --memory-limit for the tools script's Lua state; 0: the default */
    bool json;
    bool cont;    /* --continue: finish the thread's interrupted or crashed run, no new prompt */
    bool approve; /* --approve: each tool call waits for --resume */
    const char *resume; /* --resume approve|reject|JSON: answers every pending tool call */
    const char *temperature, *max_tokens, *tool_choice; /* request parameters */
} agent_args;

static int usage(const char *fmt, const char *arg) {
    fprintf(stderr, "superstep agent: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(run 'superstep --help' for usage)\n");
    return 2;
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
    a->key_env = "OPENAI_API_KEY";
    a->max_iterations = 10;
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
        return usage("%s", "--model URL|fake:FILE is required");
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

/* The reply was streamed already: the outcome on stderr (and the calls awaiting approval). */
static void print_human_result(const sst_graph_result *r, const char *thread) {
    sst_run_status status = sst_graph_result_status(r);
    const sst_value *stop = sst_object_get(sst_graph_result_state(r), "stop_reason");
    printf("\n");
    if (status == SST_RUN_FAILED) {
        fprintf(stderr, "superstep agent: %s\n", sst_graph_result_error(r)->msg);
    } else if (status == SST_RUN_INTERRUPTED) {
        const sst_value *ints = sst_graph_result_interrupts(r);
        for (size_t i = 0; i < sst_array_len(ints); i++) {
            const sst_value *call = sst_object_get(sst_object_get(sst_array_get(ints, i), "value"),
                                                   "approve_tool_call");
            const sst_value *fn = sst_object_get(call, "function");
            fprintf(stderr, "tool call waiting for approval: %s(%s)\n",
                    sst_string_cstr(sst_object_get(fn, "name")),
                    sst_string_cstr(sst_object_get(fn, "arguments")));
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
    if (model == NULL || (a.tools != NULL && tools == NULL)) {
        goto fail;
    }
    if (set_params(model, &a, &err) != SST_OK) {
        goto fail;
    }
    cp = sst_cli_open_saver(db, &err);
    sst_agent_opts o;
    sst_agent_opts_init(&o);
    o.system_prompt = a.system;
    o.max_iterations = a.max_iterations;
    o.on_token = a.json ? NULL : print_token;
    o.approve_tools = a.approve || a.resume != NULL;
    agent = cp != NULL
                ? sst_agent_new(model, tools != NULL ? sst_lua_tools_set(tools) : NULL, &o, &err)
                : NULL;
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
    sst_invoke_opts io;
    sst_invoke_opts_init(&io);
    io.recursion_limit = sst_agent_recursion_limit(agent);
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
    sst_value_unref(input);
    sst_graph_thread_free(th);
    sst_agent_free(agent);
    sst_checkpointer_free(cp);
    sst_lua_tools_free(tools);
    sst_model_free(model);
    return rc;
}
