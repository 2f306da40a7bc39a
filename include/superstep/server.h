/* SPDX-License-Identifier: MIT */
/**
 * @file server.h
 * @brief `superstep serve`: LangGraph's HTTP API (the Agent Server API).
 *
 * A server serves graphs (Lua scripts, or any sst_graph_source: C graphs,
 * Python graphs) over HTTP the way LangGraph's server serves Python or JS graphs, so that
 * LangGraph's SDKs and UIs work with it unchanged: assistants, threads, runs (background, waited
 * for, streamed over SSE), state and history, the long-term store (docs/server.md lists every
 * endpoint). Everything durable lives in one database: the checkpoints, the threads, the store and
 * the run queue (superstep/queue.h); worker threads claim runs from the queue, so a server killed
 * mid-run and started again finishes its runs from their last checkpoints.
 *
 * HTTP is libmicrohttpd's (a pool of threads over epoll; streams wait
 * suspended, holding no thread).
 *
 * Thread-safety: sst_server_stop may be called from any thread (a signal
 * handler's thread, not the handler itself); the other calls from one thread.
 */
#ifndef SUPERSTEP_SERVER_H
#define SUPERSTEP_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#include "superstep/checkpoint.h"
#include "superstep/error.h"
#include "superstep/export.h"
#include "superstep/graph.h"
#include "superstep/value.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Server options; fill with sst_server_opts_init. */
typedef struct sst_server_opts {
    const char *host; /* address to listen on; default "127.0.0.1" */
    unsigned port;    /* default 2024; 0: any free port (sst_server_port tells) */
    /* The database: a SQLite file (checkpoints, threads, store, run queue), ":memory:"
     * for one process; default "superstep.db". */
    const char *db;
    /* By default the server holds the SQLite file's locks while it runs (its saver,
     * store and queue share one connection in exclusive locking mode: no file lock per
     * transaction); other processes then get "database is locked". Set this
     * (--shared-db) to let other processes (the CLI, another server) use the file at
     * the same time, at the cost of those locks. */
    bool shared_db;
    /* Threads that run graphs; default 2. 0 (PostgreSQL only): an API process whose
     * runs `superstep worker` processes run. */
    unsigned workers;
    /* When set, every request but GET /ok needs "Authorization: Bearer <token>". */
    const char *auth_token;
    /* Without auth_token the server listens only on loopback addresses unless this is
     * set (--insecure-listen-any). */
    bool insecure_listen_any;
    size_t max_body_bytes;       /* a larger request body: 413; default 16 MiB */
    unsigned max_connections;    /* default 1024; more are refused at accept */
    unsigned http_threads;       /* libmicrohttpd's pool; default 2 */
    unsigned connection_timeout; /* seconds a connection may stay idle; default 30 */
    size_t stream_backlog;       /* events a run's stream keeps for (re)joining; default 10000 */
    unsigned runs_per_thread;    /* pending and running runs one thread may have; default 100 */
    unsigned lease_s;            /* a worker's lease on a run, 1..86400 s; default 30 */
    /* Messages for people (start, stop, failed runs) go here; NULL: none. */
    void (*log)(const char *line, void *user_data);
    void *log_user_data;
    /* Run workers only, no HTTP (`superstep worker`): they take runs that other
     * processes' APIs enqueued. The database must be PostgreSQL. */
    bool workers_only;
    /* The web page (docs/web.md) at GET / and /ui/...: served from the copy built
     * into the library unless web_dir names a directory to read its files from on
     * every request (while working on the page), or no_web is set (then / is 404). */
    const char *web_dir;
    bool no_web;
    /* Spans of every run the workers execute (sst_otlp_tracer_hooks, superstep/agent.h);
     * borrowed: must outlive the server. A run created by a request with a W3C
     * "traceparent" header joins that trace (sst_tracer.parent_from); any other is a trace
     * of its own. NULL: no tracing. */
    const struct sst_tracer *tracer;
    /* The durability of a run whose request names none (its "durability" member; see
     * docs/durability.md): default SST_DURABILITY_ASYNC, LangGraph's (--durability). */
    sst_durability durability;
    /* The database's flush policy (--flush): SST_FLUSH_ON, SST_FLUSH_OFF, or
     * SST_FLUSH_DEFAULT, the backend's own (SQLite off, PostgreSQL on). */
    sst_flush_policy flush;
} sst_server_opts;

SST_API void sst_server_opts_init(sst_server_opts *o);

typedef struct sst_server sst_server;

/**
 * A server that is not yet listening: opens the database (made if needed).
 * @return new server; NULL with SST_EINVAL (bad options), SST_EIO (the database),
 *         SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_server *sst_server_new(const sst_server_opts *opts, sst_error *err);

/**
 * Serves the graph the Lua script at @p path returns as graph @p graph_id
 * (and its default assistant, whose id is LangGraph's: the UUID v5 of the
 * graph id). The script is loaded once here to check it, and once more per
 * worker thread.
 * @return SST_OK; SST_EINVAL (a bad or duplicate id), a load error of the script.
 */
SST_NODISCARD SST_API sst_code sst_server_add_graph(sst_server *s, const char *graph_id,
                                                    const char *path, sst_error *err);

/**
 * A graph the server serves that is not (or not only) a Lua script: a C graph,
 * a Python graph (`python3 -m superstep serve`, docs/python.md), anything that
 * can hand out a compiled graph. sst_server_add_graph is this with a Lua
 * script as the source. The server asks the source for a graph for its API
 * threads (drawing, schemas, state reads and update_state, one at a time)
 * when the graph is added, and, unless it is shared, one more for each worker
 * thread the first time that worker runs it (on that thread).
 */
typedef struct sst_graph_source {
    /* Makes a graph: stores it in *graph (borrowed from what it returns, valid until
     * release) and returns the instance to release, or NULL with @p err set (the
     * server names the graph in front of the message). Required. */
    void *(*acquire)(void *user_data, const sst_compiled_graph **graph, sst_error *err);
    /* Releases what acquire returned (a worker's on that worker's thread, as it stops;
     * the API threads' when the server is freed). Required. */
    void (*release)(void *user_data, void *instance);
    /* Frees user_data when the server is freed, or when sst_server_add_graph_source
     * fails; NULL: nothing to free. */
    void (*free)(void *user_data);
    void *user_data;
    /* The graph may be invoked from many threads at once (sst_compiled_graph is; a Lua
     * state is not): acquire is called once, and the API threads and every worker share
     * that graph. */
    bool shared;
    /* The file the graph comes from (copied), or NULL: a thread whose metadata "script"
     * (stamped by `superstep run SCRIPT`) is this file's real path belongs to the graph. */
    const char *path;
} sst_graph_source;

/**
 * Serves the graph @p src makes as graph @p graph_id (with its default
 * assistant, as sst_server_add_graph). The source (copied) is asked for the
 * API threads' graph here; on any failure its free is called.
 * @return SST_OK; SST_EINVAL (a bad or duplicate id, a source without acquire
 *         or release, after sst_server_start), acquire's error, SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_code sst_server_add_graph_source(sst_server *s, const char *graph_id,
                                                           const sst_graph_source *src,
                                                           sst_error *err);

/**
 * True when a langgraph.json graph spec names a Python file: "./agent.py"
 * or "./agent.py:graph" (LangGraph's "path:attribute").
 */
SST_API bool sst_graph_spec_is_python(const char *spec);

/**
 * What sst_server_load_config calls for a graph whose spec is a Python file
 * (sst_graph_spec_is_python): @p spec is the spec with its file part made
 * relative to the config file's folder as for scripts ("dir/agent.py:graph").
 * It adds the graph (sst_server_add_graph_source) or fails with @p err set.
 */
typedef sst_code (*sst_graph_loader)(void *user_data, sst_server *s, const char *graph_id,
                                     const char *spec, sst_error *err);

/**
 * Sets the loader of Python graph specs (the Python module sets it). Without
 * one, such a graph in a config is SST_ENOTSUP naming the command that
 * serves it (`python3 -m superstep serve CONFIG`).
 */
SST_API void sst_server_set_graph_loader(sst_server *s, sst_graph_loader fn, void *user_data);

/**
 * Reads a langgraph.json-shaped file: {"graphs": {"id": "./path.lua", ...},
 * "env": "./.env" | {"NAME": "value"}}: adds each graph (paths relative to
 * the file; a Python spec "./agent.py:graph" through the loader of
 * sst_server_set_graph_loader) and sets the environment variables (existing
 * ones are kept); applies "http" (cors, disable_*), "store" (index, ttl) and
 * "checkpointer" (ttl), and refuses or warns about every other member by name
 * (docs/server.md, "langgraph.json"). Call it before sst_server_start.
 * @return SST_OK; SST_EIO, SST_EPARSE (naming the file and position),
 *         SST_EINVAL (naming the bad, unknown or unsupported member), a
 *         graph's load error.
 */
SST_NODISCARD SST_API sst_code sst_server_load_config(sst_server *s, const char *path,
                                                      sst_error *err);

/**
 * Turns on users and ownership (docs/auth.md), as langgraph.json's "auth" member does:
 * {"jwt": {"algorithm": "HS256" | "RS256" | "ES256", "secret_env" | "public_key" | "jwks",
 * "issuer", "audience", "identity_claim", "permissions_claim", "leeway_s"}, "api_keys":
 * "./keys.json", "admin_permission": "admin"}, or {"path": "./auth.lua"} (a Lua auth file:
 * authenticate and `on` handlers decide instead). Every request but the open ones (GET /ok,
 * /openapi.json, the web page's files) then needs a user; what a user creates is theirs,
 * and they see only their own threads, runs, crons and store namespaces (another user's
 * answer 404). Files are relative to the folder of @p base (a file; NULL: the working
 * directory). Not with opts.auth_token (one shared token).
 * @return SST_OK; SST_EINVAL naming the bad member, SST_EIO (a key file).
 */
SST_NODISCARD SST_API sst_code sst_server_set_auth(sst_server *s, const sst_value *auth,
                                                   const char *base, sst_error *err);

/**
 * Starts the workers and listening.
 * @return SST_OK; SST_EINVAL (a non-loopback host without a token, an auth configuration
 *         or insecure_listen_any), SST_EIO (the address is taken...).
 */
SST_NODISCARD SST_API sst_code sst_server_start(sst_server *s, sst_error *err);

/** The port it listens on (after sst_server_start), 0 before. */
SST_API unsigned sst_server_port(const sst_server *s);

/**
 * Stops gracefully: no new connection or run is accepted, running runs stop at
 * their next superstep boundary and go back to the queue (they resume on the
 * next start), open streams end. Returns at once; sst_server_wait waits.
 */
SST_API void sst_server_stop(sst_server *s);

/** Blocks until sst_server_stop was called and everything stopped. */
SST_API void sst_server_wait(sst_server *s);

/** Stops (if running) and frees. NULL is a no-op. */
SST_API void sst_server_free(sst_server *s);

/**
 * Lays out a Graphviz DOT text (sst_compiled_graph_dot) with Graphviz's dot and
 * renders it as SVG (libgvc): what `superstep graph --svg` prints and the web page
 * shows. Each node is a `<g class="node">` whose `<title>` is its name. Safe to call
 * from any thread (calls are serialized: Graphviz itself is not thread-safe).
 * @param len if not NULL, receives the length in bytes.
 * @return new NUL-terminated SVG, freed with sst_free; NULL with SST_EPARSE (not
 *         DOT, with Graphviz's message), SST_EIO (Graphviz failed), SST_ENOMEM.
 */
SST_NODISCARD SST_API char *sst_dot_to_svg(const char *dot, size_t *len, sst_error *err);

#ifdef __cplusplus
}
#endif
#endif /* SUPERSTEP_SERVER_H */
