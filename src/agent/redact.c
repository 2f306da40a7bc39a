/* SPDX-License-Identifier: MIT */
/* Masking secrets in messages; see redact.h. */
#include "redact.h"

#include <stdio.h>
#include <strings.h>

static bool is_alnum(unsigned char c) {
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

/* A character of an RFC 6750 b64token (Bearer) or of base64 (Basic). */
static bool is_cred(unsigned char c) {
    return is_alnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' ||
           c == '=';
}

/* A character of an OpenAI-style key: sk-proj-AbC_123... */
static bool is_key(unsigned char c) {
    return is_alnum(c) || c == '-' || c == '_';
}

bool sst__url_userinfo(const char *url, size_t *off, size_t *len) {
    const char *start = strstr(url, "://");
    start = start != NULL ? start + 3 : url;
    size_t end = strcspn(start, "/?#");
    const char *at = NULL;
    for (size_t i = 0; i < end; i++) {
        if (start[i] == '@') {
            at = start + i;
        }
    }
    if (at == NULL) {
        return false;
    }
    *off = (size_t)(start - url);
    *len = (size_t)(at + 1 - start);
    return true;
}

void sst__url_redact(const char *url, char *out, size_t size) {
    size_t off = 0, len = 0;
    if (size == 0) {
        return;
    }
    if (!sst__url_userinfo(url, &off, &len)) {
        snprintf(out, size, "%s", url);
        return;
    }
    snprintf(out, size, "%.*s%s", (int)off, url, url + off + len);
}

/* The length of the literal secret at @p p, or 0. */
static size_t secret_at(const char *p, size_t left, const char *const *secrets, size_t n) {
    for (size_t k = 0; k < n; k++) {
        size_t sl = secrets[k] != NULL ? strlen(secrets[k]) : 0;
        if (sl > 0 && sl <= left && memcmp(p, secrets[k], sl) == 0) {
            return sl;
        }
    }
    return 0;
}

/*
 * "Bearer TOKEN" or "Basic TOKEN" at @p p (after a word boundary): the
 * length of the scheme and its blanks, with the token's in *tok; else 0.
 */
static size_t scheme_at(const char *p, size_t left, size_t *tok) {
    static const char *const schemes[] = {"bearer", "basic"};
    for (size_t k = 0; k < SST_ARRAY_LEN(schemes); k++) {
        size_t sl = strlen(schemes[k]);
        if (left <= sl || strncasecmp(p, schemes[k], sl) != 0) {
            continue;
        }
        size_t i = sl;
        while (i < left && (p[i] == ' ' || p[i] == '\t')) {
            i++;
        }
        size_t t = i;
        while (t < left && is_cred((unsigned char)p[t])) {
            t++;
        }
        if (i > sl && t > i) {
            *tok = t - i;
            return i;
        }
    }
    return 0;
}

/* The length of an "sk-..." key at @p p (after a word boundary), or 0. */
static size_t key_at(const char *p, size_t left) {
    if (left < 3 || memcmp(p, "sk-", 3) != 0) {
        return 0;
    }
    size_t i = 3;
    while (i < left && is_key((unsigned char)p[i])) {
        i++;
    }
    return i - 3 >= 8 ? i : 0;
}

void sst__redact(const char *text, size_t len, const char *const *secrets, size_t n, size_t max,
                 sst__buf *out) {
    size_t start = out->len;
    size_t i = 0;
    while (i < len && out->len - start < max && !out->oom) {
        const char *p = text + i;
        size_t left = len - i;
        unsigned char before = i > 0 ? (unsigned char)text[i - 1] : ' ';
        size_t m = secret_at(p, left, secrets, n), tok = 0;
        if (m > 0) {
            sst__buf_append(out, SST__REDACTED, strlen(SST__REDACTED));
        } else if (!is_alnum(before) && (m = scheme_at(p, left, &tok)) > 0) {
            sst__buf_append(out, p, m); /* the scheme and its blanks */
            sst__buf_append(out, SST__REDACTED, strlen(SST__REDACTED));
            m += tok;
        } else if (!is_key(before) && (m = key_at(p, left)) > 0) {
            sst__buf_append(out, "sk-" SST__REDACTED, strlen("sk-" SST__REDACTED));
        } else {
            sst__buf_putc(out, *p);
            m = 1;
        }
        i += m;
    }
}
