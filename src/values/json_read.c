/* SPDX-License-Identifier: MIT */
/*
 * The JSON reader: a recursive-descent parser that builds sst_values
 * directly (no intermediate tree). Containers are built in place while they
 * are still unique. Object keys repeat a lot in real documents (every message
 * has "role" and "content"), so a small per-parse cache shares one string
 * value among equal keys.
 *
 * Errors name what was expected and what was found, with line, column and
 * byte offset computed only when an error happens.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "superstep/json.h"
#include "values_int.h"
#include "values_num.h"

#define DEFAULT_MAX_DEPTH 512
#define HARD_MAX_DEPTH    4096 /* bounds recursion whatever the options say */
#define DEFAULT_MAX_BYTES ((size_t)256 << 20)
#define KEY_CACHE         256
#define KEY_CACHE_MAX_LEN 32

/* Character classes inside strings. */
enum { C_PLAIN = 0, C_QUOTE, C_ESC, C_CTRL, C_HIGH };

#define Q C_QUOTE
#define E C_ESC
#define C C_CTRL
#define H C_HIGH
// clang-format off
static const unsigned char k_str_class[256] = {
    C, C, C, C, C, C, C, C, C, C, C, C, C, C, C, C, /* 0x00 */
    C, C, C, C, C, C, C, C, C, C, C, C, C, C, C, C, /* 0x10 */
    0, 0, Q, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x20 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x30 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x40 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, E, 0, 0, 0, /* 0x50 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x60 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x70 */
    H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, /* 0x80 */
    H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, /* 0x90 */
    H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, /* 0xA0 */
    H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, /* 0xB0 */
    H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, /* 0xC0 */
    H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, /* 0xD0 */
    H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, /* 0xE0 */
    H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, H, /* 0xF0 */
};
// clang-format on
#undef Q
#undef E
#undef C
#undef H

typedef struct reader {
    const unsigned char *start;
    const unsigned char *p;
    const unsigned char *end;
    size_t depth;
    size_t max_depth;
    sst_error *err;
    bool failed;
    sst__buf scratch;           /* decoded strings with escapes, number text */
    sst_value *keys[KEY_CACHE]; /* owned references to recent keys */
} reader;

void sst_json_read_opts_init(sst_json_read_opts *opts) {
    opts->max_depth = DEFAULT_MAX_DEPTH;
    opts->max_bytes = DEFAULT_MAX_BYTES;
}

/* Describes the input at @p at for messages: "'x'", "end of input", "byte 0xC3". */
static void describe(const reader *r, const unsigned char *at, char *out, size_t n) {
    if (at >= r->end) {
        snprintf(out, n, "end of input");
    } else if (*at >= 0x20 && *at < 0x7F) {
        snprintf(out, n, "'%c'", *at);
    } else if (*at == '\n') {
        snprintf(out, n, "a line break");
    } else {
        snprintf(out, n, "byte 0x%02X", *at);
    }
}

SST_PRINTF(4, 5)
static sst_value *fail(reader *r, const unsigned char *at, sst_code code, const char *fmt, ...) {
    if (r->failed) {
        return NULL;
    }
    r->failed = true;
    if (r->err == NULL) {
        return NULL;
    }
    size_t line = 1;
    const unsigned char *line_start = r->start;
    for (const unsigned char *q = r->start; q < at; q++) {
        if (*q == '\n') {
            line++;
            line_start = q + 1;
        }
    }
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    size_t column = (size_t)(at - line_start) + 1;
    sst__error(r->err, code, "%s at line %zu, column %zu", what, line, column);
    r->err->line = line;
    r->err->column = column;
    r->err->offset = (size_t)(at - r->start);
    return NULL;
}

static sst_value *fail_oom(reader *r) {
    if (!r->failed) {
        r->failed = true;
        sst__enomem(r->err);
    }
    return NULL;
}

static inline void skip_ws(reader *r) {
    const unsigned char *p = r->p;
    while (p < r->end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) {
        p++;
    }
    r->p = p;
}

static sst_value *parse_value(reader *r);

static int hex4(const unsigned char *p) {
    int v = 0;
    for (int i = 0; i < 4; i++) {
        int c = p[i], d;
        if (c >= '0' && c <= '9') {
            d = c - '0';
        } else if (c >= 'a' && c <= 'f') {
            d = c - 'a' + 10;
        } else if (c >= 'A' && c <= 'F') {
            d = c - 'A' + 10;
        } else {
            return -1;
        }
        v = v * 16 + d;
    }
    return v;
}

static void put_utf8(sst__buf *b, uint32_t cp) {
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    sst__buf_append(b, u, n);
}

/*
 * Decodes the string body after the opening quote at @p quote; on success
 * r->p is past the closing quote and *out and *len point at the bytes (either in
 * the input or in r->scratch).
 */
static bool scan_string(reader *r, const unsigned char *quote, const char **out, size_t *len) {
    const unsigned char *p = quote + 1;
    const unsigned char *s = p;
    const unsigned char *end = r->end;
    for (;;) {
        while (p < end && k_str_class[*p] == C_PLAIN) {
            p++;
        }
        if (p >= end) {
            fail(r, quote, SST_EPARSE, "unterminated string (no closing '\"')");
            return false;
        }
        unsigned char cls = k_str_class[*p];
        if (cls == C_QUOTE) {
            *out = (const char *)s;
            *len = (size_t)(p - s);
            r->p = p + 1;
            return true;
        }
        if (cls == C_HIGH) {
            size_t n = sst__utf8_seq(p, end);
            if (n == 0) {
                fail(r, p, SST_EUTF8, "invalid UTF-8 byte 0x%02X in string", *p);
                return false;
            }
            p += n;
            continue;
        }
        if (cls == C_CTRL) {
            fail(r, p, SST_EPARSE, "control character U+%04X in string must be escaped", *p);
            return false;
        }
        break; /* a backslash: decode the rest into scratch */
    }
    sst__buf *b = &r->scratch;
    b->len = 0;
    sst__buf_append(b, s, (size_t)(p - s));
    while (p < end) {
        unsigned char c = *p;
        unsigned char cls = k_str_class[c];
        if (cls == C_QUOTE) {
            if (b->oom) {
                fail_oom(r);
                return false;
            }
            *out = b->data;
            *len = b->len;
            r->p = p + 1;
            return true;
        }
        if (cls == C_PLAIN) {
            const unsigned char *run = p;
            while (p < end && k_str_class[*p] == C_PLAIN) {
                p++;
            }
            sst__buf_append(b, run, (size_t)(p - run));
            continue;
        }
        if (cls == C_HIGH) {
            size_t n = sst__utf8_seq(p, end);
            if (n == 0) {
                fail(r, p, SST_EUTF8, "invalid UTF-8 byte 0x%02X in string", *p);
                return false;
            }
            sst__buf_append(b, p, n);
            p += n;
            continue;
        }
        if (cls == C_CTRL) {
            fail(r, p, SST_EPARSE, "control character U+%04X in string must be escaped", c);
            return false;
        }
        /* Escape sequence. */
        if (p + 1 >= end) {
            break;
        }
        char e = (char)p[1];
        const char *simple = NULL;
        switch (e) {
            case '"':
                simple = "\"";
                break;
            case '\\':
                simple = "\\";
                break;
            case '/':
                simple = "/";
                break;
            case 'b':
                simple = "\b";
                break;
            case 'f':
                simple = "\f";
                break;
            case 'n':
                simple = "\n";
                break;
            case 'r':
                simple = "\r";
                break;
            case 't':
                simple = "\t";
                break;
            case 'u':
                break;
            default:
                fail(r, p, SST_EPARSE,
                     "invalid escape '\\%c' in string (expected one of \\\" \\\\ \\/ \\b \\f \\n "
                     "\\r \\t \\u)",
                     (e >= 0x20 && e < 0x7F) ? e : '?');
                return false;
        }
        if (simple != NULL) {
            sst__buf_putc(b, simple[0]);
            p += 2;
            continue;
        }
        int cp = end - p >= 6 ? hex4(p + 2) : -1;
        if (cp < 0) {
            fail(r, p, SST_EPARSE, "invalid \\u escape (expected four hex digits)");
            return false;
        }
        if (cp >= 0xDC00 && cp <= 0xDFFF) {
            fail(r, p, SST_EUTF8,
                 "lone surrogate \\u%04X in string (low surrogate without a high one)", cp);
            return false;
        }
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            int lo = (end - p >= 12 && p[6] == '\\' && p[7] == 'u') ? hex4(p + 8) : -1;
            if (lo < 0xDC00 || lo > 0xDFFF) {
                fail(
                    r, p, SST_EUTF8,
                    "lone surrogate \\u%04X in string (expected a \\uDC00-\\uDFFF escape after it)",
                    cp);
                return false;
            }
            put_utf8(b, 0x10000 + (((uint32_t)cp - 0xD800) << 10) + ((uint32_t)lo - 0xDC00));
            p += 12;
            continue;
        }
        put_utf8(b, (uint32_t)cp);
        p += 6;
    }
    fail(r, quote, SST_EPARSE, "unterminated string (no closing '\"')");
    return false;
}

static sst_value *parse_string(reader *r) {
    const char *s;
    size_t len;
    if (!scan_string(r, r->p, &s, &len)) {
        return NULL;
    }
    sst_value *v = sst__string_new_trusted(s, len);
    return v != NULL ? v : fail_oom(r);
}

/* A key value, shared with earlier equal keys of this parse. New reference. */
static sst_value *parse_key(reader *r) {
    const char *s;
    size_t len;
    if (!scan_string(r, r->p, &s, &len)) {
        return NULL;
    }
    if (len > KEY_CACHE_MAX_LEN) {
        sst_value *v = sst__string_new_trusted(s, len);
        return v != NULL ? v : fail_oom(r);
    }
    size_t slot = (size_t)(sst__hash_bytes(s, len, 0) & (KEY_CACHE - 1));
    sst_value *cached = r->keys[slot];
    if (cached != NULL && sst__str(cached)->len == len &&
        memcmp(sst__str(cached)->data, s, len) == 0) {
        sst__ref_unpublished(cached); /* made by this parse, not yet visible elsewhere */
        return cached;
    }
    sst_value *v = sst__string_new_trusted(s, len);
    if (v == NULL) {
        return fail_oom(r);
    }
    sst_value_unref(r->keys[slot]);
    sst__ref_unpublished(v);
    r->keys[slot] = v;
    return v;
}

static const double k_pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static inline bool is_digit(unsigned char c) {
    return c >= '0' && c <= '9';
}

static sst_value *parse_number(reader *r) {
    const unsigned char *s = r->p;
    const unsigned char *p = s;
    const unsigned char *end = r->end;
    bool neg = false;
    if (*p == '-') {
        neg = true;
        p++;
    }
    if (p >= end || !is_digit(*p)) {
        char found[32];
        describe(r, p, found, sizeof found);
        return fail(r, p, SST_EPARSE, "expected a digit after '-', found %s", found);
    }
    uint64_t m = 0;    /* first 19 significant digits */
    int nd = 0;        /* digits in m */
    int64_t exp10 = 0; /* value = m * 10^exp10 (before the exponent part) */
    bool inexact = false;
    bool is_int = true;
    if (*p == '0') {
        p++;
        if (p < end && is_digit(*p)) {
            return fail(r, p - 1, SST_EPARSE, "leading zeros are not allowed in numbers");
        }
    } else {
        while (p < end && is_digit(*p)) {
            if (nd < 19) {
                m = m * 10 + (uint64_t)(*p - '0');
                nd++;
            } else {
                exp10++;
                inexact |= *p != '0';
            }
            p++;
        }
    }
    if (p < end && *p == '.') {
        is_int = false;
        p++;
        if (p >= end || !is_digit(*p)) {
            char found[32];
            describe(r, p, found, sizeof found);
            return fail(r, p, SST_EPARSE, "expected a digit after '.', found %s", found);
        }
        while (p < end && is_digit(*p)) {
            if (nd < 19) {
                if (m != 0 || *p != '0') {
                    m = m * 10 + (uint64_t)(*p - '0');
                    nd++;
                }
                exp10--;
            } else {
                inexact |= *p != '0';
            }
            p++;
        }
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        is_int = false;
        p++;
        bool eneg = false;
        if (p < end && (*p == '+' || *p == '-')) {
            eneg = *p == '-';
            p++;
        }
        if (p >= end || !is_digit(*p)) {
            char found[32];
            describe(r, p, found, sizeof found);
            return fail(r, p, SST_EPARSE, "expected a digit in the exponent, found %s", found);
        }
        int64_t e = 0;
        while (p < end && is_digit(*p)) {
            if (e < 1000000) {
                e = e * 10 + (*p - '0');
            }
            p++;
        }
        exp10 += eneg ? -e : e;
    }
    r->p = p;
    if (is_int && !inexact && exp10 == 0) {
        if (!neg && m <= (uint64_t)INT64_MAX) {
            sst_value *v = sst_int_new((int64_t)m, NULL);
            return v != NULL ? v : fail_oom(r);
        }
        if (neg && m <= (uint64_t)INT64_MAX + 1) {
            int64_t i = m == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)m;
            sst_value *v = sst_int_new(i, NULL);
            return v != NULL ? v : fail_oom(r);
        }
    }
    double d;
    if (m == 0 && !inexact) {
        d = 0.0;
    } else if (!inexact && m <= ((uint64_t)1 << 53) && exp10 >= -22 && exp10 <= 22) {
        /* Exact: both m and the power of ten are representable (Clinger). */
        d = (double)m;
        d = exp10 < 0 ? d / k_pow10[-exp10] : d * k_pow10[exp10];
    } else {
        sst__buf *b = &r->scratch;
        b->len = 0;
        sst__buf_append(b, s, (size_t)(p - s));
        sst__buf_putc(b, '\0');
        if (b->oom) {
            return fail_oom(r);
        }
        d = fabs(sst__strtod_c(b->data, NULL));
    }
    if (isinf(d)) {
        return fail(r, s, SST_ERANGE, "number out of range (beyond the largest double)");
    }
    sst_value *v = sst_double_new(neg ? -d : d, NULL);
    return v != NULL ? v : fail_oom(r);
}

static sst_value *parse_literal(reader *r, const char *word, sst_value *value) {
    size_t n = strlen(word);
    if ((size_t)(r->end - r->p) >= n && memcmp(r->p, word, n) == 0) {
        r->p += n;
        return value;
    }
    return fail(r, r->p, SST_EPARSE, "invalid literal (expected '%s')", word);
}

static bool enter(reader *r) {
    if (++r->depth > r->max_depth) {
        fail(r, r->p, SST_ELIMIT, "nesting deeper than %zu levels", r->max_depth);
        return false;
    }
    return true;
}

static sst_value *parse_array(reader *r) {
    if (!enter(r)) {
        return NULL;
    }
    r->p++; /* '[' */
    skip_ws(r);
    sst_value *arr = sst_array_empty();
    if (r->p < r->end && *r->p == ']') {
        r->p++;
        r->depth--;
        return arr;
    }
    for (;;) {
        sst_value *item = parse_value(r);
        if (item == NULL) {
            sst_value_unref(arr);
            return NULL;
        }
        arr = sst_array_push_take(arr, item, NULL);
        if (arr == NULL) {
            return fail_oom(r);
        }
        skip_ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            skip_ws(r);
            if (r->p < r->end && *r->p == ']') {
                sst_value_unref(arr);
                return fail(r, r->p, SST_EPARSE,
                            "expected a value after ',', found ']' "
                            "(trailing commas are not allowed)");
            }
            continue;
        }
        if (r->p < r->end && *r->p == ']') {
            r->p++;
            r->depth--;
            return arr;
        }
        char found[32];
        describe(r, r->p, found, sizeof found);
        sst_value_unref(arr);
        return fail(r, r->p, SST_EPARSE, "expected ',' or ']' after an array element, found %s",
                    found);
    }
}

static sst_value *parse_object(reader *r) {
    if (!enter(r)) {
        return NULL;
    }
    r->p++; /* '{' */
    skip_ws(r);
    sst_value *obj = sst_object_empty();
    if (r->p < r->end && *r->p == '}') {
        r->p++;
        r->depth--;
        return obj;
    }
    for (;;) {
        char found[32];
        if (r->p >= r->end || *r->p != '"') {
            describe(r, r->p, found, sizeof found);
            sst_value_unref(obj);
            return fail(r, r->p, SST_EPARSE, "expected '\"' to start an object key, found %s",
                        found);
        }
        sst_value *key = parse_key(r);
        if (key == NULL) {
            sst_value_unref(obj);
            return NULL;
        }
        skip_ws(r);
        if (r->p >= r->end || *r->p != ':') {
            describe(r, r->p, found, sizeof found);
            sst_value_unref(key);
            sst_value_unref(obj);
            return fail(r, r->p, SST_EPARSE, "expected ':' after an object key, found %s", found);
        }
        r->p++;
        skip_ws(r);
        sst_value *val = parse_value(r);
        if (val == NULL) {
            sst_value_unref(key);
            sst_value_unref(obj);
            return NULL;
        }
        obj = sst__object_set_owned_key(obj, key, val, NULL);
        if (obj == NULL) {
            return fail_oom(r);
        }
        skip_ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            skip_ws(r);
            if (r->p < r->end && *r->p == '}') {
                sst_value_unref(obj);
                return fail(r, r->p, SST_EPARSE,
                            "expected an object key after ',', found '}' "
                            "(trailing commas are not allowed)");
            }
            continue;
        }
        if (r->p < r->end && *r->p == '}') {
            r->p++;
            r->depth--;
            return obj;
        }
        describe(r, r->p, found, sizeof found);
        sst_value_unref(obj);
        return fail(r, r->p, SST_EPARSE, "expected ',' or '}' after an object member, found %s",
                    found);
    }
}

static sst_value *parse_value(reader *r) {
    skip_ws(r);
    if (r->p >= r->end) {
        return fail(r, r->p, SST_EPARSE, "expected a JSON value, found end of input");
    }
    switch (*r->p) {
        case '{':
            return parse_object(r);
        case '[':
            return parse_array(r);
        case '"':
            return parse_string(r);
        case 't':
            return parse_literal(r, "true", sst_bool(true));
        case 'f':
            return parse_literal(r, "false", sst_bool(false));
        case 'n':
            return parse_literal(r, "null", sst_null());
        default:
            if (*r->p == '-' || is_digit(*r->p)) {
                return parse_number(r);
            }
            break;
    }
    char found[32];
    describe(r, r->p, found, sizeof found);
    return fail(r, r->p, SST_EPARSE, "expected a JSON value, found %s", found);
}

sst_value *sst_json_read(const char *text, size_t len, const sst_json_read_opts *opts,
                         sst_error *err) {
    sst_json_read_opts defaults;
    if (opts == NULL) {
        sst_json_read_opts_init(&defaults);
        opts = &defaults;
    }
    if (text == NULL) {
        sst__error(err, SST_EINVAL, "JSON text is NULL");
        return NULL;
    }
    if (len > opts->max_bytes) {
        sst__error(err, SST_ELIMIT, "JSON text of %zu bytes exceeds the limit of %zu bytes", len,
                   opts->max_bytes);
        return NULL;
    }
    reader *r = sst__malloc(sizeof *r);
    if (r == NULL) {
        sst__enomem(err);
        return NULL;
    }
    memset(r, 0, sizeof *r);
    r->start = r->p = (const unsigned char *)text;
    r->end = r->start + len;
    r->max_depth = opts->max_depth < HARD_MAX_DEPTH ? opts->max_depth : HARD_MAX_DEPTH;
    r->err = err;
    sst__buf_init(&r->scratch);
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        r->p += 3; /* RFC 8259 §8.1: a parser may ignore a byte order mark */
    }
    sst_value *v = parse_value(r);
    if (v != NULL) {
        skip_ws(r);
        if (r->p < r->end) {
            char found[32];
            describe(r, r->p, found, sizeof found);
            sst_value_unref(v);
            v = fail(r, r->p, SST_EPARSE, "expected end of input after the JSON value, found %s",
                     found);
        }
    }
    for (size_t i = 0; i < KEY_CACHE; i++) {
        sst_value_unref(r->keys[i]);
    }
    sst__buf_free(&r->scratch);
    sst__free(r);
    return v;
}

sst_value *sst_json_parse(const char *text, sst_error *err) {
    if (text == NULL) {
        sst__error(err, SST_EINVAL, "JSON text is NULL");
        return NULL;
    }
    return sst_json_read(text, strlen(text), NULL, err);
}

sst_value *sst_json_read_file(const char *path, const sst_json_read_opts *opts, sst_error *err) {
    sst_json_read_opts defaults;
    if (opts == NULL) {
        sst_json_read_opts_init(&defaults);
        opts = &defaults;
    }
    if (path == NULL) {
        sst__error(err, SST_EINVAL, "JSON file path is NULL");
        return NULL;
    }
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        sst__error(err, SST_EIO, "cannot open '%s'", path);
        return NULL;
    }
    sst__buf b;
    sst__buf_init(&b);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        sst__buf_append(&b, chunk, n);
        if (b.len > opts->max_bytes) {
            break;
        }
    }
    bool read_error = ferror(f) != 0;
    fclose(f);
    if (read_error) {
        sst__buf_free(&b);
        sst__error(err, SST_EIO, "cannot read '%s'", path);
        return NULL;
    }
    if (b.oom) {
        sst__buf_free(&b);
        sst__enomem(err);
        return NULL;
    }
    sst_value *v = sst_json_read(b.data != NULL ? b.data : "", b.len, opts, err);
    sst__buf_free(&b);
    if (v == NULL && err != NULL && err->code != SST_ENOMEM) {
        size_t line = err->line, column = err->column, offset = err->offset;
        sst__error_prefix(err, "%s", path);
        err->line = line;
        err->column = column;
        err->offset = offset;
    }
    return v;
}
