/* SPDX-License-Identifier: MIT */
/*
 * Pruning threads (prune.c): POST /threads/prune and langgraph.json's checkpointer.ttl.
 */
#ifndef SUPERSTEP_SERVER_PRUNE_H
#define SUPERSTEP_SERVER_PRUNE_H

#include "server_int.h"

/* POST /threads/prune {"thread_ids": [...], "strategy": "delete" | "keep_latest"}:
 * {"pruned_count": n}, the threads that existed. */
void srv_threads_prune(srv_request *r, srv_response *res);

/* Reads checkpointer.ttl of @p file ({strategy, default_ttl, sweep_interval_minutes,
 * sweep_limit}); SST_EINVAL naming a bad member. */
sst_code srv_cp_ttl_configure(sst_server *s, const char *file, const sst_value *ttl,
                              sst_error *err);
/* The keeper's call: prunes the threads checkpointer.ttl says are due, when a sweep is
 * due at @p now_ms (@p offset_ms: the test clock offset of thread TTLs). */
void srv_cp_ttl_sweep(sst_server *s, int64_t now_ms, int64_t offset_ms);
void srv_cp_ttl_free(sst_server *s);

#endif
