/* SPDX-License-Identifier: MIT */
/*
 * Unique ids: random UUIDs (RFC 9562 version 4) and time-ordered ones
 * (version 7), as 36 lowercase characters ("0190c1e2-7a3b-7c01-9f2e-...").
 */
#ifndef SUPERSTEP_ID_H
#define SUPERSTEP_ID_H

#include "superstep/error.h"
#include "superstep/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Writes a random UUID (version 4) to @p out.
 *
 * @param out  OUT: 36 characters and a NUL; unchanged on failure.
 * @param err  NULL, or filled on failure.
 * @return SST_OK, or SST_EIO when the system's random source failed.
 * Thread-safety: thread-safe.
 */
SST_NODISCARD SST_API sst_code sst_uuid4(char out[37], sst_error *err);

/**
 * Writes a time-ordered UUID (version 7) to @p out: 48 bits of Unix time in
 * milliseconds, the version, a 12-bit counter, the variant and 62 random
 * bits. The ids one process makes strictly increase, as numbers and as text
 * (strcmp), even many in one millisecond or when the wall clock steps back
 * (they then run a little ahead of it). Ids from different processes are
 * ordered by their milliseconds only. Never fails: if the random source
 * fails, bits of the clock stand in for the random ones.
 *
 * @param out  OUT: 36 characters and a NUL.
 * Thread-safety: thread-safe (one process-wide clock, updated atomically).
 */
SST_API void sst_uuid7(char out[37]);

/**
 * Writes the name-based UUID (version 5, SHA-1) of @p name in namespace
 * @p ns (a UUID's 36-character text) to @p out, as Python's uuid.uuid5:
 * LangGraph's server names a graph's default assistant
 * uuid5(NAMESPACE_X500... "6ba7b821-...", graph_id).
 *
 * @return SST_OK, or SST_EINVAL (@p ns is not a UUID; @p out unchanged).
 * Thread-safety: thread-safe.
 */
SST_NODISCARD SST_API sst_code sst_uuid5(const char *ns, const char *name, char out[37],
                                         sst_error *err);

#ifdef __cplusplus
}
#endif
#endif /* SUPERSTEP_ID_H */
