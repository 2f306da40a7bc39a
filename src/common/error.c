/* SPDX-License-Identifier: MIT */
/* Status code names and messages (from SST_CODE_MAP) and error formatting. */
#include <stdio.h>
#include <string.h>

#include "common.h"

const char *sst_strerror(sst_code code) {
    switch (code) {
#define SST__CODE_MSG(name, msg)                                                                   \
    case SST_##name:                                                                               \
        return msg;
        SST_CODE_MAP(SST__CODE_MSG)
#undef SST__CODE_MSG
        case SST_CODE_COUNT:
            break;
    }
    return "unknown error code";
}

const char *sst_code_name(sst_code code) {
    switch (code) {
#define SST__CODE_NAME(name, msg)                                                                  \
    case SST_##name:                                                                               \
        return "SST_" #name;
        SST_CODE_MAP(SST__CODE_NAME)
#undef SST__CODE_NAME
        case SST_CODE_COUNT:
            break;
    }
    return "SST_UNKNOWN";
}

bool sst_code_is_transient(sst_code code) {
    return code == SST_EIO || code == SST_ETIMEOUT || code == SST_EUNAVAILABLE || code == SST_ETASK;
}

void sst_error_clear(sst_error *err) {
    if (err != NULL) {
        memset(err, 0, sizeof *err);
    }
}

/* Cuts @p s (NUL-terminated, in a buffer) back to a UTF-8 character boundary. */
static void cut_utf8(char *s) {
    size_t n = strlen(s);
    if (n == 0) {
        return;
    }
    /* Walk back over continuation bytes to the last lead byte and check that
     * its sequence is complete; if not, drop it. */
    size_t i = n;
    size_t cont = 0;
    while (i > 0 && ((unsigned char)s[i - 1] & 0xC0) == 0x80 && cont < 3) {
        i--;
        cont++;
    }
    if (i == 0) {
        s[0] = '\0';
        return;
    }
    unsigned char lead = (unsigned char)s[i - 1];
    size_t need = lead < 0x80 ? 0 : lead >= 0xF0 ? 3 : lead >= 0xE0 ? 2 : lead >= 0xC0 ? 1 : 0;
    if (need != cont) {
        s[lead < 0x80 ? n : i - 1] = '\0';
    }
}

sst_code sst__verror(sst_error *err, sst_code code, const char *fmt, va_list ap) {
    if (err != NULL) {
        err->code = code;
        err->line = err->column = err->offset = 0;
        int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        if (n < 0) {
            err->msg[0] = '\0';
        } else if ((size_t)n >= sizeof err->msg) {
            cut_utf8(err->msg);
        }
    }
    return code;
}

sst_code sst__error(sst_error *err, sst_code code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    sst__verror(err, code, fmt, ap);
    va_end(ap);
    return code;
}

sst_code sst__enomem(sst_error *err) {
    return sst__error(err, SST_ENOMEM, "out of memory");
}

sst_error *sst__err_local(sst_error *err, sst_error *local) {
    if (err != NULL) {
        return err;
    }
    /* What sst_error_clear does, without writing the whole message buffer:
     * this runs on every call that passed NULL. */
    local->code = SST_OK;
    local->line = local->column = local->offset = 0;
    local->msg[0] = '\0';
    return local;
}

sst_code sst__code(const sst_error *err) {
    return err != NULL && err->code != SST_OK ? err->code : SST_ENOMEM;
}

sst_code sst__error_unless_set(sst_error *err, sst_code code, const char *fmt, ...) {
    if (err == NULL) {
        return code;
    }
    if (err->code == SST_OK) {
        va_list ap;
        va_start(ap, fmt);
        sst__verror(err, code, fmt, ap);
        va_end(ap);
    }
    return err->code;
}

void sst__error_prefix(sst_error *err, const char *fmt, ...) {
    if (err == NULL) {
        return;
    }
    char prefix[SST_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    if (n < 0) {
        return;
    }
    /* Build "prefix: old" by hand: snprintf would warn about the bounded cut. */
    char old[SST_ERROR_MSG_MAX];
    memcpy(old, err->msg, sizeof old);
    size_t plen = strlen(prefix);
    size_t olen = strnlen(old, sizeof old - 1);
    size_t cap = sizeof err->msg - 1;
    size_t k = plen < cap ? plen : cap;
    memcpy(err->msg, prefix, k);
    if (k + 2 <= cap) {
        memcpy(err->msg + k, ": ", 2);
        k += 2;
    }
    size_t rest = olen < cap - k ? olen : cap - k;
    memcpy(err->msg + k, old, rest);
    err->msg[k + rest] = '\0';
    if (plen + 2 + olen > cap) {
        cut_utf8(err->msg);
    }
}

#ifndef NDEBUG
void sst__assert_fail(const char *cond, const char *file, int line) {
    fprintf(stderr, "superstep: internal assertion failed: %s (%s:%d)\n", cond, file, line);
    abort();
}
#endif
