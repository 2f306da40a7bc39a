/* SPDX-License-Identifier: MIT */
/**
 * @file mcp.h
 * @brief An MCP (Model Context Protocol, revision 2025-06-18) client: the
 * tools of an MCP server, called from C or offered to an agent.
 *
 * A client talks JSON-RPC 2.0 to one server, either a child process over its
 * stdin and stdout (sst_mcp_connect_stdio) or an HTTP endpoint speaking the
 * Streamable HTTP transport (sst_mcp_connect_http). Connecting runs the MCP
 * handshake (`initialize`, then `notifications/initialized`) and fails unless
 * the server speaks a protocol revision superstep knows (2025-06-18,
 * 2025-03-26 or 2024-11-05) and offers tools. The client answers the
 * server's `ping`; other server requests (sampling, elicitation, roots) get
 * JSON-RPC error -32601, as the client declares no capabilities.
 *
 * Errors name the server (sst_mcp_opts.name, else the command or the URL),
 * the method and the tool: "MCP server 'node index.js': tools/call 'echo'
 * timed out after 500 ms". A stdio server that exits or crashes fails every
 * call at once with its exit status or signal and the end of what it wrote
 * to stderr. See docs/mcp.md.
 *
 * Link `superstep_agent` (libcurl).
 *
 * Thread-safety: a client is safe to use from several threads at once once
 * connected (sst_mcp_list_tools and the call functions; calls run in
 * parallel, each waiting for its own reply). sst_mcp_close must not race
 * with any other use of the client.
 */
#ifndef SUPERSTEP_MCP_H
#define SUPERSTEP_MCP_H

#include "superstep/agent.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A connection to one MCP server. */
typedef struct sst_mcp_client sst_mcp_client;

/** Connection options; fill with sst_mcp_opts_init, then adjust (a 0 keeps the default). */
typedef struct sst_mcp_opts {
    const char *name;           /* names the server in errors; NULL: the command (its base name
                                   and arguments) or the URL; copied */
    long timeout_ms;            /* each request (tools/list, tools/call); default 60000 */
    long connect_timeout_ms;    /* starting and the handshake (stdio), connecting and the
                                   handshake (HTTP); default 30000 */
    long close_timeout_ms;      /* stdio: how long sst_mcp_close waits for the server to exit
                                   after closing its stdin, then after SIGTERM; default 2000 */
    size_t max_message_bytes;   /* one JSON-RPC message, either way; default 16 MiB */
    const char *const *env;     /* stdio: NULL-terminated "NAME=value" entries added to (or
                                   replacing in) the inherited environment; NULL: none; copied */
    const char *cwd;            /* stdio: the server's working directory (a relative command
                                   path is taken from there); NULL: the caller's; copied */
    const char *const *headers; /* HTTP: NULL-terminated "Name: value" lines sent with every
                                  request (e.g. "Authorization: Bearer ..."); NULL: none; copied */
} sst_mcp_opts;

/** Fills @p o with the defaults (no name, environment, directory or headers). */
SST_API void sst_mcp_opts_init(sst_mcp_opts *o);

/**
 * Starts the server @p argv (argv[0] is looked up in PATH unless it holds a
 * '/') with pipes on its stdin, stdout and stderr, in a process group of its
 * own, and runs the handshake. Messages are single lines of JSON. The last
 * 4 KiB of the server's stderr are kept for errors (sst_mcp_stderr).
 * @param argv borrowed: the command and its arguments, NULL-terminated
 * @param o    borrowed; NULL for the defaults
 * @return new client, freed with sst_mcp_close; NULL with SST_EINVAL (no
 *         command, a malformed env entry), SST_EIO (the command cannot be
 *         started: "cannot start 'x': No such file or directory", or the
 *         server exited during the handshake, with its status and stderr),
 *         SST_ETIMEOUT (no answer to `initialize` within connect_timeout_ms;
 *         malformed output, if any, is quoted), SST_ENOTSUP (an unknown
 *         protocol revision, no tools), SST_ELIMIT (a message over
 *         max_message_bytes), SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_mcp_client *sst_mcp_connect_stdio(const char *const *argv,
                                                            const sst_mcp_opts *o, sst_error *err);

/**
 * Connects to the Streamable HTTP endpoint @p url ("http://127.0.0.1:3001/mcp")
 * and runs the handshake. Every message is a POST accepting
 * `application/json` and `text/event-stream` replies; the session id the
 * server gives (`Mcp-Session-Id`) and the negotiated `MCP-Protocol-Version`
 * go with every later request, and sst_mcp_close ends the session with a
 * DELETE. Server messages outside a request's reply (the optional GET
 * stream) are not listened to.
 * @param url borrowed; http or https
 * @param o   borrowed; NULL for the defaults
 * @return new client; NULL with SST_EINVAL (a URL that is not http(s), a
 *         header line without ':', an HTTP error status), SST_EUNAVAILABLE
 *         (nobody listening, a dropped connection, 5xx), SST_ETIMEOUT,
 *         SST_ENOTSUP, SST_ELIMIT, SST_ENOMEM, as sst_mcp_connect_stdio.
 */
SST_NODISCARD SST_API sst_mcp_client *sst_mcp_connect_http(const char *url, const sst_mcp_opts *o,
                                                           sst_error *err);

/**
 * Ends the connection and frees @p c; NULL is a no-op. A stdio server gets
 * its stdin closed and close_timeout_ms to exit, then SIGTERM (to its
 * process group) and as long again, then SIGKILL; it is always reaped. An
 * HTTP session is deleted. No other call may be running on @p c, and tool
 * sets it was added to must not be used any more.
 */
SST_API void sst_mcp_close(sst_mcp_client *c);

/**
 * What the server said about itself at the handshake:
 * {"name", "version", "protocolVersion"} (the revision in use).
 * @return borrowed, valid until sst_mcp_close.
 */
SST_API const sst_value *sst_mcp_server_info(const sst_mcp_client *c);

/**
 * The server's tools, all pages of `tools/list`:
 * [{"name", "description" ("" when none), "inputSchema"}, ...] (a tool
 * without a name is left out). The list is
 * kept and reused until the server sends `notifications/tools/list_changed`.
 * @return new array; NULL with the errors of sst_mcp_call_tool (its message
 *         names `tools/list`), or SST_EPARSE for a reply without a tools array.
 * Thread-safety: thread-safe.
 */
SST_NODISCARD SST_API sst_value *sst_mcp_list_tools(sst_mcp_client *c, sst_error *err);

/** How one call waits; fill with sst_mcp_call_opts_init. */
typedef struct sst_mcp_call_opts {
    long timeout_ms; /* 0: the client's timeout_ms */
    /*
     * Asked a few times a second while the call waits: true stops it with
     * SST_ECANCELLED (e.g. a graph node that ran out of time:
     * sst_node_cancelled). NULL: never.
     */
    bool (*cancelled)(void *user_data);
    void *cancel_user_data;
    /* HTTP: a W3C traceparent sent with the call's request, so the server's spans join the
     * caller's trace (the agent sets it from the tool node's span). NULL: none. */
    const char *traceparent;
} sst_mcp_call_opts;

/** Fills @p o with the defaults (the client's timeout, no cancel check). */
SST_API void sst_mcp_call_opts_init(sst_mcp_call_opts *o);

/**
 * Calls the tool @p name with @p args. The result as a value:
 * - the `structuredContent` when the server sent one;
 * - else, when every content block is text, their texts joined with "\n"
 *   (a string; "" for no blocks);
 * - else the content blocks as the server sent them (an array of objects:
 *   {"type": "image", "data", "mimeType"}, {"type": "resource_link", ...}).
 * A result with `isError` fails the call with SST_ETASK and the tool's text
 * as the message. On a timeout or cancellation the server is sent
 * `notifications/cancelled`, and the client stays usable.
 * @param args borrowed: an object, or NULL for {}
 * @return new value; NULL with SST_ETASK (the tool reported an error),
 *         SST_EINVAL (a JSON-RPC error, quoting its code and message),
 *         SST_ETIMEOUT, SST_EIO (the server exited or cannot be written to:
 *         its exit status or signal, and its stderr), SST_EUNAVAILABLE
 *         (HTTP: connection failures, 5xx, an expired session), SST_EPARSE
 *         (a malformed result), SST_ELIMIT, SST_ENOMEM.
 * Thread-safety: thread-safe.
 */
SST_NODISCARD SST_API sst_value *sst_mcp_call_tool(sst_mcp_client *c, const char *name,
                                                   const sst_value *args, sst_error *err);

/**
 * sst_mcp_call_tool with its own timeout and cancel check (@p o NULL: the
 * defaults); SST_ECANCELLED when o->cancelled said stop.
 * Thread-safety: thread-safe.
 */
SST_NODISCARD SST_API sst_value *sst_mcp_call_tool_opts(sst_mcp_client *c, const char *name,
                                                        const sst_value *args,
                                                        const sst_mcp_call_opts *o, sst_error *err);

/**
 * Adds every tool of the server to @p t (as sst_mcp_list_tools lists them),
 * named @p prefix followed by the tool's name (@p prefix NULL: no prefix),
 * with the tool's description and input schema (a schema that is not an
 * object schema is made one: {"type": "object", ...}). Each tool calls the
 * server with the client's timeout; inside an agent, the tool node's
 * sst_node_cancelled stops it. A failing call becomes the "error: ..." tool
 * message the model reads.
 * @param t, c borrowed; @p c must outlive every use of @p t's MCP tools
 * @return SST_OK; SST_EINVAL (a name @p t has already: nothing is added),
 *         the errors of sst_mcp_list_tools, SST_ENOMEM.
 * Thread-safety: as sst_toolset_add (before agents use @p t).
 */
SST_NODISCARD SST_API sst_code sst_toolset_add_mcp(sst_toolset *t, sst_mcp_client *c,
                                                   const char *prefix, sst_error *err);

/**
 * Copies the last bytes the stdio server wrote to its stderr (at most
 * 4 KiB kept) into @p buf (NUL-terminated, cut to @p size - 1 bytes).
 * @return the length copied; 0 for an HTTP client.
 * Thread-safety: thread-safe.
 */
SST_API size_t sst_mcp_stderr(const sst_mcp_client *c, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* SUPERSTEP_MCP_H */
