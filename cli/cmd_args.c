/* SPDX-License-Identifier: MIT */
/* Argument helpers shared by the superstep commands. */
#define _POSIX_C_SOURCE 200809L
#include "cmd_args.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "superstep/id.h"

bool sst_cli_parse_bytes(const char *text, size_t *out) {
    if (text[0] < '0' || text[0] > '9') {
        return false; /* strtoull would accept a sign or spaces */
    }
    char *end;
    errno = 0;
    unsigned long long n = strtoull(text, &end, 10);
    unsigned shift = *end == 'K' || *end == 'k'   ? 10
                     : *end == 'M' || *end == 'm' ? 20
                     : *end == 'G' || *end == 'g' ? 30
                                                  : 0;
    end += shift != 0;
    if (errno != 0 || *end != '\0' || n == 0 || n > (SIZE_MAX >> shift)) {
        return false;
    }
    *out = (size_t)n << shift;
    return true;
}

const char *sst_cli_default_db(const char *given) {
    const char *db = given != NULL ? given : getenv("SUPERSTEP_DB");
    return db != NULL && db[0] != '\0' ? db : SST_CLI_DEFAULT_DB;
}

void sst_cli_new_thread_id(char out[37]) {
    sst_uuid7(out);
}

bool sst_cli_parse_durability(const char *text, sst_durability *out) {
    static const struct {
        const char *name;
        sst_durability mode;
    } modes[] = {{"sync", SST_DURABILITY_SYNC},
                 {"async", SST_DURABILITY_ASYNC},
                 {"exit", SST_DURABILITY_EXIT}};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        if (strcmp(text, modes[i].name) == 0) {
            *out = modes[i].mode;
            return true;
        }
    }
    return false;
}

bool sst_cli_parse_flush(const char *text, sst_flush_policy *out) {
    bool on = strcmp(text, "on") == 0;
    if (!on && strcmp(text, "off") != 0) {
        return false;
    }
    *out = on ? SST_FLUSH_ON : SST_FLUSH_OFF;
    return true;
}
