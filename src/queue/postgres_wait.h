/* SPDX-License-Identifier: MIT */
/*
 * What the server's waker and workers need of the PostgreSQL queue beyond
 * include/superstep/queue.h (src/server/relay.c, src/server/worker.c).
 */
#ifndef SUPERSTEP_QUEUE_POSTGRES_WAIT_H
#define SUPERSTEP_QUEUE_POSTGRES_WAIT_H

#include <stdbool.h>
#include <stdint.h>

#include "superstep/queue.h"

/*
 * sst_postgres_queue_wait, except that a notification of an enqueue made through
 * @p q itself does not wake it (one made through any other queue, in this process
 * or another, does; so do releases, finishes, cancels and removes, and a listening
 * connection made or lost). For a process that wakes its own idle worker when it
 * enqueues: its own NOTIFY would wake a second one, to claim nothing.
 * @return as sst_postgres_queue_wait; SST_EINVAL for a queue that is not a
 *         PostgreSQL queue or a negative timeout.
 */
sst_code sst__postgres_queue_wait_others(sst_queue *q, int timeout_ms, sst_error *err);

/*
 * Whether sst_queue_claim on @p q at @p now may find a run: *claimable false only when
 * it would find none (no pending run due and no expired or orphaned lease whose thread
 * is free; a gone holder of this host counts as claimable). One statement outside any
 * transaction (no BEGIN, no ROLLBACK): an idle worker asks it before it opens a claim's
 * transaction, so that a wake or a poll that finds nothing costs one exchange, not four.
 * A claim may still find nothing after a "true" (another claimer was first).
 * @return SST_OK; SST_EINVAL for a queue that is not a PostgreSQL queue; the
 *         failure of the statement (*claimable is then true: let the claim tell).
 */
sst_code sst__postgres_queue_probe(sst_queue *q, int64_t now, bool *claimable, sst_error *err);

#endif /* SUPERSTEP_QUEUE_POSTGRES_WAIT_H */
