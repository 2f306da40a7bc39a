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
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <stdio.h>
#include <string.h>

#include "common/hex.h"
#include "superstep/json.h"
#include "values_int.h"
#include "values_num.h"

#define DEFAULT_MAX_DEPTH   512
#define HARD_MAX_DEPTH      4096 /* bounds recursion whatever the options say */
#define DEFAULT_MAX_BYTES   ((size_t)256 << 20)
#define KEY_CACHE           256
#define KEY_CACHE_MAX_LEN   32
#define SHORT_VALUE_MAX_LEN 16
/* Inputs this large get a parse arena (arena.c); smaller ones malloc each value. */
#define ARENA_MIN_INPUT ((size_t)64 << 10) /* string values this short are shared too */

typedef struct reader {
    const unsigned char *start;
    const unsigned char *p;
    const unsigned char *end;
    size_t depth;
    size_t max_depth;
    sst_error *err;
    bool failed;
    sst__buf scratch;  /* decoded strings with escapes, number text */
    sst_value **stack; /* owned: elements and key/value pairs being collected */
    size_t sp;         /* stack[0..sp) hold references */
    size_t stack_cap;
    sst__arena arena;           /* chunks for the values of a large input */
    sst__arena *alloc;          /* &arena for large inputs, NULL (malloc) for small ones */
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

/* Pushes @p v (consumed) on the collection stack. false on OOM (v released). */
static inline bool push(reader *r, sst_value *v) {
    if (r->sp == r->stack_cap) {
        size_t cap = r->stack_cap ? r->stack_cap * 2 : 256;
        sst_value **st = sst__realloc(r->stack, cap * sizeof *st);
        if (st == NULL) {
            sst_value_unref(v);
            fail_oom(r);
            return false;
        }
        r->stack = st;
        r->stack_cap = cap;
    }
    r->stack[r->sp++] = v;
    return true;
}

static inline void skip_ws(reader *r) {
    const unsigned char *p = r->p;
    if (p<r->end && * p> ' ') {
        return; /* the common case in compact JSON */
    }
    while (p < r->end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) {
        p++;
    }
    r->p = p;
}

static sst_value *parse_value(reader *r);

static int hex4(const unsigned char *p) {
    int v = 0;
    for (int i = 0; i < 4; i++) {
        int d = sst__hex_digit(p[i]);
        if (d < 0) {
            return -1;
        }
        v = v * 16 + d;
    }
    return v;
}

/* Writes @p cp as UTF-8 at @p d; returns the byte count. */
static size_t put_utf8(char *d, uint32_t cp) {
    if (cp < 0x80) {
        d[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        d[0] = (char)(0xC0 | (cp >> 6));
        d[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        d[0] = (char)(0xE0 | (cp >> 12));
        d[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        d[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    d[0] = (char)(0xF0 | (cp >> 18));
    d[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    d[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    d[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

static inline uint64_t load64(const unsigned char *p) {
    uint64_t w;
    memcpy(&w, p, sizeof w);
    return w;
}

/* The closing quote of the string body starting at @p p, or NULL. */
static const unsigned char *find_closing_quote(const unsigned char *p, const unsigned char *end) {
    for (;;) {
        const unsigned char *q = memchr(p, '"', (size_t)(end - p));
        if (q == NULL) {
            return NULL;
        }
        /* Escaped when preceded by an odd number of backslashes. */
        size_t bs = 0;
        while (q - bs > p && q[-1 - (ptrdiff_t)bs] == '\\') {
            bs++;
        }
        if (bs % 2 == 0) {
            return q;
        }
        p = q + 1;
    }
}

/*
 * Checks the raw string body [p, end) for control characters and invalid
 * UTF-8, eight ASCII bytes at a time. Returns NULL when clean, else the first
 * bad byte. Sets *has_escape when a backslash occurs.
 */
static const unsigned char *check_body(const unsigned char *p, const unsigned char *end,
                                       bool *has_escape) {
    bool esc = false;
    while (p < end) {
#ifdef __SSE2__
        /* 16 bytes at a time: a signed compare with 0x20 catches both control
         * characters and non-ASCII bytes (negative as signed). */
        const __m128i space = _mm_set1_epi8(0x20), backslash = _mm_set1_epi8('\\');
        while (end - p >= 16) {
            __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
            unsigned special = (unsigned)_mm_movemask_epi8(_mm_cmplt_epi8(x, space));
            unsigned bs = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, backslash));
            if (special != 0) {
                unsigned first = (unsigned)__builtin_ctz(special);
                esc |= (bs & ((1u << first) - 1)) != 0;
                p += first;
                break;
            }
            esc |= bs != 0;
            p += 16;
        }
#else
        const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
        while (end - p >= 8) {
            uint64_t w = load64(p);
            if ((((w - ones * 0x20) & ~w) | w) & high) {
                break; /* a control or non-ASCII byte in this word */
            }
            uint64_t b = w ^ (ones * '\\');
            esc |= (((b - ones) & ~b) & high) != 0;
            p += 8;
        }
#endif
        if (p >= end) {
            break;
        }
        unsigned char c = *p;
        if (c < 0x20) {
            return p;
        }
        if (c >= 0x80) {
            size_t n = sst__utf8_seq(p, end);
            if (n == 0) {
                return p;
            }
            p += n;
            continue;
        }
        esc |= c == '\\';
        p++;
    }
    *has_escape = esc;
    return NULL;
}

/*
 * The first byte at or after @p p that is not plain printable ASCII: a quote,
 * a backslash, a control character or a non-ASCII byte; @p end if none.
 */
static inline const unsigned char *next_special(const unsigned char *p, const unsigned char *end) {
#ifdef __SSE2__
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(0x20);
    while (end - p >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i m =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)),
                         _mm_cmplt_epi8(x, space));
        unsigned mask = (unsigned)_mm_movemask_epi8(m);
        if (mask != 0) {
            return p + __builtin_ctz(mask);
        }
        p += 16;
    }
#endif
    while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') {
        p++;
    }
    return p;
}

/* Fails the parse on the bad string byte @p bad: a raw control character or invalid UTF-8. */
static bool fail_string_byte(reader *r, const unsigned char *bad) {
    if (*bad < 0x20) {
        fail(r, bad, SST_EPARSE, "control character U+%04X in string must be escaped", *bad);
    } else {
        fail(r, bad, SST_EUTF8, "invalid UTF-8 byte 0x%02X in string", *bad);
    }
    return false;
}

/* The character a one-letter escape "\c" stands for, or -1 ('u' and invalid letters). */
static inline int simple_escape(unsigned char c) {
    switch (c) {
        case '"':
        case '\\':
        case '/':
            return c;
        case 'b':
            return '\b';
        case 'f':
            return '\f';
        case 'n':
            return '\n';
        case 'r':
            return '\r';
        case 't':
            return '\t';
        default:
            return -1;
    }
}

/*
 * Decodes the \u escape at @p p (one, or a surrogate pair of two) as UTF-8 at *d and moves *d
 * past it. Returns the escape bytes read, or 0 after failing the parse.
 */
static size_t decode_u_escape(reader *r, const unsigned char *p, const unsigned char *close,
                              char **d) {
    int cp = close - p >= 6 ? hex4(p + 2) : -1;
    if (cp < 0) {
        fail(r, p, SST_EPARSE, "invalid \\u escape (expected four hex digits)");
        return 0;
    }
    if (cp >= 0xDC00 && cp <= 0xDFFF) {
        fail(r, p, SST_EUTF8, "lone surrogate \\u%04X in string (low surrogate without a high one)",
             cp);
        return 0;
    }
    if (cp < 0xD800 || cp > 0xDBFF) {
        *d += put_utf8(*d, (uint32_t)cp);
        return 6;
    }
    int lo = (close - p >= 12 && p[6] == '\\' && p[7] == 'u') ? hex4(p + 8) : -1;
    if (lo < 0xDC00 || lo > 0xDFFF) {
        fail(r, p, SST_EUTF8,
             "lone surrogate \\u%04X in string (expected a \\uDC00-\\uDFFF escape after it)", cp);
        return 0;
    }
    *d += put_utf8(*d, 0x10000 + (((uint32_t)cp - 0xD800) << 10) + ((uint32_t)lo - 0xDC00));
    return 12;
}

/*
 * Decodes the escapes of the string body [s, close) into r->scratch; @p bad is the first bad
 * raw byte (reported when no escape error comes before it) or NULL.
 */
static bool decode_escapes(reader *r, const unsigned char *s, const unsigned char *close,
                           const unsigned char *bad, const char **out, size_t *len) {
    /* The decoded text is never longer than the raw text: reserve once and
     * write through a plain pointer. */
    sst__buf *b = &r->scratch;
    b->len = 0;
    if (!sst__buf_reserve(b, (size_t)(close - s))) {
        fail_oom(r);
        return false;
    }
    char *d = b->data;
    const unsigned char *p = s;
    while (p < close) {
        const unsigned char *e = memchr(p, '\\', (size_t)(close - p));
        const unsigned char *run_end = e != NULL ? e : close;
        if (bad != NULL && bad < run_end) {
            return fail_string_byte(r, bad);
        }
        memcpy(d, p, (size_t)(run_end - p));
        d += run_end - p;
        p = run_end;
        if (e == NULL) {
            break;
        }
        /* find_closing_quote guarantees a character after the backslash. */
        int c = simple_escape(p[1]);
        if (c >= 0) {
            *d++ = (char)c;
            p += 2;
            continue;
        }
        if (p[1] != 'u') {
            fail(r, p, SST_EPARSE,
                 "invalid escape '\\%c' in string (expected one of \\\" \\\\ \\/ \\b \\f \\n "
                 "\\r \\t \\u)",
                 (p[1] >= 0x20 && p[1] < 0x7F) ? (char)p[1] : '?');
            return false;
        }
        size_t used = decode_u_escape(r, p, close, &d);
        if (used == 0) {
            return false;
        }
        p += used;
    }
    b->len = (size_t)(d - b->data);
    *out = b->data;
    *len = b->len;
    return true;
}

/*
 * The careful path of scan_string for a body starting at @p s: finds the closing quote, checks
 * the bytes, decodes escapes and reports the first error left to right.
 */
static bool scan_string_slow(reader *r, const unsigned char *quote, const char **out, size_t *len) {
    const unsigned char *s = quote + 1;
    const unsigned char *close = find_closing_quote(s, r->end);
    if (close == NULL) {
        fail(r, quote, SST_EPARSE, "unterminated string (no closing '\"')");
        return false;
    }
    bool has_escape = false;
    const unsigned char *bad = check_body(s, close, &has_escape);
    if (bad != NULL) {
        /* An escape before the bad byte is reported first, as a reader going left to right would.
         */
        if (memchr(s, '\\', (size_t)(bad - s)) == NULL) {
            return fail_string_byte(r, bad);
        }
        has_escape = true;
    }
    if (!has_escape) {
        *out = (const char *)s;
        *len = (size_t)(close - s);
    } else if (!decode_escapes(r, s, close, bad, out, len)) {
        return false;
    }
    r->p = close + 1;
    return true;
}

/*
 * Decodes the string body after the opening quote at @p quote; on success
 * r->p is past the closing quote and *out and *len point at the bytes
 * (either in the input or in r->scratch).
 */
static bool scan_string(reader *r, const unsigned char *quote, const char **out, size_t *len) {
    const unsigned char *s = quote + 1;
    /* One pass for the common string: no escapes, checked as we go. */
    for (const unsigned char *p = s;;) {
        p = next_special(p, r->end);
        if (p < r->end && *p == '"') {
            *out = (const char *)s;
            *len = (size_t)(p - s);
            r->p = p + 1;
            return true;
        }
        if (p < r->end && *p >= 0x80) {
            size_t n = sst__utf8_seq(p, r->end);
            if (n != 0) {
                p += n;
                continue;
            }
        }
        break; /* an escape, an error or the end: the careful path */
    }
    return scan_string_slow(r, quote, out, len);
}

/*
 * A string value for [s, s + len), shared with an equal earlier string of
 * this parse when short: object keys and small values such as roles repeat
 * in almost every object of a real document. New reference.
 */
static sst_value *intern(reader *r, const char *s, size_t len) {
    if (len > KEY_CACHE_MAX_LEN) {
        sst_value *v = sst__string_new_in(r->alloc, s, len);
        return v != NULL ? v : fail_oom(r);
    }
    /* A cheap slot hash: a collision only costs a cache miss. */
    const unsigned char *u = (const unsigned char *)s;
    size_t slot =
        len == 0 ? 0
                 : (len * 31u + u[0] * 7u + u[len - 1] * 131u + u[len / 2] * 17u) & (KEY_CACHE - 1);
    sst_value *cached = r->keys[slot];
    if (cached != NULL && sst__str(cached)->len == len &&
        memcmp(sst__str(cached)->data, s, len) == 0) {
        sst__ref_unpublished(cached); /* made by this parse, not yet visible elsewhere */
        return cached;
    }
    sst_value *v = sst__string_new_in(r->alloc, s, len);
    if (v == NULL) {
        return fail_oom(r);
    }
    sst_value_unref(r->keys[slot]);
    sst__ref_unpublished(v);
    r->keys[slot] = v;
    return v;
}

static sst_value *parse_string(reader *r) {
    const char *s;
    size_t len;
    if (!scan_string(r, r->p, &s, &len)) {
        return NULL;
    }
    if (len <= SHORT_VALUE_MAX_LEN) {
        return intern(r, s, len);
    }
    sst_value *v = sst__string_new_in(r->alloc, s, len);
    return v != NULL ? v : fail_oom(r);
}

/* An object key (new reference), shared with earlier equal keys. */
static sst_value *parse_key(reader *r) {
    const char *s;
    size_t len;
    if (!scan_string(r, r->p, &s, &len)) {
        return NULL;
    }
    return intern(r, s, len);
}

static const double k_pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static inline bool is_digit(unsigned char c) {
    return c >= '0' && c <= '9';
}

/* A decimal being read: its value is m * 10^exp10. */
typedef struct decimal {
    uint64_t m;    /* first 19 significant digits */
    int nd;        /* digits in m */
    int64_t exp10; /* before the exponent part is read: set by dropped or fraction digits */
    bool inexact;  /* a non-zero digit past the 19th was dropped */
} decimal;

/* Fails the parse at @p p, which should have been a digit of the number's @p where. */
static sst_value *fail_digit(reader *r, const unsigned char *p, const char *where) {
    char found[32];
    describe(r, p, found, sizeof found);
    return fail(r, p, SST_EPARSE, "expected a digit %s, found %s", where, found);
}

/* Reads the digits after '.' at @p p into @p n; the end of the fraction, or NULL on error. */
static inline const unsigned char *scan_fraction(reader *r, const unsigned char *p, decimal *n) {
    const unsigned char *end = r->end;
    p++;
    if (p >= end || !is_digit(*p)) {
        fail_digit(r, p, "after '.'");
        return NULL;
    }
    while (p < end && is_digit(*p)) {
        if (n->nd < 19) {
            if (n->m != 0 || *p != '0') {
                n->m = n->m * 10 + (uint64_t)(*p - '0');
                n->nd++;
            }
            n->exp10--;
        } else {
            n->inexact |= *p != '0';
        }
        p++;
    }
    return p;
}

/* Reads the exponent part at @p p ('e' or 'E') into @p n; its end, or NULL on error. */
static inline const unsigned char *scan_exponent(reader *r, const unsigned char *p, decimal *n) {
    const unsigned char *end = r->end;
    p++;
    bool eneg = false;
    if (p < end && (*p == '+' || *p == '-')) {
        eneg = *p == '-';
        p++;
    }
    if (p >= end || !is_digit(*p)) {
        fail_digit(r, p, "in the exponent");
        return NULL;
    }
    int64_t e = 0;
    while (p < end && is_digit(*p)) {
        if (e < 1000000) {
            e = e * 10 + (*p - '0');
        }
        p++;
    }
    n->exp10 += eneg ? -e : e;
    return p;
}

/* The double for the number text [s, p) read into @p n (its sign apart). */
static sst_value *number_double(reader *r, const unsigned char *s, const unsigned char *p,
                                const decimal *n, bool neg) {
    double d;
    if (n->m == 0 && !n->inexact) {
        d = 0.0;
    } else if (!n->inexact && n->m <= ((uint64_t)1 << 53) && n->exp10 >= -22 && n->exp10 <= 22) {
        /* Exact: both m and the power of ten are representable (Clinger). */
        d = (double)n->m;
        d = n->exp10 < 0 ? d / k_pow10[-n->exp10] : d * k_pow10[n->exp10];
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
    sst_value *v = sst__double_new_in(r->alloc, neg ? -d : d);
    return v != NULL ? v : fail_oom(r);
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
        return fail_digit(r, p, "after '-'");
    }
    decimal n = {0, 0, 0, false};
    bool is_int = true;
    if (*p == '0') {
        p++;
        if (p < end && is_digit(*p)) {
            return fail(r, p - 1, SST_EPARSE, "leading zeros are not allowed in numbers");
        }
    } else {
        while (p < end && is_digit(*p)) {
            if (n.nd < 19) {
                n.m = n.m * 10 + (uint64_t)(*p - '0');
                n.nd++;
            } else {
                n.exp10++;
                n.inexact |= *p != '0';
            }
            p++;
        }
    }
    if (p < end && *p == '.') {
        is_int = false;
        if ((p = scan_fraction(r, p, &n)) == NULL) {
            return NULL;
        }
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        is_int = false;
        if ((p = scan_exponent(r, p, &n)) == NULL) {
            return NULL;
        }
    }
    r->p = p;
    if (is_int && !n.inexact && n.exp10 == 0) {
        if (!neg && n.m <= (uint64_t)INT64_MAX) {
            sst_value *v = sst__int_new_in(r->alloc, (int64_t)n.m);
            return v != NULL ? v : fail_oom(r);
        }
        if (neg && n.m <= (uint64_t)INT64_MAX + 1) {
            int64_t i = n.m == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)n.m;
            sst_value *v = sst__int_new_in(r->alloc, i);
            return v != NULL ? v : fail_oom(r);
        }
    }
    return number_double(r, s, p, &n, neg);
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

/*
 * Containers collect their elements (and key/value pairs) on r->stack and
 * are built in one piece at the closing bracket. On failure the references
 * stay on the stack and sst_json_read releases them.
 */
static sst_value *parse_array(reader *r) {
    if (!enter(r)) {
        return NULL;
    }
    r->p++; /* '[' */
    skip_ws(r);
    size_t base = r->sp;
    if (r->p < r->end && *r->p == ']') {
        r->p++;
        r->depth--;
        return sst_array_empty();
    }
    for (;;) {
        sst_value *item = parse_value(r);
        if (item == NULL || !push(r, item)) {
            return NULL;
        }
        skip_ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            skip_ws(r);
            if (r->p < r->end && *r->p == ']') {
                return fail(r, r->p, SST_EPARSE,
                            "expected a value after ',', found ']' (trailing commas are not "
                            "allowed)");
            }
            continue;
        }
        if (r->p < r->end && *r->p == ']') {
            r->p++;
            r->depth--;
            sst_value *arr = sst__array_from(r->alloc, r->stack + base, r->sp - base);
            r->sp = base;
            return arr != NULL ? arr : fail_oom(r);
        }
        char found[32];
        describe(r, r->p, found, sizeof found);
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
    size_t base = r->sp;
    if (r->p < r->end && *r->p == '}') {
        r->p++;
        r->depth--;
        return sst_object_empty();
    }
    for (;;) {
        char found[32];
        if (r->p >= r->end || *r->p != '"') {
            describe(r, r->p, found, sizeof found);
            return fail(r, r->p, SST_EPARSE, "expected '\"' to start an object key, found %s",
                        found);
        }
        sst_value *key = parse_key(r);
        if (key == NULL || !push(r, key)) {
            return NULL;
        }
        skip_ws(r);
        if (r->p >= r->end || *r->p != ':') {
            describe(r, r->p, found, sizeof found);
            return fail(r, r->p, SST_EPARSE, "expected ':' after an object key, found %s", found);
        }
        r->p++;
        skip_ws(r);
        sst_value *val = parse_value(r);
        if (val == NULL || !push(r, val)) {
            return NULL;
        }
        skip_ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            skip_ws(r);
            if (r->p < r->end && *r->p == '}') {
                return fail(r, r->p, SST_EPARSE,
                            "expected an object key after ',', found '}' (trailing commas are "
                            "not allowed)");
            }
            continue;
        }
        if (r->p < r->end && *r->p == '}') {
            r->p++;
            r->depth--;
            sst_value *obj = sst__object_from(r->alloc, r->stack + base, (r->sp - base) / 2);
            r->sp = base;
            return obj != NULL ? obj : fail_oom(r);
        }
        describe(r, r->p, found, sizeof found);
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
    sst__arena_init(&r->arena);
    r->alloc = len >= ARENA_MIN_INPUT ? &r->arena : NULL;
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
    for (size_t i = 0; i < r->sp; i++) {
        sst_value_unref(r->stack[i]); /* what a failed parse had collected */
    }
    sst__free(r->stack);
    for (size_t i = 0; i < KEY_CACHE; i++) {
        sst_value_unref(r->keys[i]);
    }
    sst__arena_finish(&r->arena);
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
    SST__ERR_LOCAL(err);
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
    bool read_error = !sst__buf_read_file(&b, f, opts->max_bytes);
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
    if (v == NULL && err->code != SST_ENOMEM) {
        size_t line = err->line, column = err->column, offset = err->offset;
        sst__error_prefix(err, "%s", path);
        err->line = line;
        err->column = column;
        err->offset = offset;
    }
    return v;
}
