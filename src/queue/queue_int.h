/* SPDX-License-Identifier: MIT */
/*
 * The run queue wrapper's internals (queue.c) that a backend needs beyond
 * include/superstep/queue.h: reaching its own implementation behind an
 * sst_queue, for calls that only one backend has (sst_postgres_queue_wait).
 */
#ifndef SUPERSTEP_QUEUE_QUEUE_INT_H
#define SUPERSTEP_QUEUE_QUEUE_INT_H

#include "superstep/queue.h"

/*
 * The implementation (`self`) behind @p q when its backend is the one whose
 * destroy operation is @p destroy (which tells the backends apart); NULL when
 * @p q is NULL or another backend's. Borrowed: valid while @p q is.
 */
void *sst__queue_impl(const sst_queue *q, void (*destroy)(void *self));

#endif /* SUPERSTEP_QUEUE_QUEUE_INT_H */
