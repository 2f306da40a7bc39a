/* SPDX-License-Identifier: MIT */
/*
 * What the server's waker needs of the PostgreSQL queue beyond
 * include/superstep/queue.h (src/server/relay.c).
 */
#ifndef SUPERSTEP_QUEUE_POSTGRES_WAIT_H
#define SUPERSTEP_QUEUE_POSTGRES_WAIT_H

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

#endif /* SUPERSTEP_QUEUE_POSTGRES_WAIT_H */
