/* SPDX-License-Identifier: MIT */
/*
 * The vectors of a store's items in one contiguous float32 array, and the
 * one ranking kernel every backend uses: the dot product of a query with
 * every row. Rows and queries are normalised when they come in, so a dot
 * product is the cosine similarity and no norm is computed per query.
 *
 * The kernel is memory-bound (a 1536-dim row is 6 KiB read once per query),
 * so it is written for the compiler to vectorise at -O2 without -ffast-math:
 * 16 independent accumulators per row (a float sum cannot be reordered, but
 * 16 separate sums can be computed lane by lane), restrict pointers, no
 * branch in the inner loop. The summation order is fixed, so equal rows get
 * equal scores wherever they are. On x86-64 with GCC the kernel is also
 * built for AVX2 and AVX-512 and picked at load time (target_clones); the
 * order of operations is the same in each, so the scores are too. Large
 * arrays are split over threads (see bench/bench_store.c for the figures).
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "store_int.h"

/* ---- the array ---- */

/*
 * Asks for 2 MiB pages on the array's whole 2 MiB-aligned inside (Linux,
 * advisory, best effort). A 600 MB array is otherwise 150 000 small pages:
 * filling it faults on each (measured: most of a SQLite store's opening
 * time), and every query walks their page tables.
 */
static void advise_huge(void *p, size_t bytes) {
#if defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t start = ((uintptr_t)p + huge - 1) & ~(huge - 1);
    uintptr_t end = ((uintptr_t)p + bytes) & ~(huge - 1);
    if (end > start) {
        (void)madvise((void *)start, end - start, MADV_HUGEPAGE);
    }
#else
    (void)p, (void)bytes;
#endif
}

bool sst__vecs_reserve(sst__vecs *vs, size_t extra) {
    if (vs->n + extra <= vs->cap) {
        return true;
    }
    size_t cap = vs->cap > 0 ? vs->cap : 64;
    while (cap < vs->n + extra) {
        cap *= 2;
    }
    size_t dims = vs->dims > 0 ? vs->dims : 1;
    if (cap > SIZE_MAX / sizeof(float) / dims) {
        return false;
    }
    float *data = sst__realloc(vs->data, cap * dims * sizeof(float));
    if (data == NULL) {
        return false;
    }
    vs->data = data;
    advise_huge(data, cap * dims * sizeof(float));
    uint32_t *owner = sst__realloc(vs->owner, cap * sizeof(uint32_t));
    if (owner == NULL) {
        return false; /* data is bigger but still valid; cap unchanged */
    }
    vs->owner = owner;
    vs->cap = cap;
    return true;
}

size_t sst__vecs_push(sst__vecs *vs, const float *row, uint32_t owner) {
    SST_ASSERT(vs->n < vs->cap);
    memcpy(vs->data + vs->n * vs->dims, row, vs->dims * sizeof(float));
    vs->owner[vs->n] = owner;
    return vs->n++;
}

void sst__vecs_remove(sst__vecs *vs, size_t r) {
    SST_ASSERT(r < vs->n);
    size_t last = vs->n - 1;
    if (r != last) {
        memcpy(vs->data + r * vs->dims, vs->data + last * vs->dims, vs->dims * sizeof(float));
        vs->owner[r] = vs->owner[last];
    }
    vs->n--;
}

void sst__vecs_free(sst__vecs *vs) {
    sst__free(vs->data);
    sst__free(vs->owner);
    vs->data = NULL;
    vs->owner = NULL;
    vs->n = vs->cap = 0;
}

void sst__vec_normalize(float *v, size_t dims) {
    double sum = 0;
    for (size_t i = 0; i < dims; i++) {
        sum += (double)v[i] * v[i];
    }
    double norm = sqrt(sum);
    for (size_t i = 0; i < dims; i++) {
        v[i] = norm > 0 ? (float)(v[i] / norm) : 0.0f;
    }
}

bool sst__vec_finite(const float *v, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(v[i])) {
            return false;
        }
    }
    return true;
}

/* ---- the kernel ---- */

#define LANES 16

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) &&       \
    !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define SST_VEC_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SST_VEC_CLONES
#endif

SST_VEC_CLONES
void sst__vec_dot_rows(const float *restrict rows, size_t n, size_t dims, const float *restrict q,
                       float *restrict out) {
    size_t body = dims - dims % LANES;
    for (size_t i = 0; i < n; i++) {
        const float *restrict r = rows + i * dims;
        float acc[LANES] = {0};
        for (size_t j = 0; j < body; j += LANES) {
            for (size_t k = 0; k < LANES; k++) {
                acc[k] += r[j + k] * q[j + k];
            }
        }
        float sum = 0;
        for (size_t j = body; j < dims; j++) {
            sum += r[j] * q[j];
        }
        for (size_t k = 0; k < LANES; k++) {
            sum += acc[k];
        }
        out[i] = sum;
    }
}

/*
 * The rows are handed out in blocks from a shared counter rather than split
 * in fixed shares: on a busy machine a thread that gets less CPU does fewer
 * blocks instead of making the query wait for its share. Each row is still
 * computed by the same kernel, so the scores do not depend on the split.
 */
#define BLOCK_ROWS 512

typedef struct dot_job {
    const sst__vecs *vs;
    const uint32_t *rows; /* the rows to score (out[i] for rows[i]), or NULL: all, in order */
    size_t n;             /* how many */
    const float *q;
    float *out;
    atomic_size_t next; /* the first row not handed out */
} dot_job;

/* Scores rows[from, to): runs of consecutive rows go to the kernel in one call. */
static void dot_gather(const dot_job *j, size_t from, size_t to) {
    size_t d = j->vs->dims;
    while (from < to) {
        size_t run = 1;
        while (from + run < to && j->rows[from + run] == j->rows[from] + run) {
            run++;
        }
        sst__vec_dot_rows(j->vs->data + (size_t)j->rows[from] * d, run, d, j->q, j->out + from);
        from += run;
    }
}

static void *dot_job_run(void *arg) {
    dot_job *j = arg;
    size_t d = j->vs->dims, n = j->n;
    for (;;) {
        size_t from = atomic_fetch_add_explicit(&j->next, BLOCK_ROWS, memory_order_relaxed);
        if (from >= n) {
            return NULL;
        }
        size_t rows = n - from < BLOCK_ROWS ? n - from : BLOCK_ROWS;
        if (j->rows != NULL) {
            dot_gather(j, from, from + rows);
        } else {
            sst__vec_dot_rows(j->vs->data + from * d, rows, d, j->q, j->out + from);
        }
    }
}

/* Below this many floats a second thread costs more than it saves (about 1 ms of work). */
#define PARALLEL_MIN_FLOATS ((size_t)4 << 20)
#define MAX_THREADS         16

/* Runs @p job over up to @p threads threads (the caller's included). */
static void dot_job_start(dot_job *job, size_t threads) {
    threads = threads > MAX_THREADS ? MAX_THREADS : threads;
    atomic_init(&job->next, 0);
    if (threads <= 1 || job->n * job->vs->dims < PARALLEL_MIN_FLOATS) {
        dot_job_run(job);
        return;
    }
    pthread_t tids[MAX_THREADS];
    bool started[MAX_THREADS] = {false};
    /* The caller works too; a helper that cannot start leaves its blocks to the others. */
    for (size_t t = 1; t < threads; t++) {
        started[t] = pthread_create(&tids[t], NULL, dot_job_run, job) == 0;
    }
    dot_job_run(job);
    for (size_t t = 1; t < threads; t++) {
        if (started[t]) {
            pthread_join(tids[t], NULL);
        }
    }
}

void sst__vecs_dots(const sst__vecs *vs, const float *q, float *out, size_t threads) {
    if (threads <= 1 || vs->n * vs->dims < PARALLEL_MIN_FLOATS) {
        sst__vec_dot_rows(vs->data, vs->n, vs->dims, q, out);
        return;
    }
    dot_job job = {.vs = vs, .n = vs->n, .q = q, .out = out};
    dot_job_start(&job, threads);
}

void sst__vecs_dots_at(const sst__vecs *vs, const uint32_t *rows, size_t n, const float *q,
                       float *out, size_t threads) {
    dot_job job = {.vs = vs, .rows = rows, .n = n, .q = q, .out = out};
    dot_job_start(&job, threads);
}
