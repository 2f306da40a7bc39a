/* SPDX-License-Identifier: MIT */
/*
 * The deterministic offline model ("fake:FILE"): replays scripted assistant
 * replies from a JSONL file, one reply per call, in order. A reply is an
 * assistant message ({"content": ..., "tool_calls": [...]}); its content
 * reaches the token callback word by word, as a streamed reply would.
 * For examples and tests: no network, the same run every time.
 */
#ifndef SUPERSTEP_AGENT_FAKE_MODEL_H
#define SUPERSTEP_AGENT_FAKE_MODEL_H

#include <pthread.h>

#include "completion.h"

typedef struct sst__fake_model {
    sst_value *replies; /* owned array of assistant messages */
    size_t next;        /* protected by mu */
    pthread_mutex_t mu;
} sst__fake_model;

/*
 * Loads @p path: one JSON object per non-empty line.
 * @return SST_OK; SST_EIO (unreadable), SST_EPARSE (a line that is not a JSON
 *         object, naming the line), SST_ENOMEM.
 */
sst_code sst__fake_model_load(sst__fake_model *m, const char *path, sst_error *err);
void sst__fake_model_free(sst__fake_model *m);
/*
 * The next reply as an assistant message (new), its content given to
 * @p on_token word by word. SST_ERANGE when the script has no reply left.
 */
sst_value *sst__fake_model_chat(sst__fake_model *m, sst__token_fn on_token, void *ud,
                                sst_error *err);

#endif
