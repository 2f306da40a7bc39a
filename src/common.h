/* SPDX-License-Identifier: MIT */
/*
 * Project-wide internals: the allocator every layer uses, error helpers,
 * assertions and small utilities. Nothing here is installed.
 */
#ifndef SUPERSTEP_COMMON_H
#define SUPERSTEP_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "superstep/error.h"

#define SST_UNUSED(x)    ((void)(x))
#define SST_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#if defined(__GNUC__) || defined(__clang__)
#define SST_LIKELY(x)         __builtin_expect(!!(x), 1)
#define SST_UNLIKELY(x)       __builtin_expect(!!(x), 0)
#define SST_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define SST_LIKELY(x)   (x)
#define SST_UNLIKELY(x) (x)
#define SST_PRINTF(fmt, args)
#endif

/*
 * SST_ASSERT checks our own invariants, never user input. It aborts in
 * debug builds and compiles to nothing in release builds (NDEBUG).
 */
#ifdef NDEBUG
#define SST_ASSERT(cond) ((void)0)
#else
#define SST_ASSERT(cond) ((cond) ? (void)0 : sst__assert_fail(#cond, __FILE__, __LINE__))
void sst__assert_fail(const char *cond, const char *file, int line);
#endif

/* The allocator (error.h: sst_set_allocator). All library memory goes here. */
void *sst__malloc(size_t size);
void *sst__calloc(size_t n, size_t size);
void *sst__realloc(void *ptr, size_t size);
void sst__free(void *ptr);
/* A NUL-terminated copy of @p len bytes of @p s; NULL on out of memory. */
char *sst__strndup(const char *s, size_t len);

/*
 * Fills @p err (if not NULL) with @p code and a formatted message, cut at a
 * UTF-8 boundary. Returns @p code so callers can write
 * `return sst__error(err, SST_EINVAL, "...")`.
 */
sst_code sst__error(sst_error *err, sst_code code, const char *fmt, ...) SST_PRINTF(3, 4);
sst_code sst__verror(sst_error *err, sst_code code, const char *fmt, va_list ap);
/* Out of memory, with the standard message. */
sst_code sst__enomem(sst_error *err);
/*
 * Prepends "prefix: " to an error already in @p err (used to add context such
 * as a file name while keeping the original text).
 */
void sst__error_prefix(sst_error *err, const char *fmt, ...) SST_PRINTF(2, 3);

/* Fills @p buf with @p n cryptographically random bytes; SST_EIO on failure. */
sst_code sst__random_bytes(void *buf, size_t n, sst_error *err);

/* The stable 64-bit hash of bytes (hash.c) and its finaliser. */
uint64_t sst__hash_bytes(const void *data, size_t len, uint64_t seed);
uint64_t sst__hash_mix(uint64_t h);

/*
 * CRC-32C of @p len bytes continuing from @p crc (0 to start): the hardware
 * instruction when present; _soft always uses the tables (for tests).
 */
uint32_t sst__crc32c(uint32_t crc, const void *data, size_t len);
uint32_t sst__crc32c_soft(uint32_t crc, const void *data, size_t len);

/* Sleeps @p ms milliseconds (restarted after signals). */
void sst__sleep_ms(uint64_t ms);
/* Wall-clock milliseconds since the epoch (leases, created-at times). */
uint64_t sst__now_ms(void);

/* A random UUIDv4 as 36 lowercase characters plus NUL. */
sst_code sst__uuid4(char out[37], sst_error *err);

/* Growable byte buffer used by writers. */
typedef struct sst__buf {
    char *data; /* owned, sst__malloc; NUL-terminated when len > 0 */
    size_t len;
    size_t cap;
    bool oom; /* set once an append failed; later appends are no-ops */
} sst__buf;

void sst__buf_init(sst__buf *b);
void sst__buf_free(sst__buf *b);
bool sst__buf_reserve(sst__buf *b, size_t extra);
void sst__buf_append_slow(sst__buf *b, const void *data, size_t n);

/* Appends @p n bytes; on out of memory sets b->oom and drops the data. */
static inline void sst__buf_append(sst__buf *b, const void *data, size_t n) {
    if (b->data != NULL && n <= b->cap - b->len) {
        memcpy(b->data + b->len, data, n);
        b->len += n;
    } else {
        sst__buf_append_slow(b, data, n);
    }
}

static inline void sst__buf_putc(sst__buf *b, char c) {
    if (b->data != NULL && b->len < b->cap) {
        b->data[b->len++] = c;
    } else {
        sst__buf_append_slow(b, &c, 1);
    }
}
void sst__buf_printf(sst__buf *b, const char *fmt, ...) SST_PRINTF(2, 3);
/* Hands the NUL-terminated data to the caller; the buffer is left empty. */
char *sst__buf_detach(sst__buf *b, size_t *len_out);

#endif /* SUPERSTEP_COMMON_H */
