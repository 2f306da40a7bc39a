/* SPDX-License-Identifier: MIT */
/* Asks tests/agent/replay_server.py what a client sent it (tests of the model clients). */
#ifndef SUPERSTEP_TESTS_REPLAY_CLIENT_H
#define SUPERSTEP_TESTS_REPLAY_CLIENT_H

#include "superstep/value.h"

/*
 * The last request the replay server at @p root ("http://127.0.0.1:PORT") got for
 * @p model: {"count", "path", "headers", "body"} (new). Fails the test when it cannot ask.
 */
sst_value *replay_last_request(const char *root, const char *model);

#endif
