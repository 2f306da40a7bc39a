/* SPDX-License-Identifier: MIT */
/* Argument helpers shared by the superstep commands (cli/cmd_args.c). */
#ifndef SUPERSTEP_CLI_ARGS_H
#define SUPERSTEP_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * A byte count above 0, optionally with K, M or G (powers of 1024): "100M" is
 * 104857600. False for anything else (signs, spaces, overflow).
 */
bool sst_cli_parse_bytes(const char *text, size_t *out);

#endif
