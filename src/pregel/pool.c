/* SPDX-License-Identifier: MIT */
/*
 * The worker pool. The thread that calls sst_engine_run is worker 0 and
 * takes part in every batch; the pool adds workers 1 .. n-1. A batch (one
 * superstep's tasks, or one round of retries) is published under the mutex
 * with a new generation number; each participant claims tasks with an
 * atomic counter, so tasks, not vertices, are spread over the threads.
 *
 * The master waits until every participant has left the batch, not only
 * until every task is done: a participant may still be about to read the
 * claim counter, which must not be reset under it for the next batch.
 *
 * Compute functions run without the lock (curl's pool contract: callbacks
 * never run under it and never call back into the pool).
 *
 * A batch hook (sst_engine_set_batch_hook) is entered by each thread before
 * the first task it claimed and left after its last, so that a binding takes
 * its interpreter lock once per thread and batch (task.c drops it before the
 * engine waits inside a task).
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "pregel_int.h"

uint64_t sst__now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Claims and runs tasks of the current batch until none is left. Large
 * batches are claimed a few tasks at a time: fewer trips to the shared
 * counter and neighbouring tasks on one core, while every thread still gets
 * about sixteen claims to balance uneven task lengths.
 */
static void drain(sst_engine *e, sst_task **batch, size_t n, unsigned participants) {
    size_t chunk = n / ((size_t)participants * 16);
    chunk = chunk < 1 ? 1 : chunk > 64 ? 64 : chunk;
    /* The batch hook's resource, taken before this thread's first task (not by a thread
     * that finds nothing left to claim) and dropped after its last. */
    sst__held held = {e->has_hook ? &e->hook : NULL, NULL, false};
    for (;;) {
        size_t i = atomic_fetch_add_explicit(&e->next, chunk, memory_order_relaxed);
        if (i >= n) {
            sst__held_leave(&held);
            return;
        }
        size_t end = i + chunk < n ? i + chunk : n;
        for (; i < end; i++) {
            sst__task_run_held(batch[i], &held);
        }
    }
}

typedef struct worker_arg {
    sst_engine *e;
    unsigned id;
} worker_arg;

static void *worker_main(void *arg) {
    sst_engine *e = ((worker_arg *)arg)->e;
    unsigned id = ((worker_arg *)arg)->id;
    sst__free(arg);
    uint64_t seen = 0;
    pthread_mutex_lock(&e->mu);
    for (;;) {
        while (!e->stop && e->cq_head == NULL && (e->gen == seen || id >= e->participants)) {
            if (e->gen != seen) {
                seen = e->gen; /* a batch this worker does not take part in */
            }
            e->idle++;
            pthread_cond_wait(&e->work_cv, &e->mu);
            e->idle--;
        }
        if (e->stop) {
            break;
        }
        if (e->gen == seen || id >= e->participants) {
            /* No batch for this worker: a waiting call (call.c). */
            seen = e->gen;
            pthread_mutex_unlock(&e->mu);
            (void)sst__pool_run_one_call(e);
            pthread_mutex_lock(&e->mu);
            continue;
        }
        seen = e->gen;
        sst_task **batch = e->batch;
        size_t n = e->nbatch;
        unsigned participants = e->participants;
        pthread_mutex_unlock(&e->mu);
        drain(e, batch, n, participants);
        pthread_mutex_lock(&e->mu);
        if (++e->left == e->participants) {
            pthread_cond_signal(&e->done_cv);
        }
    }
    pthread_mutex_unlock(&e->mu);
    return NULL;
}

void sst_engine_opts_init(sst_engine_opts *o) {
    o->workers = 1;
    o->max_concurrency = 0;
}

sst_engine *sst_engine_new(const sst_engine_opts *opts, sst_error *err) {
    sst_engine_opts defaults;
    if (opts == NULL) {
        sst_engine_opts_init(&defaults);
        opts = &defaults;
    }
    if (opts->workers == 0 || opts->workers > 4096) {
        sst__error(err, SST_EINVAL, "engine: workers must be 1..4096, got %u", opts->workers);
        return NULL;
    }
    sst_engine *e = sst__calloc(1, sizeof *e);
    if (e == NULL) {
        sst__enomem(err);
        return NULL;
    }
    e->workers = opts->workers;
    e->max_concurrency = opts->max_concurrency == 0 || opts->max_concurrency > opts->workers
                             ? opts->workers
                             : opts->max_concurrency;
    /* Calls hand work over per task (call.c): spin a little before sleeping on the lock. */
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
    pthread_mutex_init(&e->mu, &ma);
    pthread_mutexattr_destroy(&ma);
    pthread_cond_init(&e->work_cv, NULL);
    pthread_cond_init(&e->done_cv, NULL);
    pthread_cond_init(&e->call_cv, NULL);
    atomic_init(&e->next, 0);
    if (e->workers > 1) {
        e->threads = sst__calloc(e->workers - 1, sizeof *e->threads);
        if (e->threads == NULL) {
            sst_engine_free(e);
            sst__enomem(err);
            return NULL;
        }
    }
    for (unsigned i = 1; i < e->workers; i++) {
        worker_arg *arg = sst__malloc(sizeof *arg);
        if (arg == NULL) {
            sst_engine_free(e);
            sst__enomem(err);
            return NULL;
        }
        arg->e = e;
        arg->id = i;
        int rc = pthread_create(&e->threads[e->nthreads], NULL, worker_main, arg);
        if (rc != 0) {
            sst__free(arg);
            sst_engine_free(e);
            sst__error(err, rc == EAGAIN ? SST_EUNAVAILABLE : SST_EIO,
                       "engine: cannot start worker thread %u of %u (error %d)", i,
                       opts->workers - 1, rc);
            return NULL;
        }
        e->nthreads++;
    }
    return e;
}

void sst_engine_set_batch_hook(sst_engine *e, const sst_batch_hook *hook) {
    if (e == NULL) {
        return;
    }
    e->has_hook = hook != NULL && hook->enter != NULL && hook->leave != NULL;
    if (e->has_hook) {
        e->hook = *hook;
    }
}

void sst_engine_free(sst_engine *e) {
    if (e == NULL) {
        return;
    }
    pthread_mutex_lock(&e->mu);
    e->stop = true;
    pthread_cond_broadcast(&e->work_cv);
    pthread_mutex_unlock(&e->mu);
    for (size_t i = 0; i < e->nthreads; i++) {
        pthread_join(e->threads[i], NULL);
    }
    pthread_cond_destroy(&e->work_cv);
    pthread_cond_destroy(&e->done_cv);
    pthread_cond_destroy(&e->call_cv);
    pthread_mutex_destroy(&e->mu);
    sst__free(e->threads);
    sst__free(e);
}

void sst__pool_run(sst_engine *e, sst_task **batch, size_t n) {
    unsigned participants = e->max_concurrency;
    if (n < participants) {
        participants = (unsigned)n;
    }
    if (participants <= 1) {
        /* One task, or one worker: run inline on this thread, no hand-off. */
        sst__held held = {e->has_hook ? &e->hook : NULL, NULL, false};
        for (size_t i = 0; i < n; i++) {
            sst__task_run_held(batch[i], &held);
        }
        sst__held_leave(&held);
        return;
    }
    pthread_mutex_lock(&e->mu);
    e->batch = batch;
    e->nbatch = n;
    atomic_store_explicit(&e->next, 0, memory_order_relaxed);
    e->participants = participants;
    e->left = 1; /* this thread, which drains below and then waits */
    e->gen++;
    pthread_cond_broadcast(&e->work_cv);
    pthread_mutex_unlock(&e->mu);

    drain(e, batch, n, participants);

    pthread_mutex_lock(&e->mu);
    while (e->left < e->participants) {
        pthread_cond_wait(&e->done_cv, &e->mu);
    }
    e->participants = 0;
    pthread_mutex_unlock(&e->mu);
}
