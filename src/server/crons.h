/* SPDX-License-Identifier: MIT */
/*
 * Crons (LangGraph's scheduled runs): the HTTP handlers, the tick that
 * fires the crons that are due, and a small ticker thread that calls it
 * every second. See crons.c and docs/server.md ("Crons").
 */
#ifndef SUPERSTEP_SERVER_CRONS_H
#define SUPERSTEP_SERVER_CRONS_H

#include "server_int.h"

#ifdef __cplusplus
extern "C" {
#endif

/* POST /threads/{thread_id}/runs/crons */
void srv_crons_create_for_thread(srv_request *r, srv_response *res);
/* POST /runs/crons */
void srv_crons_create(srv_request *r, srv_response *res);
/* POST /runs/crons/search */
void srv_crons_search(srv_request *r, srv_response *res);
/* POST /runs/crons/count */
void srv_crons_count(srv_request *r, srv_response *res);
/* PATCH /runs/crons/{cron_id} */
void srv_cron_patch(srv_request *r, srv_response *res);
/* DELETE /runs/crons/{cron_id} */
void srv_cron_delete(srv_request *r, srv_response *res);

/*
 * Fires every enabled cron whose next_run_date is at or before @p now_ms
 * (plus the server's test offset SST_SERVE_CRON_CLOCK_OFFSET_MS) and whose
 * end_time has not passed: each fire enqueues one background run built from
 * the cron's payload, with the id uuid5(cron_id, "run:<fire ms>") (and, for a
 * stateless cron, a new thread uuid5(cron_id, "thread:<fire ms>")), so that
 * processes sharing a database enqueue each fire once; then next_run_date
 * moves to the schedule's first minute after max(now, the fire time). A
 * cron whose thread or assistant is gone is deleted. Failures are logged.
 * Thread-safety: may be called from any thread, also concurrently (a fire
 * that races another enqueues once).
 */
void srv_crons_tick(sst_server *s, int64_t now_ms);

/*
 * Starts a thread that calls srv_crons_tick about every second until the
 * server stops (s->stopping, signalled on s->done). Called once the server
 * serves; logs and returns the error if the thread cannot start (the server
 * then runs without firing crons). The thread is the server's (s->cron_ticker).
 */
sst_code srv_crons_start(sst_server *s, sst_error *err);
/* Joins the ticker thread of @p s (after s->stopping is set); a no-op without one. */
void srv_crons_stop(sst_server *s);

#ifdef __cplusplus
}
#endif

#endif
