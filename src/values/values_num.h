/* SPDX-License-Identifier: MIT */
/* Locale-independent number formatting and parsing (numfmt.c). */
#ifndef SUPERSTEP_VALUES_NUM_H
#define SUPERSTEP_VALUES_NUM_H

#include <stddef.h>
#include <stdint.h>

#define SST__DOUBLE_BUF 40
#define SST__INT_BUF    24

/* strtod in the "C" locale. */
double sst__strtod_c(const char *s, char **end);
/* Shortest text that reads back to @p d (finite), always with '.' or exponent. */
size_t sst__fmt_double(double d, char out[SST__DOUBLE_BUF]);
/* Decimal text of @p i. */
size_t sst__fmt_int(int64_t i, char out[SST__INT_BUF]);

#endif /* SUPERSTEP_VALUES_NUM_H */
