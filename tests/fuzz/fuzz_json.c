/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the JSON reader. Beyond "no crash, no leak", every
 * accepted input must round-trip through the writer in all three styles to
 * an equal value with an equal hash.
 */
#include <stdint.h>
#include <stdlib.h>

#include "superstep/superstep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int cond) {
    if (!cond) {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sst_json_read_opts opts;
    sst_json_read_opts_init(&opts);
    opts.max_depth = 64;
    sst_error err;
    sst_value *v = sst_json_read((const char *)data, size, &opts, &err);
    if (v == NULL) {
        check(err.code != SST_OK && err.msg[0] != '\0');
        return 0;
    }
    static const unsigned styles[] = {SST_JSON_COMPACT, SST_JSON_PRETTY, SST_JSON_CANONICAL};
    for (int i = 0; i < 3; i++) {
        size_t len;
        char *text = sst_json_write(v, styles[i], &len, &err);
        check(text != NULL);
        sst_value *back = sst_json_read(text, len, &opts, &err);
        check(back != NULL);
        check(sst_value_equal(v, back));
        check(sst_value_hash(v) == sst_value_hash(back));
        sst_value_unref(back);
        sst_free(text);
    }
    sst_value_unref(v);
    return 0;
}
