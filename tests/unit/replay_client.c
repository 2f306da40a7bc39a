/* SPDX-License-Identifier: MIT */
/* The replay server's record of a client's last request; see replay_client.h. */
#include "replay_client.h"

#include <stdio.h>

#include "agent/http.h"
#include "superstep/json.h"
#include "test_util.h"

static sst_code grab_done(void *ud, const char *body, size_t len, bool *transient, sst_error *err) {
    (void)transient;
    sst_value **out = ud;
    *out = sst_json_read(body, len, NULL, err);
    return *out != NULL ? SST_OK : err->code;
}

sst_value *replay_last_request(const char *root, const char *model) {
    sst__http_config hc;
    sst__http_config_init(&hc);
    hc.what = "replay";
    hc.max_attempts = 1;
    sst__http_request q;
    sst_error err = {0};
    sst_value *out = NULL;
    char body[256];
    snprintf(body, sizeof body, "{\"of\":\"%s\"}", model);
    if (sst__http_request_init(&q, &hc, root, "/_replay/last", "application/json", NULL, &err) ==
        SST_OK) {
        sst__http_handler h = {.ud = &out, .done = grab_done};
        if (sst__http_post(&q, body, &h, &err) != SST_OK) {
            sst_value_unref(out);
            out = NULL;
        }
    }
    sst__http_request_free(&q);
    if (out == NULL) {
        fail_msg("the replay server's last request for %s: %s", model, err.msg);
    }
    return out;
}
