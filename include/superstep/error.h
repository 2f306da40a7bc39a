/* SPDX-License-Identifier: MIT */
/*
 * Status codes, the caller-owned error struct and the replaceable allocator.
 * Every layer reports failures through these; see docs/errors.md.
 */
#ifndef SUPERSTEP_ERROR_H
#define SUPERSTEP_ERROR_H

#include <stdbool.h>
#include <stddef.h>

#include "superstep/export.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define SST_NODISCARD __attribute__((warn_unused_result))
#else
#define SST_NODISCARD
#endif

/*
 * The list of status codes: X(name, message). Append only; a code's value
 * never changes once released.
 */
#define SST_CODE_MAP(X)                                                                            \
    X(OK, "success")                                                                               \
    X(ENOMEM, "out of memory")                                                                     \
    X(EINVAL, "invalid argument")                                                                  \
    X(EPARSE, "malformed input")                                                                   \
    X(EUTF8, "invalid UTF-8")                                                                      \
    X(ELIMIT, "limit exceeded")                                                                    \
    X(ETYPE, "type mismatch")                                                                      \
    X(ERANGE, "out of range")                                                                      \
    X(ENOTFOUND, "not found")                                                                      \
    X(ECONFLICT, "conflicting updates")                                                            \
    X(EREDUCER, "reducer failed")                                                                  \
    X(EIO, "input/output error")                                                                   \
    X(ETIMEOUT, "timed out")                                                                       \
    X(EUNAVAILABLE, "temporarily unavailable")                                                     \
    X(ETASK, "task failed")                                                                        \
    X(EINTERRUPT, "interrupted")                                                                   \
    X(ENOTSUP, "not supported")                                                                    \
    X(EBUSY, "busy")                                                                               \
    X(EPARENT, "command for the parent graph")                                                     \
    X(ECANCELLED, "cancelled")

/** A status code. SST_OK is 0; every failure is positive. */
typedef enum sst_code {
#define SST__CODE_ENUM(name, msg) SST_##name,
    SST_CODE_MAP(SST__CODE_ENUM)
#undef SST__CODE_ENUM
        SST_CODE_COUNT /* sentinel: not a code, never returned */
} sst_code;

/** A short static description of @p code ("out of memory"); never NULL. */
SST_API const char *sst_strerror(sst_code code);

/** The symbolic name of @p code ("SST_ENOMEM"); never NULL ("SST_UNKNOWN"). */
SST_API const char *sst_code_name(sst_code code);

/**
 * True for failures that may go away when retried: SST_EIO, SST_ETIMEOUT,
 * SST_EUNAVAILABLE and SST_ETASK (a node's own failure). Bad input, type
 * errors and limits are permanent. This is the default retry predicate.
 */
SST_API bool sst_code_is_transient(sst_code code);

#define SST_ERROR_MSG_MAX 256

/**
 * Details of a failure, owned by the caller and passed as the optional last
 * argument of fallible functions (NULL means "not interested"). There is no
 * global or thread-local "last error".
 *
 * `msg` names the thing that failed ("reducer 'sum' on field 'counter':
 * expected number, got string"); text longer than SST_ERROR_MSG_MAX - 1 bytes
 * is cut at a UTF-8 character boundary. For parse errors `line` and `column`
 * (1-based, column counted in bytes) and `offset` (0-based byte offset) give
 * the position; they are 0 when there is no position.
 */
typedef struct sst_error {
    sst_code code;
    size_t line;   /* 1-based line of a parse error, else 0 */
    size_t column; /* 1-based byte column of a parse error, else 0 */
    size_t offset; /* 0-based byte offset of a parse error, else 0 */
    char msg[SST_ERROR_MSG_MAX];
} sst_error;

/** Resets @p err to SST_OK with an empty message. NULL is a no-op. */
SST_API void sst_error_clear(sst_error *err);

/** Allocator hooks with the contracts of malloc, realloc and free. */
typedef void *(*sst_malloc_fn)(size_t size);
typedef void *(*sst_realloc_fn)(void *ptr, size_t size);
typedef void (*sst_free_fn)(void *ptr);

/**
 * Replaces the allocator used for all library memory.
 *
 * Call at most once, at program start, before any other superstep function
 * and before any thread uses the library.
 * @return SST_OK, or SST_EINVAL if a hook is NULL.
 * Thread-safety: not thread-safe; see above.
 */
SST_API sst_code sst_set_allocator(sst_malloc_fn m, sst_realloc_fn r, sst_free_fn f);

/** Frees memory the library returned to the caller (e.g. JSON text). NULL is a no-op. */
SST_API void sst_free(void *ptr);

#ifdef __cplusplus
}
#endif
#endif /* SUPERSTEP_ERROR_H */
