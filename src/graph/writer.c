/* SPDX-License-Identifier: MIT */
/*
 * The checkpoint writer of durability "async" (docs/checkpoints.md, "How async
 * writes").
 *
 * A writer (sst__writer) is one root invoke's queue: the checkpoints its graph and
 * every subgraph under it made, stored one at a time in the order they were handed
 * over, so a subgraph's checkpoint (handed over while its parent's superstep runs) is
 * never stored before the parent's checkpoint it hangs off, and the parent's next
 * checkpoint (handed over after the subgraph's run returned) never before the
 * subgraph's. The first job that fails makes the writer fail: every later job is
 * skipped (freed, not run), so what is stored is always a prefix of what was handed
 * over, and every wait answers that first error.
 *
 * The threads that run the queues belong to the compiled graph (sst__write_pool):
 * started when a queue first finds none idle, parked between jobs, joined when the
 * graph is freed, so an invoke costs no thread. A queue with jobs is on the pool's
 * ready list or held by exactly one runner, which runs its jobs in order: a pool
 * thread, or a caller that waits for a job no pool thread has taken yet (it takes
 * the queue and runs the jobs itself instead of sleeping), or the submitter. An idle
 * queue has no job: a runner that is done lets the queue go (let_go), which puts it
 * back on the ready list if jobs came meanwhile, in particular those handed over
 * while a caller wrote a job in place (sst__writer_claim ... sst__writer_release).
 * A job on an idle queue would have no runner, and a wait for it would sleep forever.
 *
 * Handing a job to another thread costs a wake-up on each side. It pays only when
 * the job takes longer than that and the superstep computed meanwhile does too:
 * the pool measures, per compiled graph, how long a write takes (W), how long the
 * engine computes between two checkpoints (C) and how long a handed-over job waits
 * for a thread to start it (H). Once it has H_WARM handoffs measured, a job that
 * finds its queue idle is run at once in the caller (as durability "sync" would)
 * unless min(W, C) > H_TIMES * H: the writer's wake-up is H, the caller's own when
 * it waits for the write and what the handoff costs the saver about as much again
 * (measured on PostgreSQL: 9 ms writes, 25 us supersteps and H near 37 us ran 1.5
 * times slower handed over). Every PROBE_EVERY-th such job is handed over anyway,
 * so H follows the machine's load. A job is also run at once while the graph has at
 * least as many invokes in flight as the machine has cores: their threads keep
 * every core busy, so a writer thread would add wake-ups and no parallelism
 * (measured: 16 threads on 2 cores, in memory, spent 20 % more CPU per run with the
 * few handoffs the averages let through).
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "graph_int.h"

#define MAX_THREADS 32  /* a pool's threads; more queues wait, or their callers run them */
#define H_WARM      8   /* handoffs measured before a job may run in its caller */
#define PROBE_EVERY 256 /* one job in this many that could run in its caller is handed over */
#define H_TIMES     4   /* what a handoff costs, in handoff waits (H) */
#define EWMA_SHIFT  3   /* the averages move 1/8 of the way to each sample */

typedef struct job {
    struct job *next;
    sst__write_fn run;
    sst__write_free free;
    void *data;
} job;

enum { Q_IDLE, Q_READY, Q_RUNNING }; /* no runner; on the ready list; held by a runner */

struct sst__writer {
    sst__write_pool *pool; /* its mutex guards every field */
    pthread_cond_t done;   /* a job finished, or the queue went idle */
    job *head, *tail;
    sst__writer *ready_next;
    int state;
    size_t waiters;
    uint64_t submitted; /* tickets handed out: the last job's */
    uint64_t finished;  /* jobs run or skipped, in ticket order */
    int64_t last_ns;    /* when the last job was handed over or written here (0: none) */
    int64_t claim_ns;   /* when the caller claimed the queue to write a job itself */
    int64_t ready_ns;   /* when it went on the ready list */
    int64_t waited_ns;  /* time spent in waits since then */
    sst_code rc;        /* the first failure, or SST_OK */
    sst_error err;
};

struct sst__write_pool {
    pthread_mutex_t mu;
    pthread_cond_t work; /* a queue is ready, or stop */
    sst__writer *ready_head, *ready_tail;
    pthread_t threads[MAX_THREADS];
    size_t n_threads, busy, n_ready; /* threads; those running a queue; ready queues */
    size_t invokes;                  /* writers (root invokes) in flight */
    bool stop;
    sst__write_policy policy;
    int64_t w_ns, c_ns, h_ns; /* the averages of the cost model (see above) */
    uint64_t probe;
    sst__write_stats stats;
};

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void ewma(int64_t *avg, int64_t sample, bool first) {
    *avg = first ? sample : *avg + ((sample - *avg) / (1 << EWMA_SHIFT));
}

static long g_cores = 1;
static pthread_once_t g_cores_once = PTHREAD_ONCE_INIT;

static void count_cores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    g_cores = n > 0 ? n : 1;
}

sst__write_pool *sst__write_pool_new(void) {
    pthread_once(&g_cores_once, count_cores);
    sst__write_pool *p = sst__calloc(1, sizeof *p);
    if (p != NULL) {
        pthread_mutex_init(&p->mu, NULL);
        pthread_cond_init(&p->work, NULL);
    }
    return p;
}

void sst__write_pool_free(sst__write_pool *p) {
    if (p == NULL) {
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->work);
    size_t n = p->n_threads;
    pthread_mutex_unlock(&p->mu);
    for (size_t i = 0; i < n; i++) {
        pthread_join(p->threads[i], NULL); /* no invoke runs: no queue is ready */
    }
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->mu);
    sst__free(p);
}

void sst__write_pool_set_policy(sst__write_pool *p, sst__write_policy policy) {
    pthread_mutex_lock(&p->mu);
    p->policy = policy;
    pthread_mutex_unlock(&p->mu);
}

void sst__write_pool_stats(sst__write_pool *p, sst__write_stats *out) {
    pthread_mutex_lock(&p->mu);
    *out = p->stats;
    out->threads = p->n_threads;
    out->w_ns = p->w_ns;
    out->c_ns = p->c_ns;
    out->h_ns = p->h_ns;
    pthread_mutex_unlock(&p->mu);
}

/*
 * Runs @p j for @p w, whose runner the caller is, unless the writer failed already;
 * frees it. @p ready: when the queue was handed over, if @p j is the job that a runner
 * took it for (a sample of H), else 0. Called and returns with the pool's mutex held.
 */
static void run_job(sst__write_pool *p, sst__writer *w, job *j, int64_t ready) {
    int64_t t0 = now_ns();
    if (ready != 0) {
        ewma(&p->h_ns, t0 - ready, p->stats.handoff_samples++ == 0);
    }
    bool failed = w->rc != SST_OK;
    pthread_mutex_unlock(&p->mu);
    sst_error e;
    sst_error_clear(&e);
    sst_code rc = failed ? SST_OK : j->run(j->data, &e);
    if (j->free != NULL) {
        j->free(j->data);
    }
    sst__free(j);
    int64_t t1 = now_ns();
    pthread_mutex_lock(&p->mu);
    if (!failed) {
        ewma(&p->w_ns, t1 - t0, p->stats.write_samples++ == 0);
    }
    if (rc != SST_OK && w->rc == SST_OK) {
        w->rc = rc;
        w->err = e;
        w->err.code = rc;
    }
    w->finished++;
    if (w->waiters > 0) {
        pthread_cond_broadcast(&w->done);
    }
}

/* Runs @p w's queued jobs up to ticket @p upto (0: all), as its runner; mutex held. */
static void run_queue(sst__write_pool *p, sst__writer *w, uint64_t upto) {
    int64_t ready = w->ready_ns;
    while (w->head != NULL && (upto == 0 || w->finished < upto)) {
        job *j = w->head;
        w->head = j->next;
        if (w->head == NULL) {
            w->tail = NULL;
        }
        run_job(p, w, j, ready);
        ready = 0;
    }
}

static void *pool_main(void *arg) {
    sst__write_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->ready_head == NULL && !p->stop) {
            pthread_cond_wait(&p->work, &p->mu);
        }
        sst__writer *w = p->ready_head;
        if (w == NULL) {
            break; /* stopped */
        }
        p->ready_head = w->ready_next;
        if (p->ready_head == NULL) {
            p->ready_tail = NULL;
        }
        p->n_ready--;
        w->state = Q_RUNNING;
        p->busy++;
        run_queue(p, w, 0);
        p->busy--;
        SST_ASSERT(w->head == NULL);
        w->state = Q_IDLE; /* the last touch: its owner may free it once it sees this */
        if (w->waiters > 0) {
            pthread_cond_broadcast(&w->done);
        }
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Takes @p w off the ready list (it is on it). Mutex held. */
static void unready(sst__write_pool *p, sst__writer *w) {
    sst__writer **at = &p->ready_head, *prev = NULL;
    while (*at != w) {
        prev = *at;
        at = &(*at)->ready_next;
    }
    *at = w->ready_next;
    if (p->ready_tail == w) {
        p->ready_tail = prev;
    }
    w->ready_next = NULL;
    p->n_ready--;
}

/* Puts @p w (with jobs, no runner) on the ready list and wakes a thread for it, or
 * starts one; false when the pool has no thread and cannot start one (@p w is then
 * not on the list). Mutex held. */
static bool make_ready(sst__write_pool *p, sst__writer *w) {
    w->state = Q_READY;
    w->ready_ns = now_ns();
    w->ready_next = NULL;
    if (p->ready_tail != NULL) {
        p->ready_tail->ready_next = w;
    } else {
        p->ready_head = w;
    }
    p->ready_tail = w;
    p->n_ready++;
    /* A thread for each ready queue, parked or starting (it looks before it parks). */
    if (p->n_threads - p->busy >= p->n_ready) {
        pthread_cond_signal(&p->work);
        return true;
    }
    if (p->n_threads < MAX_THREADS &&
        pthread_create(&p->threads[p->n_threads], NULL, pool_main, p) == 0) {
        p->n_threads++;
        p->stats.threads_started++;
        return true;
    }
    if (p->n_threads > 0) {
        return true; /* busy threads come back to the list */
    }
    unready(p, w);
    return false;
}

/* The caller, @p w's runner or the submitter of its first job (it is idle), lets it
 * go: idle when no job is left, else ready (a pool thread or a waiter runs what was
 * queued), or with no thread to be had, the caller runs the rest, in order. Never
 * idle with a job queued. Mutex held. */
static void let_go(sst__write_pool *p, sst__writer *w) {
    if (w->head != NULL && !make_ready(p, w)) {
        w->state = Q_RUNNING;
        run_queue(p, w, 0);
    }
    if (w->state != Q_READY) {
        SST_ASSERT(w->head == NULL);
        w->state = Q_IDLE;
    }
    if (w->waiters > 0) {
        pthread_cond_broadcast(&w->done);
    }
}

/* The caller becomes @p w's runner (it is ready: no thread took it yet) and runs its
 * jobs up to @p ticket; what is left goes back to the pool. Mutex held. */
static void take_over(sst__write_pool *p, sst__writer *w, uint64_t ticket) {
    unready(p, w);
    w->state = Q_RUNNING;
    p->stats.taken_over++;
    run_queue(p, w, ticket);
    let_go(p, w);
}

sst__writer *sst__writer_new(sst__write_pool *pool, sst_error *err) {
    sst__writer *w = sst__calloc(1, sizeof *w);
    if (w == NULL) {
        sst__enomem(err);
        return NULL;
    }
    w->pool = pool;
    pthread_cond_init(&w->done, NULL);
    sst_error_clear(&w->err);
    pthread_mutex_lock(&pool->mu);
    pool->invokes++;
    pthread_mutex_unlock(&pool->mu);
    return w;
}

/* Whether the next job of idle @p w's graph runs at once in the caller. Mutex held. */
static bool run_here(sst__write_pool *p) {
    if (p->policy != SST__WRITE_AUTO) {
        return p->policy == SST__WRITE_INLINE;
    }
    if (p->stats.handoff_samples < H_WARM) {
        return false;
    }
    if (p->invokes >= (size_t)g_cores) {
        return true; /* no core free for a writer */
    }
    int64_t overlap = p->w_ns < p->c_ns ? p->w_ns : p->c_ns;
    return overlap <= H_TIMES * p->h_ns && ++p->probe % PROBE_EVERY != 0;
}

bool sst__writer_claim(sst__writer *w, bool after_compute, uint64_t *ticket) {
    sst__write_pool *p = w->pool;
    int64_t t = now_ns();
    pthread_mutex_lock(&p->mu);
    if (after_compute && w->last_ns != 0) { /* the superstep since the last checkpoint */
        int64_t c = t - w->last_ns - w->waited_ns;
        ewma(&p->c_ns, c > 0 ? c : 0, p->stats.compute_samples++ == 0);
    }
    /* Not after a failure: the job is handed over to be skipped, as every later one. */
    bool here = w->state == Q_IDLE && w->rc == SST_OK && run_here(p);
    SST_ASSERT(w->state != Q_IDLE || w->head == NULL);
    if (here) {
        p->stats.inline_jobs++;
        w->state = Q_RUNNING;
        *ticket = ++w->submitted;
        w->claim_ns = t;
    }
    pthread_mutex_unlock(&p->mu);
    return here;
}

void sst__writer_release(sst__writer *w, sst_code rc, const sst_error *err) {
    sst__write_pool *p = w->pool;
    int64_t t = now_ns();
    pthread_mutex_lock(&p->mu);
    if (w->rc == SST_OK) {
        ewma(&p->w_ns, t - w->claim_ns, p->stats.write_samples++ == 0);
        if (rc != SST_OK) {
            w->rc = rc;
            w->err = *err;
            w->err.code = rc;
        }
    }
    w->finished++;
    w->last_ns = t;
    w->waited_ns = 0;
    /* Jobs handed over meanwhile were only queued (the queue was held): hand them on. */
    let_go(p, w);
    pthread_mutex_unlock(&p->mu);
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
    sst__write_pool *p = w->pool;
    *j = (job){NULL, run, free_fn, data};
    pthread_mutex_lock(&p->mu);
    *ticket = ++w->submitted;
    p->stats.handed_jobs++;
    if (w->tail != NULL) {
        w->tail->next = j;
    } else {
        w->head = j;
    }
    w->tail = j;
    if (w->state == Q_IDLE) {
        let_go(p, w); /* to a pool thread; with none to be had, the caller writes it */
    }
    w->last_ns = now_ns();
    w->waited_ns = 0;
    pthread_mutex_unlock(&p->mu);
    return SST_OK;
}

sst_code sst__writer_wait(sst__writer *w, uint64_t ticket, sst_error *err) {
    sst__write_pool *p = w->pool;
    pthread_mutex_lock(&p->mu);
    int64_t t0 = w->finished < ticket ? now_ns() : 0;
    while (w->finished < ticket) {
        if (w->state == Q_READY) {
            take_over(p, w, ticket); /* no thread took it yet: write it rather than sleep */
            continue;
        }
        SST_ASSERT(w->state == Q_RUNNING); /* an unfinished job is queued or being run */
        w->waiters++;
        pthread_cond_wait(&w->done, &p->mu);
        w->waiters--;
    }
    if (t0 != 0) {
        w->waited_ns += now_ns() - t0;
    }
    sst_code rc = w->rc;
    if (rc != SST_OK && err != NULL) {
        *err = w->err;
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

sst_code sst__writer_drain(sst__writer *w, sst_error *err) {
    pthread_mutex_lock(&w->pool->mu);
    uint64_t last = w->submitted;
    pthread_mutex_unlock(&w->pool->mu);
    return sst__writer_wait(w, last, err);
}

void sst__writer_free(sst__writer *w) {
    if (w == NULL) {
        return;
    }
    sst__write_pool *p = w->pool;
    pthread_mutex_lock(&p->mu);
    while (w->state != Q_IDLE) { /* what is queued is written first */
        if (w->state == Q_READY) {
            take_over(p, w, 0);
            continue;
        }
        w->waiters++;
        pthread_cond_wait(&w->done, &p->mu);
        w->waiters--;
    }
    p->invokes--;
    pthread_mutex_unlock(&p->mu);
    pthread_cond_destroy(&w->done);
    sst__free(w);
}
