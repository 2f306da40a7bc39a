/* SPDX-License-Identifier: MIT */
/*
 * Thread TTLs (LangGraph's `ttl: {"strategy": "delete", "ttl": minutes}` of
 * POST /threads and PATCH /threads/{id}): reading the member, keeping it in
 * the server's store, and the sweep that deletes the threads not updated for
 * that long. See thread_ttl.c and docs/server.md ("Thread TTL").
 */
#ifndef SUPERSTEP_SERVER_THREAD_TTL_H
#define SUPERSTEP_SERVER_THREAD_TTL_H

#include "server_int.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Reads the body member "ttl" of a thread create or patch. It must be null
 * or an object with only "strategy" (optional; "delete", the only strategy
 * of LangGraph's thread API) and "ttl" (minutes, a number > 0).
 * @param given OUT: true when the member is there, null or not
 * @param out   OUT: the TTL to store, {"strategy", "ttl_minutes"} (new), or
 *              NULL when the member is absent or null
 * @return false after filling @p res with a 400 naming the member (*out NULL).
 */
bool srv_thread_ttl_field(srv_request *r, srv_response *res, bool *given, sst_value **out);

/*
 * Sets the TTL of thread @p thread_id to @p ttl (borrowed, as
 * srv_thread_ttl_field makes it), or drops it when @p ttl is NULL (dropping
 * none is SST_OK). The thread is not checked. On failure nothing changed.
 */
sst_code srv_thread_ttl_set(sst_server *s, const char *thread_id, const sst_value *ttl,
                            sst_error *err);

/*
 * Deletes thread @p thread_id as DELETE /threads/{id} does (threads.c):
 * cancels its pending and running runs, removes its runs from the queue,
 * deletes its checkpoints and metadata, and drops its TTL. The thread is not
 * checked (deleting one that is gone is SST_OK). On failure the steps before
 * the failing one are done; the message names the step's storage error.
 */
sst_code srv_thread_remove(sst_server *s, const char *thread_id, sst_error *err);

/*
 * Deletes the threads whose TTL has passed: those whose last update (their
 * updated_at, as GET /threads/{id} reports it) is more than their TTL before
 * @p now_ms (plus the server's test offset SST_SERVE_TTL_CLOCK_OFFSET_MS),
 * skipping a thread that is busy or has a pending or running run. Drops the
 * TTLs of threads that are gone. Does nothing when this server swept less
 * than SRV_TTL_SWEEP_EVERY_MS ago (when and where it swept are the server's
 * own: servers of one process sweep independently), and looks at a bounded number of TTLs per
 * call (the next ones at the next call), so it never holds up its caller
 * (the keeper thread, which renews leases) for long. Failures are logged.
 * Thread-safety: may be called from any thread; calls for one server should
 * come from one thread (the keeper's).
 */
void srv_threads_ttl_sweep(sst_server *s, int64_t now_ms);

/* The least time between two sweeps of one server. */
#define SRV_TTL_SWEEP_EVERY_MS 2000

#ifdef __cplusplus
}
#endif

#endif
