/* SPDX-License-Identifier: MIT */
/*
 * A client for OpenAI-compatible embeddings (POST {base_url}/embeddings) over
 * the agent layer's HTTP machinery (http.h: timeouts, retries honouring
 * Retry-After, a bounded reply, redacted errors). Texts go in batches of at
 * most `batch` per request; each reply must hold one embedding per text of
 * exactly the expected size, placed by its "index". The public embedder
 * (superstep/agent.h, sst_embedder_*) wraps this; docs/embeddings.md
 * describes both.
 */
#ifndef SUPERSTEP_AGENT_EMBEDDINGS_H
#define SUPERSTEP_AGENT_EMBEDDINGS_H

#include "http.h"

typedef struct sst__embed_config {
    const char *base_url;    /* e.g. "https://api.openai.com/v1"; borrowed */
    const char *model;       /* borrowed */
    const char *api_key_env; /* the variable holding the key, or NULL for none; borrowed */
    size_t dims;             /* sent as "dimensions" when not 0 */
    size_t batch;            /* texts per request; default 256 */
    sst__http_config http;   /* what = "embeddings"; max_response default 64 MiB */
} sst__embed_config;

void sst__embed_config_init(sst__embed_config *c);

/*
 * The embeddings of the @p n texts (UTF-8, NUL-terminated) into @p out
 * (n * dims floats, row-major, row i for texts[i]). @p dims must equal
 * c->dims when that is not 0. On failure out's contents are unspecified
 * (earlier batches may have been written).
 * @return SST_OK (n == 0 sends nothing); SST_EINVAL (bad arguments, an HTTP
 *         status other than 429/5xx, embeddings of another size than @p dims),
 *         SST_EUTF8 (a text that is not UTF-8), SST_EPARSE (a malformed reply,
 *         or one with the wrong number of embeddings or bad indices),
 *         SST_ETIMEOUT and SST_EUNAVAILABLE (after the retries), SST_ERANGE (a
 *         reply larger than http.max_response), SST_ENOMEM.
 */
sst_code sst__embed(const sst__embed_config *c, const char *const *texts, size_t n, size_t dims,
                    float *out, sst_error *err);

#endif
