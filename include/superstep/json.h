/* SPDX-License-Identifier: MIT */
/*
 * JSON text <-> sst_value: our own reader and writer (values layer).
 *
 * The reader follows RFC 8259 strictly: no comments, no trailing commas, no
 * NaN; strings must be valid UTF-8 and \u escapes must not leave lone
 * surrogates. Integers that fit int64 stay exact integers; other numbers
 * become doubles (rounded correctly); a number out of double range is an
 * error. Duplicate object keys: the last value wins, at the first key's
 * position. Errors carry line, column and byte offset and say what was
 * expected.
 *
 * Thread-safety: all functions are thread-safe.
 */
#ifndef SUPERSTEP_JSON_H
#define SUPERSTEP_JSON_H

#include <stddef.h>

#include "superstep/error.h"
#include "superstep/export.h"
#include "superstep/value.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Limits for the reader; fill with sst_json_read_opts_init, then adjust. */
typedef struct sst_json_read_opts {
    size_t max_depth; /* nesting of arrays and objects; default 512 */
    size_t max_bytes; /* input size; default 256 MiB */
} sst_json_read_opts;

SST_API void sst_json_read_opts_init(sst_json_read_opts *opts);

/**
 * Parses one JSON text (surrounding whitespace allowed).
 * @param text  borrowed; need not be NUL-terminated
 * @param opts  NULL for the defaults
 * @return new value; NULL with SST_EPARSE (syntax, with position), SST_EUTF8,
 *         SST_ELIMIT (depth or size), SST_ERANGE (number too large) or SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_value *sst_json_read(const char *text, size_t len,
                                               const sst_json_read_opts *opts, sst_error *err);

/** sst_json_read of a NUL-terminated text with default limits. */
SST_NODISCARD SST_API sst_value *sst_json_parse(const char *text, sst_error *err);

/**
 * Reads and parses a whole file.
 * @return new value; NULL with SST_EIO (message names the file and the OS
 *         error) or any error of sst_json_read, whose message then starts with the file name.
 */
SST_NODISCARD SST_API sst_value *sst_json_read_file(const char *path,
                                                    const sst_json_read_opts *opts, sst_error *err);

/** Writer flags; combine with |. */
enum sst_json_write_flags {
    SST_JSON_COMPACT = 0,        /* no whitespace, keys in insertion order */
    SST_JSON_PRETTY = 1u << 0,   /* two-space indentation, one member per line */
    SST_JSON_CANONICAL = 1u << 1 /* keys sorted by their UTF-8 bytes (with PRETTY: indented) */
};

/**
 * Serialises @p v. Doubles are written in the shortest form that reads back
 * to the same double and always with a '.' or exponent, so they stay doubles;
 * integers are exact. Output is UTF-8 with only the escapes JSON requires
 * (plus \u2028/\u2029 kept literal).
 * @param v       borrowed
 * @param len_out OUT (may be NULL): length without the terminating NUL
 * @return new NUL-terminated text, freed with sst_free; NULL with SST_ENOMEM
 *         or SST_ELIMIT (nesting deeper than 100 000).
 */
SST_NODISCARD SST_API char *sst_json_write(const sst_value *v, unsigned flags, size_t *len_out,
                                           sst_error *err);

#ifdef __cplusplus
}
#endif
#endif /* SUPERSTEP_JSON_H */
