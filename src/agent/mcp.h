/* SPDX-License-Identifier: MIT */
/*
 * The MCP client (Model Context Protocol, 2025-06-18) inside the agent layer.
 * JSON-RPC messages go through a transport: a child process's stdin and
 * stdout (mcp_stdio.c) or Streamable HTTP (mcp_http.c). The client
 * (mcp_client.c) matches replies to the callers waiting for them, runs the
 * handshake, lists and calls tools; mcp_result.c turns a tool result into a
 * value and mcp_tools.c makes MCP tools agent tools. The public face is
 * include/superstep/mcp.h (mcp_public.c); docs/mcp.md tells the whole story.
 *
 * Lock order: the client's mutex is never held while a transport is called;
 * a transport's locks are leaves (nothing is called while holding them,
 * except the stdio reap in close).
 */
#ifndef SUPERSTEP_AGENT_MCP_H
#define SUPERSTEP_AGENT_MCP_H

#include <sys/types.h>

#include "common.h"
#include "superstep/mcp.h"
#include "tools.h"

/* The client. The public handle (superstep/mcp.h) is this very struct. */
typedef struct sst_mcp_client sst__mcp_client;

/* ---- helpers (mcp_jsonrpc.c) ------------------------------------------------------------- */

/* Milliseconds of CLOCK_MONOTONIC. */
uint64_t sst__mcp_now_ms(void);

/* How long and on what condition a caller waits: a deadline and a cancel check. */
typedef struct sst__mcp_wait {
    uint64_t deadline_ms;        /* sst__mcp_now_ms() time; 0: none */
    const char *traceparent;     /* HTTP: sent as the "traceparent" header; NULL: none */
    bool (*cancelled)(void *ud); /* asked while waiting; NULL: never */
    void *cancel_ud;
    /*
     * Whether the reply the caller waits for has come (HTTP: a server that
     * keeps a reply's event stream open after the response is not waited
     * for). NULL: the transfer runs to its end.
     */
    bool (*answered)(void *ud);
    void *answered_ud;
} sst__mcp_wait;

/*
 * SST_OK while @p w lets the caller go on waiting; SST_ETIMEOUT past its
 * deadline, SST_ECANCELLED once its cancel check said stop. Records nothing.
 */
sst_code sst__mcp_wait_check(const sst__mcp_wait *w);

/* Fills @p ts for pthread_cond_timedwait on a CLOCK_MONOTONIC condition: @p ms from now. */
struct timespec;
void sst__mcp_abstime(struct timespec *ts, uint64_t ms);

/* A condition variable on CLOCK_MONOTONIC (for sst__mcp_abstime). */
void sst__mcp_cond_init(pthread_cond_t *cv);

/*
 * Copies up to @p max bytes of @p s (@p len bytes) into @p out (max + 4
 * bytes) on one line: control characters become spaces, and a cut is made
 * at a UTF-8 boundary and marked "...". @p from_end keeps the end instead of
 * the start (the tail of a log).
 */
void sst__mcp_excerpt(const char *s, size_t len, size_t max, bool from_end, char *out);

/*
 * JSON-RPC 2.0 message texts (new, sst_free): a request with integer @p id,
 * a notification (@p id NULL), a result or an error reply to @p id
 * (borrowed; the id as the server sent it). @p params and @p result are
 * borrowed; NULL params are left out. NULL on SST_ENOMEM.
 */
char *sst__mcp_request_text(int64_t id, const char *method, const sst_value *params, size_t *len,
                            sst_error *err);
char *sst__mcp_notification_text(const char *method, const sst_value *params, size_t *len,
                                 sst_error *err);
char *sst__mcp_reply_text(const sst_value *id, const sst_value *result, int64_t error_code,
                          const char *error_message, size_t *len, sst_error *err);

/* ---- transports --------------------------------------------------------------------------- */

/*
 * Where a transport delivers what the server sends. Both callbacks run on
 * the transport's reader thread (stdio) or on the thread whose POST got the
 * reply (HTTP), never with a transport lock held.
 */
typedef struct sst__mcp_sink {
    /* One message's JSON text (@p len bytes, NUL-terminated; borrowed for the call). */
    void (*message)(void *ud, const char *json, size_t len);
    /*
     * The connection is gone for good (stdio: the server exited or closed its
     * stdout, or sent a message over the size limit): @p code (SST_EIO,
     * SST_ELIMIT) and @p why ("the server exited with status 3").
     */
    void (*closed)(void *ud, sst_code code, const char *why);
    void *ud;
} sst__mcp_sink;

typedef struct sst__mcp_transport sst__mcp_transport;
struct sst__mcp_transport {
    const char *kind;    /* "stdio" or "HTTP" */
    bool inline_replies; /* a request's reply arrives before send returns (HTTP) */
    /*
     * Sends one message (@p json, @p len bytes, no newline), waiting at most
     * as @p w allows. SST_ETIMEOUT or SST_ECANCELLED when @p w stopped it
     * (HTTP: the request may have reached the server). Other errors name the
     * transport's failure without the server's name (the client adds it).
     */
    sst_code (*send)(sst__mcp_transport *t, const char *json, size_t len, const sst__mcp_wait *w,
                     sst_error *err);
    /* The protocol revision the handshake agreed on (HTTP sends it as a header). May be NULL. */
    void (*negotiated)(sst__mcp_transport *t, const char *protocol_version);
    /* Copies the end of the server's stderr into @p buf (stdio); NULL for none. */
    size_t (*stderr_tail)(sst__mcp_transport *t, char *buf, size_t size);
    /* Ends the connection and frees @p t; the sink gets nothing once it returns. */
    void (*close)(sst__mcp_transport *t);
    pid_t pid; /* the stdio server's process id; -1 for HTTP */
};

/*
 * Starts the stdio server @p argv (see sst_mcp_connect_stdio) with the
 * options of @p o; @p label names it in errors. Messages go to @p sink from
 * a reader thread, which starts at once.
 * @return new transport; NULL with SST_EINVAL, SST_EIO (it cannot be
 *         started), SST_ENOMEM.
 */
sst__mcp_transport *sst__mcp_stdio_open(const char *const *argv, const sst_mcp_opts *o,
                                        const sst__mcp_sink *sink, sst_error *err);

/*
 * Prepares POSTs to the Streamable HTTP endpoint @p url (nothing is sent
 * yet). @return new transport; NULL with SST_EINVAL (not http(s), a URL over
 * 2 KiB, a header line without ':'), SST_ENOMEM.
 */
sst__mcp_transport *sst__mcp_http_open(const char *url, const sst_mcp_opts *o,
                                       const sst__mcp_sink *sink, sst_error *err);

/* ---- the client (mcp_client.c) ------------------------------------------------------------ */

/*
 * Connects over stdio or HTTP (the public functions of superstep/mcp.h; @p o
 * NULL for the defaults). On failure everything is closed and reaped.
 */
sst__mcp_client *sst__mcp_connect_stdio(const char *const *argv, const sst_mcp_opts *o,
                                        sst_error *err);
sst__mcp_client *sst__mcp_connect_http(const char *url, const sst_mcp_opts *o, sst_error *err);
void sst__mcp_close(sst__mcp_client *c);

/* {"name", "version", "protocolVersion"} (borrowed). */
const sst_value *sst__mcp_server_info(const sst__mcp_client *c);
/* The name errors give the server (borrowed). */
const char *sst__mcp_label(const sst__mcp_client *c);
/* The stdio server's pid (-1 for HTTP), for tests that kill it. */
pid_t sst__mcp_pid(const sst__mcp_client *c);
/* sst_mcp_stderr. */
size_t sst__mcp_stderr(const sst__mcp_client *c, char *buf, size_t size);

/*
 * Sends the request @p method with @p params (taken; NULL for none) and
 * waits for its reply as @p how says (NULL: the client's timeout). @p what
 * names the request in errors ("tools/call 'echo'"; NULL: the method).
 * @return the reply's result (new); NULL on a JSON-RPC error (SST_EINVAL,
 *         "error -32602: ..."), SST_ETIMEOUT / SST_ECANCELLED (the server is
 *         sent notifications/cancelled), a transport's error, SST_ENOMEM.
 *         Every message starts with "MCP server 'LABEL': WHAT".
 */
sst_value *sst__mcp_request(sst__mcp_client *c, const char *method, const char *what,
                            sst_value *params, const sst_mcp_call_opts *how, sst_error *err);

/* sst_mcp_list_tools (a new array; the cache is refreshed after list_changed). */
sst_value *sst__mcp_list_tools(sst__mcp_client *c, const sst_mcp_call_opts *how, sst_error *err);

/* sst_mcp_call_tool_opts: the tool's result as a value (sst__mcp_result_value). */
sst_value *sst__mcp_call_tool(sst__mcp_client *c, const char *name, const sst_value *args,
                              const sst_mcp_call_opts *how, sst_error *err);

/* ---- results and tools (mcp_result.c, mcp_tools.c) ------------------------------------------ */

/*
 * A tools/call @p result (borrowed) as a value (see sst_mcp_call_tool): new;
 * NULL with SST_ETASK (isError: the text content as the message), SST_EPARSE
 * (not a result object), SST_ENOMEM.
 */
sst_value *sst__mcp_result_value(const sst_value *result, sst_error *err);

/*
 * @p schema (borrowed; may be NULL) as an object schema sst__tools_add
 * accepts (new): itself when it is one; an object without "type" gets
 * "type": "object" (and "properties": {} when it has none); anything else
 * becomes {"type":"object","properties":{}}.
 */
sst_value *sst__mcp_object_schema(const sst_value *schema, sst_error *err);

/*
 * Adds every tool @p c lists to @p t, named @p prefix (NULL: "") + the tool's
 * name, calling the server through @p c (sst__tools_add_ctx: a node context
 * gives the cancel check, sst_node_cancelled). @p c keeps what the tools
 * need and must outlive every use of them. SST_EINVAL for a name @p t has
 * already (nothing added); on SST_ENOMEM @p t may hold some of the tools.
 */
sst_code sst__mcp_tools_add(sst__tools *t, sst__mcp_client *c, const char *prefix, sst_error *err);

/*
 * Memory the client keeps for the tools sst__mcp_tools_add made: their MCP
 * names, freed by sst__mcp_close (mcp_client.c). NULL on SST_ENOMEM.
 */
typedef struct sst__mcp_binding {
    sst__mcp_client *client;
    char *name; /* owned: the tool's name on the server */
    struct sst__mcp_binding *next;
} sst__mcp_binding;
sst__mcp_binding *sst__mcp_bind(sst__mcp_client *c, const char *name, sst_error *err);

#endif
