/* SPDX-License-Identifier: MIT */
/**
 * @file server.h
 * @brief `superstep serve`: LangGraph's HTTP API (the Agent Server API).
 *
 * A server serves Lua graph scripts over HTTP the way LangGraph's server
 * serves Python or JS graphs, so that LangGraph's SDKs and UIs work with it
 * unchanged: assistants, threads, runs (background, waited for, streamed
 * over SSE), state and history, the long-term store (docs/server.md lists
 * every endpoint). Everything durable lives in one database: the
 * checkpoints, the threads, the store and the run queue (superstep/queue.h);
 * worker threads claim runs from the queue, so a server killed mid-run and
 * started again finishes its runs from their last checkpoints.
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

#include "superstep/error.h"
#include "superstep/export.h"
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
} sst_server_opts;

SST_API void sst_server_opts_init(sst_server_opts *o);

typedef struct sst_server sst_server;

/**
 * A server that is not yet listening: opens the database (made if needed).
 * @return new server; NULL with SST_EINVAL (bad options: a non-loopback host
 *         without a token or insecure_listen_any), SST_EIO (the database), SST_ENOMEM.
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
 * Reads a langgraph.json-shaped file: {"graphs": {"id": "./path.lua", ...},
 * "env": "./.env" | {"NAME": "value"}}: adds each graph (paths relative to
 * the file) and sets the environment variables (existing ones are kept);
 * applies "http" (cors, disable_*), "store" (index, ttl) and "checkpointer"
 * (ttl), and refuses or warns about every other member by name
 * (docs/server.md, "langgraph.json"). Call it before sst_server_start.
 * @return SST_OK; SST_EIO, SST_EPARSE (naming the file and position),
 *         SST_EINVAL (naming the bad, unknown or unsupported member), a
 *         graph's load error.
 */
SST_NODISCARD SST_API sst_code sst_server_load_config(sst_server *s, const char *path,
                                                      sst_error *err);

/** Starts the workers and listening. @return SST_OK; SST_EIO (the address is taken...). */
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
