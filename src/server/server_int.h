/* SPDX-License-Identifier: MIT */
/*
 * The server layer's private declarations: the server object, the graphs it
 * serves, HTTP requests and responses, the run streams (broker.c) and the
 * workers that run graphs (worker.c).
 */
#ifndef SUPERSTEP_SERVER_INT_H
#define SUPERSTEP_SERVER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "common.h"
#include "superstep/checkpoint.h"
#include "superstep/lua.h"
#include "superstep/postgres.h"
#include "superstep/queue.h"
#include "superstep/server.h"
#include "superstep/store.h"
#include "values/build.h"

struct MHD_Daemon;
struct MHD_Connection;

/* LangGraph's namespace of default assistant ids: uuid5(this, graph_id). */
#define SRV_ASSISTANT_NS "6ba7b821-9dad-11d1-80b4-00c04fd430c8"
/* A run claimed more often than this (its workers died each time) fails. */
#define SRV_MAX_ATTEMPTS 5
/* The store namespace root the server keeps its own items under (assistants); the
 * store API hides it. */
#define SRV_RESERVED_NS "superstep_server"

/* ---- graphs ---------------------------------------------------------------- */

typedef struct srv_graph {
    char *id;   /* graph id (langgraph.json's key) */
    char *path; /* the source's file (owned), or NULL */
    char *real; /* its absolute path with links resolved (owned), or NULL: what a thread's
                   metadata "script" (stamped by `superstep run`) is compared with */
    char assistant_id[37];
    sst_graph_source src; /* where its graphs come from (graph_source.c); src.path unused */
    /* Acquired when added: the API threads' graph (drawing, schemas, state reads and
     * update_state), used under mu; with src.shared, every worker's too. */
    void *reader;
    const sst_compiled_graph *graph;
    bool entrypoint; /* a functional-API entrypoint: any JSON input */
    pthread_mutex_t mu;
    /* graph.svg's drawings (the graph never changes while served), by xray level,
     * under mu: each is laid out once (srv_assistant_graph_svg). */
    struct {
        unsigned xray;
        char *svg;
        size_t len;
    } svg[4];
    size_t n_svg;
} srv_graph;

/* The graph @p id serves, or NULL. */
srv_graph *srv_graph_find(sst_server *s, const char *id);
/* Releases what the server holds of each graph and frees its source (server free). */
void srv_graphs_free(sst_server *s);
/* A worker's own graph of @p g: the shared one, or a new one from its source (*inst
 * receives the instance to give srv_graph_put, NULL for the shared one). */
const sst_compiled_graph *srv_graph_get(srv_graph *g, void **inst, sst_error *err);
void srv_graph_put(srv_graph *g, void *inst);
/* Adds a graph of a config: a Lua script, or a Python spec through the loader. */
sst_code srv_add_graph_spec(sst_server *s, const char *graph_id, const char *spec, sst_error *err);

/* ---- HTTP ------------------------------------------------------------------ */

typedef struct srv_request srv_request;
/* auth.h: the server's users (NULL: no auth) and one request's user. */
typedef struct srv_auth srv_auth;
typedef struct srv_auth_req srv_auth_req;

/* What a handler answers: a status and a body (JSON value or text), or a stream. */
typedef struct srv_response {
    unsigned status;
    sst_value *json;            /* owned; the body as JSON (NULL: text or none) */
    char *text;                 /* owned; a text body when json is NULL */
    const char *type;           /* content type of a text body */
    size_t text_len;            /* the text's length (0: strlen) */
    const unsigned char *bytes; /* or a static body (not freed) of bytes_len bytes */
    size_t bytes_len;
    bool web;               /* the page's files: no-cache and the page's CSP headers */
    const char *location;   /* content-location header (borrowed, static or in req) */
    char location_buf[160]; /* room for a location */
    /* A streamed body: the run whose events (or result) this connection sends. */
    struct srv_stream *stream;
    unsigned stream_kind; /* SRV_SEND_* */
    uint64_t after;       /* send events after this sequence number (Last-Event-ID) */
    bool ids;             /* SSE: write id: lines */
    unsigned modes;       /* SSE: the event kinds asked for (SRV_MODE_*) */
    /* on_disconnect "cancel": a client gone before the run ended cancels it (interrupt). */
    bool cancel_on_disconnect;
    /* SRV_SEND_RESULT for /mcp: the JSON-RPC id (its JSON text) the result answers, wrapped
     * as a tools/call result (srv_mcp_result); "" for a plain result. */
    char mcp_id[128];
} srv_response;

enum {
    SRV_SEND_EVENTS = 1, /* SSE: the run's events, then close */
    SRV_SEND_RESULT = 2, /* the run's result body (runs/wait, join) when it ends */
    SRV_SEND_AWAIT = 3,  /* no body: answer with the status when the run ends */
};

struct srv_request {
    sst_server *s;
    struct MHD_Connection *conn;
    const char *method;
    const char *url;
    char *body; /* owned, NUL-terminated */
    size_t body_len;
    sst_value *json; /* the parsed body, or NULL */
    /* Path parameters of the matched route (borrowed from a copy of the url). */
    char *path_copy;
    const char *param[4];
    size_t n_param;
    srv_auth_req *auth; /* the request's user (auth.h), or NULL */
    /* Metadata a thread this request's run makes gets besides its user's owner (a cron's
     * fire: the owner of the cron's creator), or NULL. */
    const sst_value *thread_stamp;
};

/* Reads @p key of the query string, or NULL. */
const char *srv_query(const srv_request *r, const char *key);
/* Reads header @p key, or NULL. */
const char *srv_header(const srv_request *r, const char *key);

/* Sets @p res to a JSON body (taken). */
void srv_json(srv_response *res, unsigned status, sst_value *body);
/* Sets @p res to an error {"detail": message}; returns @p status for chaining. */
unsigned srv_error(srv_response *res, unsigned status, const char *fmt, ...) SST_PRINTF(3, 4);
/* An error from an sst_error: 404 for SST_ENOTFOUND, 400 for bad input codes, else 500. */
unsigned srv_fail(srv_response *res, const sst_error *err);
/* 200 with @p body (taken), or, when it is NULL, the failure @p err describes (srv_fail). */
void srv_answer(srv_response *res, sst_value *body, const sst_error *err);
/* 204 with no body. */
void srv_no_content(srv_response *res);

/* The request body as a JSON object (NULL body: {}); false after filling @p res (400). */
bool srv_body_object(srv_request *r, srv_response *res);

/* ---- body fields ----------------------------------------------------------- */

/*
 * Typed reads of the request body's members. Each returns false after
 * filling @p res with a 400 naming the member and what it should be.
 * A missing or null member leaves *out as it was (the default).
 */
bool srv_field_string(srv_request *r, srv_response *res, const char *key, const char **out);
bool srv_field_object(srv_request *r, srv_response *res, const char *key, const sst_value **out);
bool srv_field_array(srv_request *r, srv_response *res, const char *key, const sst_value **out);
bool srv_field_int(srv_request *r, srv_response *res, const char *key, int64_t min, int64_t max,
                   int64_t *out);
bool srv_field_number(srv_request *r, srv_response *res, const char *key, double min, double max,
                      double *out);
bool srv_field_bool(srv_request *r, srv_response *res, const char *key, bool *out);
/* A string member that must be one of @p allowed (NULL-terminated). */
bool srv_field_enum(srv_request *r, srv_response *res, const char *key, const char *const *allowed,
                    const char **out);
/* A list of strings, or a single string (as the SDK sends stream_mode). */
bool srv_field_strings(srv_request *r, srv_response *res, const char *key, const sst_value **out);
/* Only the members in @p known (NULL-terminated) are allowed. */
bool srv_known_fields(srv_request *r, srv_response *res, const char *const *known);
/*
 * Shapes of nested members, checked before a handler reads anything (LangGraph's request
 * schemas): a null or absent member always passes (the default applies); anything else of
 * the wrong type, or a string outside `allowed`, is a 400 naming the member by its path
 * ("config.configurable", "interrupt_before[1]").
 */
typedef enum srv_shape {
    SRV_SHAPE_ANY,
    SRV_SHAPE_STRING,
    SRV_SHAPE_BOOL,
    SRV_SHAPE_NUMBER,
    SRV_SHAPE_INT,
    SRV_SHAPE_OBJECT,            /* with `members`: those are checked too */
    SRV_SHAPE_LIST,              /* any items */
    SRV_SHAPE_STRINGS,           /* a list of strings */
    SRV_SHAPE_STRING_OR_STRINGS, /* a string or a list of strings (stream_mode) */
    SRV_SHAPE_STAR_OR_STRINGS,   /* "*" or a list of strings (interrupt_before/after) */
    SRV_SHAPE_FALSE_OR_STRINGS   /* false or a list of strings (a store item's index) */
} srv_shape;

typedef struct srv_member {
    const char *name; /* NULL ends a list of members */
    srv_shape shape;
    const char *const *allowed;       /* strings: the values allowed (NULL-terminated), or NULL */
    const struct srv_member *members; /* SRV_SHAPE_OBJECT: its members' shapes, or NULL */
} srv_member;

/* Checks @p v (borrowed; NULL: absent) against @p m; false after a 400 naming @p path. */
bool srv_check_value(const srv_member *m, const char *path, const sst_value *v, srv_response *res);
/* Checks each member of @p members in the object @p obj (@p path: its name, NULL at the
 * top); false after a 400. */
bool srv_check_members(const srv_member *members, const char *path, const sst_value *obj,
                       srv_response *res);
/* LangGraph's Config (tags, recursion_limit, configurable, ...), as runs and assistants
 * take it. */
extern const srv_member srv_config_shape;
/* Every member of a run request (RunCreate) of the wrong type or value; false after a 400. */
bool srv_check_run_body(const sst_value *body, srv_response *res);
/* A run's input for graph @p g: any JSON for an entrypoint, else an object or null;
 * false after a 400. */
bool srv_check_input(const srv_graph *g, const sst_value *input, srv_response *res);
/* True when @p id is a UUID's 36-character text. */
bool srv_is_uuid(const char *id);

/* ---- routes ---------------------------------------------------------------- */

typedef void (*srv_handler)(srv_request *r, srv_response *res);

/* Route groups langgraph.json's http.disable_* switches remove (404 then). */
enum {
    SRV_GROUP_ASSISTANTS = 1u << 0,
    SRV_GROUP_THREADS = 1u << 1,
    SRV_GROUP_RUNS = 1u << 2, /* /runs/... and /threads/{id}/runs/... (crons too) */
    SRV_GROUP_STORE = 1u << 3,
    SRV_GROUP_META = 1u << 4, /* /openapi.json, /info */
    SRV_GROUP_UI = 1u << 5,   /* the web page: /, /ui/{file} */
    SRV_GROUP_MCP = 1u << 6
};

/* Finds the handler of METHOD PATH, filling r->param; NULL with *status 404 or 405. */
srv_handler srv_route(srv_request *r, unsigned *status);
/* True when METHOD URL is a route served without the token (GET /ok, /openapi.json, the
 * web page's files). */
bool srv_route_open(const char *method, const char *url);
/* The methods the path of @p r has routes for ("GET, POST"), in @p out; after srv_route. */
const char *srv_route_allowed(srv_request *r, char *out, size_t size);

void srv_ok(srv_request *r, srv_response *res);
/* web.c: the page (GET /, GET /ui/{file}) and the graph as SVG */
void srv_web_index(srv_request *r, srv_response *res);
void srv_web_file(srv_request *r, srv_response *res);
void srv_assistant_graph_svg(srv_request *r, srv_response *res);
void srv_info(srv_request *r, srv_response *res);
/* assistants.c */
void srv_assistants_search(srv_request *r, srv_response *res);
void srv_assistants_create(srv_request *r, srv_response *res);
void srv_assistant_get(srv_request *r, srv_response *res);
void srv_assistant_patch(srv_request *r, srv_response *res);
void srv_assistant_delete(srv_request *r, srv_response *res);
void srv_assistant_graph(srv_request *r, srv_response *res);
void srv_assistant_schemas(srv_request *r, srv_response *res);
void srv_assistant_subgraphs(srv_request *r, srv_response *res);
void srv_assistant_versions(srv_request *r, srv_response *res);
void srv_assistant_latest(srv_request *r, srv_response *res);
void srv_assistants_count(srv_request *r, srv_response *res);
/* threads.c */
void srv_threads_create(srv_request *r, srv_response *res);
void srv_threads_search(srv_request *r, srv_response *res);
void srv_threads_count(srv_request *r, srv_response *res);
void srv_thread_get(srv_request *r, srv_response *res);
void srv_thread_patch(srv_request *r, srv_response *res);
void srv_thread_delete(srv_request *r, srv_response *res);
void srv_thread_copy(srv_request *r, srv_response *res);
/* state.c */
void srv_state_get(srv_request *r, srv_response *res);
void srv_state_at(srv_request *r, srv_response *res);
void srv_state_checkpoint(srv_request *r, srv_response *res);
void srv_state_post(srv_request *r, srv_response *res);
void srv_history_get(srv_request *r, srv_response *res);
void srv_history_post(srv_request *r, srv_response *res);
/* runs.c */
void srv_runs_create(srv_request *r, srv_response *res);
void srv_runs_wait(srv_request *r, srv_response *res);
void srv_runs_stream(srv_request *r, srv_response *res);
void srv_runs_stateless_create(srv_request *r, srv_response *res);
void srv_runs_stateless_wait(srv_request *r, srv_response *res);
void srv_runs_stateless_stream(srv_request *r, srv_response *res);
void srv_runs_batch(srv_request *r, srv_response *res);
/* Cancels one run with @p action: in the queue (durable), and at once if a worker here
 * runs it; *status its status after. */
sst_code srv_cancel_run(sst_server *s, const char *run_id, const char *action,
                        sst_queue_status *status, sst_error *err);
/* The value of item @p key under (SRV_RESERVED_NS, @p sub) of the server's store, or NULL:
 * *missing true when there is no such item (err untouched), else a store error. */
sst_value *srv_hidden_get(sst_server *s, const char *sub, const char *key, bool *missing,
                          sst_error *err);
/* The UUID of the path (r->param[0]) named @p what in the 400 otherwise; NULL after it. */
const char *srv_path_uuid(srv_request *r, srv_response *res, const char *what);
/* A test-only clock offset (ms) from environment variable @p var: 0 when unset or not a
 * whole number within a year either way. */
int64_t srv_env_offset_ms(const char *var);
/* True for the JSON value true; false for anything else (NULL too). */
bool srv_true(const sst_value *v);
/* Checks a run request body (as POST .../runs takes it) without a request: true, or false
 * with the 400/422 answer in @p res. Crons check their payload with it. */
bool srv_run_body_ok(sst_server *s, const sst_value *body, bool need_assistant, srv_response *res);
/* Creates a background run from @p body as POST /threads/{id}/runs would (or POST /runs
 * when @p stateless: on a new thread @p thread_id), with run id @p run_id (NULL: new); the
 * answer (200 and the Run, or an error status and detail) in @p res. A thread the run makes
 * gets @p thread_stamp's members in its metadata (NULL: none). Crons fire with it. */
void srv_run_create_from(sst_server *s, const sst_value *body, const char *thread_id,
                         bool stateless, const char *run_id, const sst_value *thread_stamp,
                         srv_response *res);
void srv_runs_list(srv_request *r, srv_response *res);
void srv_run_get(srv_request *r, srv_response *res);
void srv_run_delete(srv_request *r, srv_response *res);
void srv_run_join(srv_request *r, srv_response *res);
void srv_run_join_stream(srv_request *r, srv_response *res);
void srv_run_cancel(srv_request *r, srv_response *res);
void srv_runs_cancel_many(srv_request *r, srv_response *res);
/* store_api.c */
void srv_store_put(srv_request *r, srv_response *res);
void srv_store_get(srv_request *r, srv_response *res);
void srv_store_delete(srv_request *r, srv_response *res);
void srv_store_search(srv_request *r, srv_response *res);
void srv_store_namespaces(srv_request *r, srv_response *res);

/* True when thread @p id exists; false after a 404 naming it (or a storage error). */
bool srv_need_thread(srv_request *r, srv_response *res, const char *id);
/* The thread id of the path (r->param[0]), checked; NULL after a 400. */
const char *srv_path_thread(srv_request *r, srv_response *res);
/* The thread's state (LangGraph's ThreadState) at @p checkpoint_id (NULL: the latest). */
sst_value *srv_state_of(sst_server *s, const char *thread_id, const char *checkpoint_id,
                        bool nested, sst_error *err);
/* Gets a thread ready for a run: made (when @p create) or SST_ENOTFOUND, and @p tags
 * (graph_id, assistant_id) merged into its metadata unless there already; @p new_tags (the
 * owner; NULL: none) only into a thread made here, so a run never gives a thread away. */
sst_code srv_thread_for_run(sst_server *s, const char *thread_id, bool create,
                            const sst_value *tags, const sst_value *new_tags, sst_error *err);
/* Deletes the thread's checkpoints, keeping the thread and its metadata (a rollback). */
sst_code srv_thread_reset(sst_server *s, const char *thread_id, sst_error *err);
/* srv_state_of of a thread known to exist, whose graph is @p g (NULL: it has none). */
sst_value *srv_state_in(sst_server *s, srv_graph *g, const char *thread_id,
                        const char *checkpoint_id, bool nested, sst_error *err);
/* threads.create's supersteps: bulk update_state on the graph @p graph_id. */
sst_code srv_thread_apply_supersteps(sst_server *s, const char *thread_id, const char *graph_id,
                                     const sst_value *supersteps, sst_error *err);

/* ---- threads and shapes ------------------------------------------------------ */

/* ISO 8601 UTC with milliseconds ("2026-11-23T09:12:53.123Z") of @p ms. */
sst_value *srv_iso_time(int64_t ms, sst_error *err);
/* The thread as LangGraph's Thread: {thread_id, created_at, updated_at, metadata, status,
 * config, values, interrupts}. SST_ENOTFOUND when there is no such thread. */
sst_value *srv_thread_value(sst_server *s, const char *thread_id, bool with_values, sst_error *err);
/* True when the thread exists (has metadata or checkpoints). */
bool srv_thread_exists(sst_server *s, const char *thread_id, sst_error *err);
/* The graph a thread last ran (its metadata's graph_id), or NULL. */
srv_graph *srv_thread_graph(sst_server *s, const char *thread_id);
/* Merges @p add (borrowed) into the thread's metadata (made if needed). */
sst_code srv_thread_merge_metadata(sst_server *s, const char *thread_id, const sst_value *add,
                                   sst_error *err);
/* {"thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint_map": null} of a config
 * {"configurable": {...}}, or null when it names no checkpoint. */
sst_value *srv_checkpoint_of(const char *thread_id, const sst_value *config, sst_error *err);
/* One of LangGraph's ThreadState values from our StateSnapshot @p snap (borrowed). */
sst_value *srv_thread_state(const char *thread_id, const sst_value *snap, sst_error *err);
/*
 * A root state's values as LangGraph's server shows them: the value itself (an object whose
 * one member is SST_ROOT: a root StateGraph or an entrypoint); anything else as it is.
 * Borrowed from @p values.
 */
const sst_value *srv_unroot(const sst_value *values);
/* @p base (an object; else {}) with the members of @p over (NULL: none) set over it. */
sst_value *srv_merged(const sst_value *base, const sst_value *over, sst_error *err);
/* The run record @p run as LangGraph's Run. */
sst_value *srv_run_value(const sst_queued_run *run, sst_error *err);

/* ---- assistants ------------------------------------------------------------ */

/* The assistant @p id names (a UUID or a graph id) as a value, or NULL (SST_ENOTFOUND). */
sst_value *srv_assistant_lookup(sst_server *s, const char *id, sst_error *err);
/* Puts the default assistant of every graph (at start). */
sst_code srv_assistants_init(sst_server *s, sst_error *err);
/* Every assistant as a value (new array), in the store's order; NULL on a store error. */
sst_value *srv_assistants_all(sst_server *s, sst_error *err);
/* The input JSON Schema of graph @p g as GET /assistants/{id}/schemas gives it (new). */
sst_value *srv_graph_input_schema(srv_graph *g, sst_error *err);

/* One transaction for what the calling thread writes next through the server's database
 * (its saver, store, queue and relay share it): a batch of the shared SQLite connection
 * (sst_sqlite_db_begin) or of the PostgreSQL pool (sst__pg_batch_begin). False when
 * there is none (:memory:) or it could not begin; then each write commits alone. */
bool srv_batch_begin(sst_server *s);
/* Ends srv_batch_begin's transaction: commits when @p ok, else rolls back. */
sst_code srv_batch_commit(sst_server *s, bool ok, sst_error *err);
/* Runs @p fn, which writes one transaction through srv_batch_begin/commit, on a shared
 * SQLite file in the saver's next group commit (docs/checkpoints.md "Group commit"), with
 * the checkpoints and other such transactions of runs in flight; elsewhere at once. Its
 * result, or the group commit's failure; its writes are committed when it returns OK. */
sst_code srv_tx(sst_server *s, sst_code (*fn)(void *arg, sst_error *err), void *arg,
                sst_error *err);

/* ---- run streams (broker.c) ------------------------------------------------ */

/* Stream modes as bits, LangGraph's names. */
enum {
    SRV_MODE_VALUES = 1u << 0,
    SRV_MODE_UPDATES = 1u << 1,
    SRV_MODE_CUSTOM = 1u << 2,
    SRV_MODE_DEBUG = 1u << 3,
    SRV_MODE_MESSAGES = 1u << 4, /* "messages-tuple" */
    SRV_MODE_TASKS = 1u << 5,
    SRV_MODE_CHECKPOINTS = 1u << 6,
    SRV_MODE_EVENTS = 1u << 7,
    SRV_MODE_MESSAGES_LEGACY = 1u << 8 /* "messages": messages/partial|complete|metadata */
};
/* The bit of a mode name, or 0. */
unsigned srv_mode_bit(const char *name);

typedef struct srv_stream srv_stream;

/* The stream of run @p run_id, made if absent (a new reference). NULL on SST_ENOMEM. */
srv_stream *srv_stream_get(sst_server *s, const char *run_id);
/* The stream of @p run_id if this process has it (a new reference), else NULL. */
srv_stream *srv_stream_find(sst_server *s, const char *run_id);
void srv_stream_unref(sst_server *s, srv_stream *st);
/* Another reference to @p st. */
srv_stream *srv_stream_retain(sst_server *s, srv_stream *st);
/* A copy of the result body of @p st's run ("null" when it has none; NULL when out of
 * memory), *@p len its length: call once the run has ended (srv_stream_await). */
char *srv_stream_result(sst_server *s, srv_stream *st, size_t *len);
/*
 * A connection waiting for the end of @p st's run before it answers (POST
 * .../cancel?wait=1): NULL when the run has ended (answer now). Else @p conn
 * is suspended until the run's next event or its end; then call again with
 * the returned registration. srv_await_free drops it (and is safe to call
 * when the connection ends while suspended or not).
 */
typedef struct srv_await srv_await;
srv_await *srv_stream_await(sst_server *s, srv_stream *st, struct MHD_Connection *conn,
                            srv_await *a);
void srv_await_free(sst_server *s, srv_await *a);
/* Publishes an event of the run (name, JSON data text taken): appends it to the stream
 * and wakes the waiting connections; with PostgreSQL, writes it for every process's
 * relay to copy into their streams (this one's too). */
void srv_stream_publish(sst_server *s, srv_stream *st, const char *name, char *data, size_t len);
/* Ends the run's stream with its result body (JSON text taken; NULL: "null"), in every
 * process (with PostgreSQL, through the relay). */
void srv_stream_end(sst_server *s, srv_stream *st, char *result);
/* Ends this process's stream object only (a stream made for a run already over, or one
 * that no run will end). */
void srv_stream_finish(sst_server *s, srv_stream *st, char *result);
/* Appends an event numbered @p seq (the relay: the number every process gives it). */
void srv_stream_publish_at(sst_server *s, srv_stream *st, uint64_t seq, const char *name,
                           char *data, size_t len);
/* True once the stream has ended. */
bool srv_stream_done(sst_server *s, srv_stream *st);
/* The run ids of the streams not ended (new strings in a new array, sst__free). */
size_t srv_streams_open(sst_server *s, char ***ids);
/* Ends every stream and wakes every waiter (stop). */
void srv_streams_close_all(sst_server *s);
/* Drops streams finished longer ago than the keep time and no longer watched. */
void srv_streams_sweep(sst_server *s);
/* Frees every stream (the server is being freed: no connection is left). */
void srv_streams_sweep_all(sst_server *s);
/* Queues the response of a streamed body (SSE or result) on the connection. */
int srv_queue_stream_response(srv_request *r, srv_response *res);
/* The number of events a stream has had (its next sequence number). */
uint64_t srv_stream_next_seq(sst_server *s, srv_stream *st);
/* How many times waiting connections were woken for new events or ends (every
 * stream's, since the server started): events published while a connection is
 * being woken, or within GATHER_US of its last wake, share one. */
uint64_t srv_stream_wakes(sst_server *s);

/* ---- run events across processes (relay.c, PostgreSQL only) ---------------- */

typedef struct srv_relay srv_relay;
/* Starts the relay when the database is PostgreSQL (s->pg); SST_OK without one. */
sst_code srv_relay_start(sst_server *s, sst_error *err);
/* Stops its thread; srv_relay_free frees it (both: NULL relay is a no-op). */
void srv_relay_stop(sst_server *s);
void srv_relay_free(sst_server *s);
/* Writes an event (or the end, with the result text or NULL) of run @p run_id. */
void srv_relay_publish(sst_server *s, const char *run_id, const char *name, const char *data,
                       size_t len);
void srv_relay_end(sst_server *s, const char *run_id, const char *result);
/* Copies the rows of @p run_id not yet in @p st into it now; true when it ended. */
bool srv_relay_catch_up(sst_server *s, srv_stream *st, const char *run_id);
/* Deletes the rows of runs that ended over a minute ago (the keeper; at most once a
 * minute). */
void srv_relay_purge(sst_server *s, int64_t now);

/* ---- the HTTP daemon (http.c) ---------------------------------------------- */

sst_code srv_http_start(sst_server *s, sst_error *err);
/* Shuts down connections whose request did not begin within the connection timeout. */
void srv_http_sweep(sst_server *s);
/* Stops accepting new connections (open ones go on). */
void srv_http_quiesce(sst_server *s);
void srv_http_stop(sst_server *s);

/* ---- runs ------------------------------------------------------------------ */

/* A copy of a queued run's fields (the queue's callback gets borrowed ones). */
typedef struct run_copy {
    bool found;
    sst_queued_run run;
    char run_id[64], thread_id[64], assistant_id[64], strategy[32], cancel[32];
    sst_value *kwargs, *metadata;
} run_copy;

/* An sst_queued_run_fn filling the run_copy @p ud (zeroed first by the caller). */
bool srv_run_copy_fn(const sst_queued_run *run, void *ud);
void srv_run_copy_free(run_copy *c);
/* Pending and running runs among those @p q lists. */
size_t srv_thread_active_runs(sst_server *s, const sst_queue_query *q);
/* Cancels the thread's pending and running runs with @p action. */
void srv_thread_cancel_runs(sst_server *s, const char *thread_id, const char *action);
/* The first event of every stream: metadata {"run_id", "attempt"}. */
void srv_publish_metadata(sst_server *s, srv_stream *st, const char *run_id, unsigned attempt);
/* POSTs the run's outcome to its webhook (kwargs.webhook), if any. */
void srv_webhook(sst_server *s, const run_copy *c, const char *status, const char *values,
                 int64_t started, int64_t ended);

/* ---- the legacy "messages" stream mode (messages_mode.c) ------------------- */

/* One run's state: the ids sent complete, and the message each id's tokens make so far. */
typedef struct srv_msgs srv_msgs;

/* A new state (NULL on SST_ENOMEM); srv_msgs_free (NULL: no-op) at the run's end. */
srv_msgs *srv_msgs_new(void);
void srv_msgs_free(srv_msgs *m);
/* The data of messages/complete for a stream chunk's payload @p payload (borrowed): the
 * messages of its "messages" member (a list or one message) whose ids are new, now counted
 * as sent (new); NULL when there are none. */
sst_value *srv_msgs_complete(srv_msgs *m, const sst_value *payload, sst_error *err);
/* The data of messages/partial for token chunk @p chunk (borrowed, a messages-tuple message
 * chunk): [the message its id's chunks make so far] (new); NULL for a chunk without an id.
 * *first is set (new) to the data of messages/metadata, {id: {"metadata": @p metadata}},
 * the first time the id is seen, else NULL. */
sst_value *srv_msgs_partial(srv_msgs *m, const sst_value *chunk, const sst_value *metadata,
                            sst_value **first, sst_error *err);

/* ---- http.app: custom routes in Lua (http_app.c) ---------------------------- */

/* Loads the routes the Lua script @p script returns; SST_EINVAL naming a bad one. */
sst_code srv_app_load(sst_server *s, const char *script, sst_error *err);
/* Answers @p r in @p res when a custom route matches it (true), else false. */
bool srv_app_dispatch(srv_request *r, srv_response *res);
void srv_app_free(sst_server *s);

/* ---- /mcp (mcp_server.c) --------------------------------------------------- */

/* POST /mcp (JSON-RPC over MCP's Streamable HTTP), GET and DELETE /mcp (405). */
void srv_mcp_post(srv_request *r, srv_response *res);
void srv_mcp_other(srv_request *r, srv_response *res);
/* The JSON-RPC answer to tools/call @p id (JSON text) whose run's result body is @p result
 * (JSON text; NULL: null), new text; NULL on SST_ENOMEM. */
char *srv_mcp_result(const char *id, const char *result);

/* ---- messages in LangChain's shape (messages_lc.c) ------------------------- */

/* @p v (taken) with every message in it in LangChain's shape as well (type,
 * additional_kwargs, response_metadata, tool calls with name and args); new. */
sst_value *srv_lc_out(sst_value *v);
/* The same on a JSON text (taken; NUL-terminated, *len bytes): the text, or a new one (and
 * *len) when it held messages. */
char *srv_lc_out_text(char *text, size_t *len);
/* A request body's messages (in input, command, values, supersteps) with LangChain tool
 * calls ({name, args, id}) made OpenAI's, as stored; *body replaced when changed. */
void srv_lc_in(sst_value **body);

/* ---- workers --------------------------------------------------------------- */

sst_code srv_workers_start(sst_server *s, sst_error *err);
/* Wakes one idle worker: a run was enqueued (or may have become claimable). With no
 * idle worker, lets one worker whose claim is under way look again; with none of
 * those either, nobody: every worker runs a run, and claims again when it ends. */
void srv_workers_wake(sst_server *s);
/* The same for a wake heard from the queue (another process's enqueue, a release): the
 * worker it wakes asks the queue first whether anything is claimable (on PostgreSQL),
 * since another process's worker may take the run first. */
void srv_workers_wake_remote(sst_server *s);
void srv_workers_stop(sst_server *s);
/* Asks the worker running @p run_id (in this process) to stop with @p action. */
bool srv_workers_cancel(sst_server *s, const char *run_id, const char *action);
/* Whether the calling thread is one of @p s's workers (tests). */
bool srv_is_worker_thread(sst_server *s);

/* ---- langgraph.json (config.c, config_keys.c) -------------------------------- */

/* Applies the members of the config @p cfg (an object read from @p file) other than
 * "graphs" and "env"; an unknown or unsupported one is SST_EINVAL naming it. */
sst_code srv_config_keys(sst_server *s, const char *file, const sst_value *cfg, sst_error *err);
/* langgraph.json's "store" ({index, ttl}): makes the server's store again with them. */
sst_code srv_store_configure(sst_server *s, const char *file, const sst_value *store,
                             sst_error *err);

/* ---- the server ------------------------------------------------------------ */

typedef struct srv_worker srv_worker;
typedef struct srv_cp_ttl srv_cp_ttl;
typedef struct srv_app srv_app;

struct sst_server {
    sst_server_opts o;
    char *host, *db, *token;       /* owned copies */
    srv_auth *auth;                /* users and ownership (auth.h), or NULL */
    char *web_dir;                 /* owned copy of o.web_dir, or NULL */
    struct srv_cors *cors;         /* langgraph.json's http.cors (cors.c); NULL until set */
    struct srv_cp_ttl *cp_ttl;     /* langgraph.json's checkpointer.ttl (prune.c), or NULL */
    unsigned disabled;             /* SRV_GROUP_* bits: route groups http.disable_* removed */
    bool no_webhooks;              /* http.disable_webhooks: runs' webhooks are not sent */
    struct sst_embedder *embedder; /* store.index's embedder (store_config.c), or NULL */
    struct srv_app *app;           /* http.app's Lua routes (http_app.c), or NULL */
    srv_graph *graphs;
    size_t n_graphs, cap_graphs;
    sst_graph_loader loader; /* Python graph specs in a config (sst_server_set_graph_loader) */
    void *loader_data;
    sst_checkpointer *cp;
    sst_store *store;
    sst_queue *queue;
    sst_sqlite_db *sdb; /* the connection cp, store and queue share; NULL for :memory: */
    sst_pg *pg;         /* or the PostgreSQL pool they share (--db postgresql://...) */
    srv_relay *relay;   /* with pg: run events across processes */
    struct MHD_Daemon *mhd;
    unsigned port;
    char owner[400]; /* this process's queue owner prefix */
    int64_t started_ms;

    pthread_mutex_t mu;  /* guards the fields below */
    pthread_cond_t wake; /* workers wait here for runs */
    pthread_cond_t done; /* sst_server_wait */
    bool stopping, stopped, started;
    srv_worker *workers;
    size_t n_workers;
    /* Idle workers and their wakes (worker.c): one idle worker per wake, never all. */
    unsigned idle;        /* workers waiting on `wake` */
    unsigned claiming;    /* workers inside a claim */
    unsigned wake_tokens; /* wakes given to idle workers, not yet taken (<= idle) */
    unsigned missed;      /* wakes no idle worker took, for claimers (<= claiming) */
    unsigned wake_local;  /* of wake_tokens, those of this process's enqueues */
    unsigned backlog;     /* this process's enqueues that found every worker busy */
    int idle_poll_ms;     /* an idle worker claims anyway this often; 0: 500 (tests raise it) */
    pthread_t keeper;     /* renews the leases of running runs, sweeps streams */
    bool keeper_started;
    _Atomic uint64_t renewals;      /* leases the keeper renewed (tests count their commits) */
    _Atomic uint64_t keeper_passes; /* the keeper's rounds over the workers (tests) */
    _Atomic uint64_t claims;        /* claims the workers made (tests count them) */
    _Atomic uint64_t claims_empty;  /* those that found nothing */
    _Atomic uint64_t claim_probes;  /* of the claims, those that asked the queue first */

    /*
     * Test clock offsets in ms (docs/server.md: SST_SERVE_CRON_CLOCK_OFFSET_MS,
     * SST_SERVE_TTL_CLOCK_OFFSET_MS), read from the environment by
     * sst_server_new; immutable after.
     */
    int64_t cron_offset_ms, ttl_offset_ms;
    /* crons.c: serialises the read-modify-write of this server's cron items (a fire with a
     * PATCH or a DELETE); crons of other servers do not wait for it. */
    pthread_mutex_t cron_mu;
    pthread_t cron_ticker; /* the ticker thread (crons.c), started by sst_server_start */
    bool cron_ticker_started;
    /* thread_ttl.c's sweep, guarded by mu: when it last swept (the caller's clock; valid
     * once ttl_swept) and where in the list of TTLs its next sweep starts. */
    bool ttl_swept;
    int64_t ttl_last_ms;
    size_t ttl_cursor;

    pthread_mutex_t bmu;       /* the broker's lock: streams and their waiters */
    pthread_mutex_t hmu;       /* guards tcp */
    struct tcp_conn *tcp;      /* open connections (http.c: the header deadline) */
    unsigned n_tcp;            /* their number (at most o.max_connections) */
    srv_stream *streams;       /* every stream, a list (for sweeping) */
    sst__strmap stream_index;  /* run id -> stream (a srv_stream * as the value) */
    struct srv_gather *gather; /* stream.c: wakes busy streams' connections, gathered */
    int64_t stream_gather_us;  /* the gathering window (0: stream.c's GATHER_US); tests */
    atomic_uint_fast64_t ids;  /* counter for uuid7 clocks */
};

/* Logs a line through opts.log (printf-style). */
void srv_log(sst_server *s, const char *fmt, ...) SST_PRINTF(2, 3);
/* A new time-ordered id (UUIDv7). */
void srv_new_id(char out[37]);
/* The current time in ms. */
int64_t srv_now(void);

#endif
