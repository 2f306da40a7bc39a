/* SPDX-License-Identifier: MIT */
/*
 * The HTTP client layer every libcurl user of the library shares: the LLM
 * and embeddings clients (http.c), the OTLP exporter (otlp_exporter.c), the
 * MCP HTTP transport (mcp_http.c) and the server's webhooks
 * (server/webhook.c). It holds what they must agree on: libcurl's global
 * setup (once per process), one rule for a server's Retry-After, and the
 * wait between two attempts, which is the server's Retry-After when it gave
 * one, else the backoff of a retry policy (sst_retry_policy_delay_ms), never
 * more than the caller's cap. Each user keeps its own transfer loop (a
 * blocking POST, a multi handle woken by a shutdown, an event stream) and
 * its own idea of which statuses are worth another attempt.
 */
#ifndef SUPERSTEP_AGENT_HTTP_CLIENT_H
#define SUPERSTEP_AGENT_HTTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "superstep/pregel.h"

/* curl_global_init(CURL_GLOBAL_DEFAULT), once per process: before a user's first handle. */
void sst__http_global_init(void);

/*
 * The longest wait a Retry-After may ask, one day: a longer delay counts as
 * this much (each user caps its waits lower still: see sst__http_retry_wait_ms).
 */
#define SST__RETRY_AFTER_MAX_MS INT64_C(86400000)

/*
 * The wait in ms a Retry-After value asks for (RFC 9110 section 10.2.3):
 * delta-seconds ("120"; a fraction, "1.5", is taken too), or an HTTP-date
 * (IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT", or the obsolete RFC 850 and
 * asctime forms) less @p now_ms (ms since the epoch; a date past is 0).
 * Spaces around the value are ignored; the result is at most
 * SST__RETRY_AFTER_MAX_MS.
 * @return the wait, or -1 when @p value (@p len bytes) is neither form.
 */
int64_t sst__retry_after_parse(const char *value, size_t len, int64_t now_ms);

/*
 * For a curl header callback: when @p line (@p len bytes, as curl hands it,
 * CRLF included) is a Retry-After header, its wait as sst__retry_after_parse
 * gives it against the current time; -1 for any other line or a bad value.
 */
int64_t sst__retry_after_header(const char *line, size_t len);

/*
 * The wait before attempt @p attempt + 1 after attempt @p attempt (1-based)
 * failed: @p retry_after_ms when the server gave one (>= 0), else the
 * policy's backoff (sst_retry_policy_delay_ms, with random jitter when the
 * policy asks for it); at most @p cap_ms.
 */
uint64_t sst__http_retry_wait_ms(const sst_retry_policy *p, unsigned attempt,
                                 int64_t retry_after_ms, uint64_t cap_ms);

/*
 * Waits @p ms before another attempt of client @p who ("LLM", "OTLP",
 * "MCP", "webhook"), in slices of at most 100 ms, stopping early when
 * @p stop (may be NULL) says so. A wait hook, when set, is told of the wait
 * instead and no time passes.
 * @return false when @p stop ended the wait.
 */
bool sst__http_wait(const char *who, uint64_t ms, bool (*stop)(void *ud), void *ud);

/*
 * For a user that waits its own way (the OTLP exporter's thread, which a
 * shutdown wakes): true when a wait hook took the wait of @p ms (the caller
 * then does not wait), false when the caller must wait itself.
 */
bool sst__http_wait_hooked(const char *who, uint64_t ms);

/*
 * TESTS ONLY: @p fn (NULL: none) is told of every wait between two attempts
 * of any client, with the client's name and the ms it would wait, and no
 * time passes (the waits a test sees are the ones asked for, not the ones
 * slept). Process-wide; set it while no request is under way.
 */
typedef void (*sst__http_wait_fn)(void *ud, const char *who, uint64_t ms);
void sst__http_set_wait_hook(sst__http_wait_fn fn, void *ud);

#endif
