/* SPDX-License-Identifier: MIT */
/* The one hex digit reader of the library (JSON escapes, UUIDs, traceparent, %-escapes). */
#ifndef SUPERSTEP_COMMON_HEX_H
#define SUPERSTEP_COMMON_HEX_H

/* The value of hex digit @p c, either case, or -1. */
static inline int sst__hex_digit(int c) {
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

#endif
