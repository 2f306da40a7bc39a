/* SPDX-License-Identifier: MIT */
/*
 * Keeping secrets out of messages: everything the LLM client puts into an
 * error (and so into a run's error, the checkpoint database and the CLI's
 * output) goes through these. URLs lose their user info; text from a server
 * (an error body) has its credentials masked.
 */
#ifndef SUPERSTEP_AGENT_REDACT_H
#define SUPERSTEP_AGENT_REDACT_H

#include "common.h"

/* What replaces a secret. */
#define SST__REDACTED "[redacted]"

/*
 * The span of the user info in @p url: "user:pass@" in
 * "http://user:pass@host/v1" (from the start of the authority, after
 * "scheme://" or at the start when there is no scheme, up to and including
 * the authority's last '@'). Returns false when the URL has none.
 */
bool sst__url_userinfo(const char *url, size_t *off, size_t *len);

/*
 * @p url without its user info, for messages: "http://user:pass@host/v1"
 * becomes "http://host/v1". Writes at most @p size - 1 bytes and a NUL.
 */
void sst__url_redact(const char *url, char *out, size_t size);

/*
 * Appends @p text (@p len bytes) to @p out with credentials masked: the
 * token after "Bearer " or "Basic " (any case) becomes "[redacted]", a
 * token shaped like an OpenAI key ("sk-" and 8 or more key characters)
 * becomes "sk-[redacted]", and each occurrence of the @p n non-empty
 * strings in @p secrets (the API key itself, a URL's password) becomes
 * "[redacted]". Stops once @p out has grown by @p max bytes (the last
 * replacement may pass it), so a cut never shows part of a secret.
 */
void sst__redact(const char *text, size_t len, const char *const *secrets, size_t n, size_t max,
                 sst__buf *out);

#endif
