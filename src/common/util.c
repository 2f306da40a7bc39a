/* SPDX-License-Identifier: MIT */
/* Small shared utilities: the growable buffer, random bytes, version. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "common.h"
#include "superstep/version.h"

const char *sst_version(void) {
#define SST__STR2(x) #x
#define SST__STR(x)  SST__STR2(x)
    return SST__STR(SST_VERSION_MAJOR) "." SST__STR(SST_VERSION_MINOR) "." SST__STR(
        SST_VERSION_PATCH);
}

unsigned sst_version_hex(void) {
    return SST_VERSION_HEX;
}

static sst_code fill_random(unsigned char *p, size_t n, sst_error *err) {
    while (n > 0) {
        ssize_t got = getrandom(p, n, 0);
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            return sst__error(err, SST_EIO, "getrandom failed (errno %d)", errno);
        }
        p += got;
        n -= (size_t)got;
    }
    return SST_OK;
}

/*
 * Small requests (ids: 8 to 16 bytes each) come from a per-thread pool
 * filled by one getrandom call per 512 bytes instead of one call each. A
 * forked child must not hand out its parent's bytes again: a fork handler
 * empties the pool of the thread that forked (the child's only thread).
 */
#define POOL 512
static _Thread_local struct {
    unsigned char bytes[POOL];
    size_t left; /* unread bytes at the end of bytes */
} g_pool;

static void pool_forget(void) {
    g_pool.left = 0;
}

static void pool_register(void) {
    pthread_atfork(NULL, NULL, pool_forget);
}

sst_code sst__random_bytes(void *buf, size_t n, sst_error *err) {
    if (n > 64) {
        return fill_random(buf, n, err);
    }
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, pool_register);
    if (g_pool.left < n) {
        sst_code rc = fill_random(g_pool.bytes, POOL, err);
        if (rc != SST_OK) {
            return rc;
        }
        g_pool.left = POOL;
    }
    unsigned char *src = g_pool.bytes + (POOL - g_pool.left);
    memcpy(buf, src, n);
    memset(src, 0, n); /* handed out once */
    g_pool.left -= n;
    return SST_OK;
}

void sst__buf_init(sst__buf *b) {
    memset(b, 0, sizeof *b);
}

void sst__buf_free(sst__buf *b) {
    sst__free(b->data);
    sst__buf_init(b);
}

bool sst__buf_reserve(sst__buf *b, size_t extra) {
    if (b->oom) {
        return false;
    }
    if (extra <= b->cap - b->len && b->data != NULL) {
        return true;
    }
    if (extra > SIZE_MAX / 2 - b->len) {
        b->oom = true;
        return false;
    }
    size_t want = b->len + extra + 1;
    size_t cap = b->cap < 64 ? 64 : b->cap;
    while (cap < want) {
        cap *= 2;
    }
    char *p = sst__realloc(b->data, cap);
    if (p == NULL) {
        b->oom = true;
        return false;
    }
    b->data = p;
    b->cap = cap - 1; /* keep one byte for the NUL */
    return true;
}

void sst__buf_append_slow(sst__buf *b, const void *data, size_t n) {
    if (sst__buf_reserve(b, n)) {
        memcpy(b->data + b->len, data, n);
        b->len += n;
    }
}

void sst__buf_printf(sst__buf *b, const char *fmt, ...) {
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = true;
        return;
    }
    if ((size_t)n < sizeof tmp) {
        sst__buf_append(b, tmp, (size_t)n);
        return;
    }
    if (!sst__buf_reserve(b, (size_t)n)) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

char *sst__buf_detach(sst__buf *b, size_t *len_out) {
    if (b->oom) {
        sst__buf_free(b);
        return NULL;
    }
    if (!sst__buf_reserve(b, 0)) {
        sst__buf_free(b);
        return NULL;
    }
    b->data[b->len] = '\0';
    char *p = b->data;
    if (len_out != NULL) {
        *len_out = b->len;
    }
    sst__buf_init(b);
    return p;
}

bool sst__grow(void **items, size_t *cap, size_t n, size_t size, size_t first) {
    if (n < *cap) {
        return true;
    }
    size_t c = *cap ? *cap * 2 : first;
    void *p = sst__realloc(*items, c * size);
    if (p == NULL) {
        return false;
    }
    *items = p;
    *cap = c;
    return true;
}

void sst__sleep_ms(uint64_t ms) {
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

uint64_t sst__now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

bool sst__buf_read_file(sst__buf *b, FILE *f, size_t max) {
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        sst__buf_append(b, chunk, n);
        if (max != 0 && b->len > max) {
            break;
        }
    }
    return ferror(f) == 0;
}
