/* SPDX-License-Identifier: MIT */
/*
 * The checkpoint writer of durability "async" (docs/checkpoints.md, "Durability
 * modes"): one thread per root invoke that writes, in the order they were handed
 * to it, the checkpoints its graph and every subgraph under it made, while the
 * engine computes the next superstep.
 *
 * Jobs run one at a time in FIFO order, so a subgraph's checkpoint (handed over
 * while its parent's superstep runs) is never stored before the parent's
 * checkpoint it hangs off, and the parent's next checkpoint (handed over after
 * the subgraph's run returned) never before the subgraph's. The first job that
 * fails makes the writer fail: every later job is skipped (freed, not run), so
 * what is stored is always a prefix of what was handed over, and every wait
 * answers that first error. The thread starts with the first job; a writer that
 * cannot start one runs its jobs in the caller's thread instead.
 */
#include <pthread.h>
#include <string.h>

#include "graph_int.h"

typedef struct job {
    struct job *next;
    sst__write_fn run;
    sst__write_free free;
    void *data;
} job;

struct sst__writer {
    pthread_mutex_t mu;
    pthread_cond_t work; /* a job was queued, or stop */
    pthread_cond_t done; /* a job finished */
    job *head, *tail;
    uint64_t submitted; /* tickets handed out: the last job's */
    uint64_t finished;  /* jobs run or skipped, in ticket order */
    bool started, stop, inline_only;
    pthread_t thread;
    sst_code rc; /* the first failure, or SST_OK */
    sst_error err;
};

sst__writer *sst__writer_new(sst_error *err) {
    sst__writer *w = sst__calloc(1, sizeof *w);
    if (w == NULL) {
        sst__enomem(err);
        return NULL;
    }
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->work, NULL);
    pthread_cond_init(&w->done, NULL);
    sst_error_clear(&w->err);
    return w;
}

/* Runs @p j unless the writer failed already; frees it. Called without the mutex. */
static void run_job(sst__writer *w, job *j) {
    pthread_mutex_lock(&w->mu);
    bool failed = w->rc != SST_OK;
    pthread_mutex_unlock(&w->mu);
    sst_error e;
    sst_error_clear(&e);
    sst_code rc = failed ? SST_OK : j->run(j->data, &e);
    if (j->free != NULL) {
        j->free(j->data);
    }
    sst__free(j);
    pthread_mutex_lock(&w->mu);
    if (rc != SST_OK && w->rc == SST_OK) {
        w->rc = rc;
        w->err = e;
        w->err.code = rc;
    }
    w->finished++;
    pthread_cond_broadcast(&w->done);
    pthread_mutex_unlock(&w->mu);
}

static void *writer_main(void *arg) {
    sst__writer *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (w->head == NULL && !w->stop) {
            pthread_cond_wait(&w->work, &w->mu);
        }
        job *j = w->head;
        if (j == NULL) {
            break; /* stopped, and nothing left */
        }
        w->head = j->next;
        if (w->head == NULL) {
            w->tail = NULL;
        }
        pthread_mutex_unlock(&w->mu);
        run_job(w, j);
        pthread_mutex_lock(&w->mu);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

sst_code sst__writer_submit(sst__writer *w, sst__write_fn run, sst__write_free free_fn, void *data,
                            uint64_t *ticket, sst_error *err) {
    job *j = sst__calloc(1, sizeof *j);
    if (j == NULL) {
        if (free_fn != NULL) {
            free_fn(data);
        }
        return sst__enomem(err);
    }
    *j = (job){NULL, run, free_fn, data};
    pthread_mutex_lock(&w->mu);
    if (!w->started && !w->inline_only) {
        w->started = pthread_create(&w->thread, NULL, writer_main, w) == 0;
        w->inline_only = !w->started; /* no thread: the caller writes, still in order */
    }
    *ticket = ++w->submitted;
    if (w->inline_only) {
        pthread_mutex_unlock(&w->mu);
        run_job(w, j);
        return SST_OK;
    }
    if (w->tail != NULL) {
        w->tail->next = j;
    } else {
        w->head = j;
    }
    w->tail = j;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->mu);
    return SST_OK;
}

sst_code sst__writer_wait(sst__writer *w, uint64_t ticket, sst_error *err) {
    pthread_mutex_lock(&w->mu);
    while (w->finished < ticket) {
        pthread_cond_wait(&w->done, &w->mu);
    }
    sst_code rc = w->rc;
    if (rc != SST_OK && err != NULL) {
        *err = w->err;
    }
    pthread_mutex_unlock(&w->mu);
    return rc;
}

sst_code sst__writer_drain(sst__writer *w, sst_error *err) {
    pthread_mutex_lock(&w->mu);
    uint64_t last = w->submitted;
    pthread_mutex_unlock(&w->mu);
    return sst__writer_wait(w, last, err);
}

void sst__writer_free(sst__writer *w) {
    if (w == NULL) {
        return;
    }
    pthread_mutex_lock(&w->mu);
    w->stop = true;
    pthread_cond_signal(&w->work);
    bool joined = w->started;
    pthread_mutex_unlock(&w->mu);
    if (joined) {
        pthread_join(w->thread, NULL); /* it runs what is queued first */
    }
    pthread_cond_destroy(&w->work);
    pthread_cond_destroy(&w->done);
    pthread_mutex_destroy(&w->mu);
    sst__free(w);
}
