/* SPDX-License-Identifier: MIT */
/*
 * The JSON Schema validator (a subset of draft 2020-12); see json_schema.h
 * and docs/json-schema.md. Three parts: a linear-time matcher for the
 * ECMA-262 patterns of "pattern" and "patternProperties", the compiler that
 * checks a schema and turns it into a graph of nodes (one per subschema,
 * "$ref" resolved to an edge), and the validator that walks an instance
 * through that graph and collects failures.
 */
#include "json_schema.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>

#include "common/hex.h"
#include "common/utf8.h"
#include "superstep/json.h"
#include "values/values_num.h"

enum { OK = 0, BAD = 1, STOP = 2 }; /* what evaluating a schema found */

/* ---- small helpers ------------------------------------------------------ */

/* Code points in @p n bytes of valid UTF-8. */
static size_t utf8_count(const char *s, size_t n) {
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        count += ((unsigned char)s[i] & 0xC0) != 0x80;
    }
    return count;
}

static void buf_vprintf(sst__buf *b, const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) {
        b->oom = true;
        return;
    }
    if (!sst__buf_reserve(b, (size_t)n + 1)) {
        return;
    }
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

static void buf_puts(sst__buf *b, const char *s) {
    sst__buf_append(b, s, strlen(s));
}

/* Appends @p n bytes of @p s as a JSON-Pointer token (~ as ~0, / as ~1). */
static void put_token(sst__buf *b, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '~') {
            sst__buf_append(b, "~0", 2);
        } else if (s[i] == '/') {
            sst__buf_append(b, "~1", 2);
        } else {
            sst__buf_putc(b, s[i]);
        }
    }
}

#define SHORT_MAX 128

/*
 * A location for a one-line message: @p n bytes of @p s, or when that is long
 * its start and end around "...", so that the reason after it still fits.
 */
static void shorten(const char *s, size_t n, char out[SHORT_MAX]) {
    if (n < SHORT_MAX) {
        memcpy(out, s, n);
        out[n] = '\0';
        return;
    }
    size_t head = 48, tail = 72;
    while (head > 0 && ((unsigned char)s[head] & 0xC0) == 0x80) {
        head--;
    }
    while (tail > 0 && ((unsigned char)s[n - tail] & 0xC0) == 0x80) {
        tail--;
    }
    memcpy(out, s, head);
    memcpy(out + head, "...", 3);
    memcpy(out + head + 3, s + n - tail, tail);
    out[head + 3 + tail] = '\0';
}

/* A number's text, exact for integers and shortest for doubles ("0.5", "3"). */
static const char *num_text(const sst_value *v, char buf[SST__DOUBLE_BUF]) {
    if (sst_is_int(v)) {
        sst__fmt_int(sst_int_value(v), buf);
    } else {
        sst__fmt_double(sst_double_value(v), buf);
    }
    return buf;
}

/*
 * The compact JSON of @p v, cut near @p cap bytes with "..." (new, sst_free),
 * so that a long enum does not crowd out the other failures.
 */
static char *json_text(const sst_value *v, size_t cap) {
    size_t len = 0;
    char *text = sst_json_write(v, SST_JSON_COMPACT, &len, NULL);
    if (text == NULL || len <= cap) {
        return text;
    }
    size_t cut = cap - 3; /* room for "...\0" within the len + 1 bytes */
    while (cut > 0 && ((unsigned char)text[cut] & 0xC0) == 0x80) {
        cut--;
    }
    memcpy(text + cut, "...", 4);
    return text;
}

/* ---- regular expressions -------------------------------------------------
 *
 * JSON Schema patterns are ECMA-262 regular expressions. We parse them into a
 * small syntax tree and compile that into a program for a Thompson-style NFA
 * simulation, which needs no backtracking: a search costs at most (program
 * size) x (input length) steps, whatever the pattern and the text. POSIX
 * regcomp was the first choice, but glibc's matcher took seconds for a
 * pattern as plain as ".{1,100}y" against 300 CJK characters, and it refuses
 * ranges between non-ASCII characters; both are plain inputs for a model.
 *
 * Supported: literals and escapes (\t \n \v \f \r \0 \cX \xHH \uHHHH
 * \u{H...}, escaped punctuation), ".", classes with ranges and negation,
 * \d \D \w \W \s \S (in and out of classes), ^ $ \b \B, groups "(...)",
 * "(?:...)" and "(?<name>...)", alternation, and the quantifiers * + ? {n}
 * {n,} {n,m} with their lazy forms (laziness does not change whether a
 * pattern matches somewhere). Matching works on code points, as with the
 * "u" flag. Refused at compile: lookaround, backreferences, \p{...}.
 */

#define RX_MAX_PATTERN     (64 * 1024) /* bytes of pattern text */
#define RX_MAX_GROUP_DEPTH 32          /* nested groups */
#define RX_MAX_PROG        10000       /* instructions, counted repetition expanded */
#define RX_MAX_COUNT       100000      /* a {n,m} bound; the program limit bites first */
#define RX_NONE            UINT32_MAX
#define RX_INF             UINT32_MAX
#define RX_CP_MAX          0x10FFFFu

enum rx_op {
    RX_CHAR,
    RX_SET,
    RX_ANY,
    RX_SPLIT,
    RX_JMP,
    RX_BOL,
    RX_EOL,
    RX_WORDB,
    RX_NWORDB,
    RX_MATCH
};

typedef struct rx_inst {
    uint32_t op;
    uint32_t x, y; /* CHAR: x the code point; SET: x the set; SPLIT: x, y; JMP: x */
} rx_inst;

typedef struct rx_set {
    uint32_t off, n; /* ranges rng[2*off .. 2*(off+n)), sorted and disjoint */
    bool neg;
} rx_set;

typedef struct jregex {
    rx_inst *prog; /* owned */
    uint32_t n_prog;
    rx_set *sets;  /* owned */
    uint32_t *rng; /* owned: pairs lo, hi */
    bool anchored; /* the pattern starts with ^: try position 0 only */
} jregex;

static void rx_free(jregex *re) {
    if (re != NULL) {
        sst__free(re->prog);
        sst__free(re->sets);
        sst__free(re->rng);
        sst__free(re);
    }
}

enum rx_kind {
    N_EMPTY,
    N_CHAR,
    N_SET,
    N_ANY,
    N_BOL,
    N_EOL,
    N_WORDB,
    N_NWORDB,
    N_CAT,
    N_ALT,
    N_REP
};

typedef struct rx_node {
    uint32_t kind;
    uint32_t a, b;  /* CHAR: a; SET: a; REP: a min, b max (RX_INF) */
    uint32_t child; /* CAT, ALT: first child; REP: the repeated node */
    uint32_t next;  /* next sibling in a CAT or ALT */
} rx_node;

/* The parser and compiler of one pattern. */
typedef struct rxp {
    const unsigned char *s, *p, *e;
    rx_node *nodes;
    uint32_t n_nodes, cap_nodes;
    uint32_t *rng; /* pairs */
    size_t n_rng, cap_rng;
    rx_set *sets;
    uint32_t n_sets, cap_sets;
    uint32_t *tmp; /* the class being read: pairs */
    size_t n_tmp, cap_tmp;
    rx_inst *prog;
    uint32_t n_prog, cap_prog;
    uint32_t gen_steps; /* nodes visited by rx_gen: bounds "(){99999}"-style loops */
    bool oom;
    char why[200]; /* the refusal */
} rxp;

static bool rx_fail(rxp *P, const char *fmt, ...) SST_PRINTF(2, 3);
static bool rx_fail(rxp *P, const char *fmt, ...) {
    if (P->why[0] == '\0' && !P->oom) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(P->why, sizeof P->why, fmt, ap);
        va_end(ap);
    }
    return false;
}

static bool rx_oom(rxp *P) {
    P->oom = true;
    return false;
}

static size_t rx_at(const rxp *P) {
    return (size_t)(P->p - P->s);
}

static uint32_t rx_node_new(rxp *P, uint32_t kind, uint32_t a, uint32_t b) {
    if (P->n_nodes == P->cap_nodes) {
        void *items = P->nodes;
        size_t cap = P->cap_nodes;
        if (!sst__grow(&items, &cap, P->n_nodes, sizeof *P->nodes, 64)) {
            rx_oom(P);
            return RX_NONE;
        }
        P->nodes = items;
        P->cap_nodes = (uint32_t)cap;
    }
    rx_node *n = &P->nodes[P->n_nodes];
    *n = (rx_node){kind, a, b, RX_NONE, RX_NONE};
    return P->n_nodes++;
}

static bool rx_tmp_add(rxp *P, uint32_t lo, uint32_t hi) {
    if (P->cap_tmp - P->n_tmp < 2) {
        void *items = P->tmp;
        size_t cap = P->cap_tmp;
        if (!sst__grow(&items, &cap, P->n_tmp, sizeof *P->tmp, 32)) {
            return rx_oom(P);
        }
        P->tmp = items;
        P->cap_tmp = cap;
        if (P->cap_tmp - P->n_tmp < 2) { /* grow doubles, so one more round suffices */
            return rx_tmp_add(P, lo, hi);
        }
    }
    P->tmp[P->n_tmp++] = lo;
    P->tmp[P->n_tmp++] = hi;
    return true;
}

static const uint32_t k_digit[] = {'0', '9'};
static const uint32_t k_word[] = {'0', '9', 'A', 'Z', '_', '_', 'a', 'z'};
/* ECMA-262 WhiteSpace and LineTerminator. */
static const uint32_t k_space[] = {0x09,   0x0D,   0x20,   0x20,   0xA0,   0xA0,   0x1680,
                                   0x1680, 0x2000, 0x200A, 0x2028, 0x2029, 0x202F, 0x202F,
                                   0x205F, 0x205F, 0x3000, 0x3000, 0xFEFF, 0xFEFF};

/* Adds the class escape @p cls (d D w W s S) to the class being read. */
static bool rx_add_class(rxp *P, char cls) {
    const uint32_t *r = k_digit;
    size_t n = SST_ARRAY_LEN(k_digit);
    if (cls == 'w' || cls == 'W') {
        r = k_word;
        n = SST_ARRAY_LEN(k_word);
    } else if (cls == 's' || cls == 'S') {
        r = k_space;
        n = SST_ARRAY_LEN(k_space);
    }
    if (cls >= 'a') {
        for (size_t i = 0; i < n; i += 2) {
            if (!rx_tmp_add(P, r[i], r[i + 1])) {
                return false;
            }
        }
        return true;
    }
    uint32_t lo = 0; /* the complement of sorted, disjoint ranges */
    for (size_t i = 0; i < n; i += 2) {
        if (r[i] > lo && !rx_tmp_add(P, lo, r[i] - 1)) {
            return false;
        }
        lo = r[i + 1] + 1;
    }
    return rx_tmp_add(P, lo, RX_CP_MAX);
}

static int cmp_range(const void *a, const void *b) {
    const uint32_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0;
}

/* Turns the class read into P->tmp into a set; its index, or RX_NONE. */
static uint32_t rx_set_finish(rxp *P, bool neg) {
    size_t pairs = P->n_tmp / 2;
    if (pairs > 1) {
        qsort(P->tmp, pairs, 2 * sizeof *P->tmp, cmp_range);
    }
    size_t out = 0; /* merge overlapping and adjacent ranges in place */
    for (size_t i = 0; i < pairs; i++) {
        uint32_t lo = P->tmp[2 * i], hi = P->tmp[2 * i + 1];
        if (out > 0 && lo <= P->tmp[2 * out - 1] + 1) {
            if (hi > P->tmp[2 * out - 1]) {
                P->tmp[2 * out - 1] = hi;
            }
        } else {
            P->tmp[2 * out] = lo;
            P->tmp[2 * out + 1] = hi;
            out++;
        }
    }
    while (P->cap_rng - P->n_rng < 2 * out) {
        void *items = P->rng;
        size_t cap = P->cap_rng;
        if (!sst__grow(&items, &cap, P->n_rng, sizeof *P->rng, 64)) {
            rx_oom(P);
            return RX_NONE;
        }
        P->rng = items;
        P->cap_rng = cap;
    }
    if (P->n_sets == P->cap_sets) {
        void *items = P->sets;
        size_t cap = P->cap_sets;
        if (!sst__grow(&items, &cap, P->n_sets, sizeof *P->sets, 8)) {
            rx_oom(P);
            return RX_NONE;
        }
        P->sets = items;
        P->cap_sets = (uint32_t)cap;
    }
    if (out > 0) {
        memcpy(P->rng + P->n_rng, P->tmp, 2 * out * sizeof *P->rng);
    }
    P->sets[P->n_sets] = (rx_set){(uint32_t)(P->n_rng / 2), (uint32_t)out, neg};
    P->n_rng += 2 * out;
    P->n_tmp = 0;
    return P->n_sets++;
}

/* Reads exactly @p n hex digits at P->p; false when they are not there. */
static bool rx_hex(rxp *P, int n, uint32_t *out) {
    uint32_t v = 0;
    if (P->e - P->p < n) {
        return false;
    }
    for (int i = 0; i < n; i++) {
        int d = sst__hex_digit(P->p[i]);
        if (d < 0) {
            return false;
        }
        v = v * 16 + (uint32_t)d;
    }
    P->p += n;
    *out = v;
    return true;
}

/*
 * Reads an escape; P->p is just after the backslash. Sets *cp to a code
 * point, or *cls to one of d D w W s S (or b B outside classes) with *cp
 * RX_NONE. False with P->why.
 */
static bool rx_escape(rxp *P, bool in_class, uint32_t *cp, char *cls) {
    *cp = RX_NONE;
    *cls = 0;
    if (P->p >= P->e) {
        return rx_fail(P, "the pattern ends with a lone '\\'");
    }
    size_t at = rx_at(P) - 1;
    unsigned char c = *P->p++;
    switch (c) {
        case 'd':
        case 'D':
        case 'w':
        case 'W':
        case 's':
        case 'S':
            *cls = (char)c;
            return true;
        case 'b':
            if (in_class) {
                *cp = 0x08;
            } else {
                *cls = 'b';
            }
            return true;
        case 'B':
            if (in_class) {
                return rx_fail(P, "'\\B' inside a character class at offset %zu", at);
            }
            *cls = 'B';
            return true;
        case 't':
            *cp = 0x09;
            return true;
        case 'n':
            *cp = 0x0A;
            return true;
        case 'v':
            *cp = 0x0B;
            return true;
        case 'f':
            *cp = 0x0C;
            return true;
        case 'r':
            *cp = 0x0D;
            return true;
        case '0':
            if (P->p < P->e && *P->p >= '0' && *P->p <= '9') {
                return rx_fail(P, "octal escapes are not supported (offset %zu)", at);
            }
            *cp = 0;
            return true;
        case 'c':
            if (P->p < P->e && ((*P->p >= 'a' && *P->p <= 'z') || (*P->p >= 'A' && *P->p <= 'Z'))) {
                *cp = (uint32_t)(*P->p++ % 32);
                return true;
            }
            return rx_fail(P, "'\\c' must be followed by a letter (offset %zu)", at);
        case 'x':
            if (!rx_hex(P, 2, cp)) {
                return rx_fail(P, "'\\x' must be followed by two hex digits (offset %zu)", at);
            }
            return true;
        case 'u':
            if (P->p < P->e && *P->p == '{') {
                P->p++;
                uint32_t v = 0;
                int digits = 0;
                while (P->p < P->e && sst__hex_digit(*P->p) >= 0 && v <= RX_CP_MAX) {
                    v = v * 16 + (uint32_t)sst__hex_digit(*P->p++);
                    digits++;
                }
                if (digits == 0 || v > RX_CP_MAX || P->p >= P->e || *P->p != '}') {
                    return rx_fail(P, "bad '\\u{...}' escape at offset %zu", at);
                }
                P->p++;
                *cp = v;
                return true;
            }
            if (!rx_hex(P, 4, cp)) {
                return rx_fail(P, "'\\u' must be followed by four hex digits (offset %zu)", at);
            }
            if (*cp >= 0xD800 && *cp <= 0xDBFF && P->e - P->p >= 6 && P->p[0] == '\\' &&
                P->p[1] == 'u') { /* a UTF-16 surrogate pair is one code point */
                const unsigned char *save = P->p;
                uint32_t lo;
                P->p += 2;
                if (rx_hex(P, 4, &lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
                    *cp = 0x10000 + ((*cp - 0xD800) << 10) + (lo - 0xDC00);
                } else {
                    P->p = save;
                }
            }
            return true;
        case 'p':
        case 'P':
            return rx_fail(P, "Unicode property escapes ('\\%c{...}') are not supported", c);
        case 'k':
            return rx_fail(P, "named backreferences ('\\k<...>') are not supported");
        default:
            break;
    }
    if (c >= '1' && c <= '9') {
        return rx_fail(P, "backreferences ('\\%c') are not supported", c);
    }
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
        return rx_fail(P, "unknown escape '\\%c' at offset %zu", c, at);
    }
    P->p--;
    *cp = sst__utf8_next(&P->p, P->e); /* an escaped punctuation or other character: itself */
    return true;
}

/* One member of a class: a code point (*cp) or a class escape (*cls). */
static bool rx_class_atom(rxp *P, uint32_t *cp, char *cls) {
    if (*P->p == '\\') {
        P->p++;
        return rx_escape(P, true, cp, cls);
    }
    *cls = 0;
    *cp = sst__utf8_next(&P->p, P->e);
    return true;
}

/* A character class; P->p is just after '['. The node, or RX_NONE. */
static uint32_t rx_class(rxp *P) {
    size_t start = rx_at(P) - 1;
    bool neg = P->p < P->e && *P->p == '^';
    if (neg) {
        P->p++;
    }
    P->n_tmp = 0;
    for (;;) {
        if (P->p >= P->e) {
            rx_fail(P, "unterminated character class starting at offset %zu", start);
            return RX_NONE;
        }
        if (*P->p == ']') {
            P->p++;
            break;
        }
        uint32_t lo, hi;
        char cls, cls2;
        if (!rx_class_atom(P, &lo, &cls)) {
            return RX_NONE;
        }
        if (cls != 0) {
            if (!rx_add_class(P, cls)) {
                return RX_NONE;
            }
            continue;
        }
        if (P->e - P->p >= 2 && P->p[0] == '-' && P->p[1] != ']') {
            P->p++;
            if (!rx_class_atom(P, &hi, &cls2)) {
                return RX_NONE;
            }
            if (cls2 != 0) { /* [a-\d]: the '-' is a literal (Annex B) */
                if (!rx_tmp_add(P, lo, lo) || !rx_tmp_add(P, '-', '-') || !rx_add_class(P, cls2)) {
                    return RX_NONE;
                }
                continue;
            }
            if (lo > hi) {
                rx_fail(P, "range out of order in the character class at offset %zu", start);
                return RX_NONE;
            }
            if (!rx_tmp_add(P, lo, hi)) {
                return RX_NONE;
            }
        } else if (!rx_tmp_add(P, lo, lo)) {
            return RX_NONE;
        }
    }
    uint32_t set = rx_set_finish(P, neg);
    return set == RX_NONE ? RX_NONE : rx_node_new(P, N_SET, set, 0);
}

/* True when P->p is at "{n}", "{n,}" or "{n,m}"; reads it into *min, *max. */
static bool rx_braces(rxp *P, uint32_t *min, uint32_t *max) {
    const unsigned char *q = P->p + 1;
    uint64_t a = 0, b = 0;
    int da = 0, db = 0;
    while (q < P->e && *q >= '0' && *q <= '9') {
        a = a < RX_MAX_COUNT ? a * 10 + (uint64_t)(*q - '0') : a;
        q++;
        da++;
    }
    if (da == 0) {
        return false;
    }
    bool comma = q < P->e && *q == ',';
    if (comma) {
        q++;
        while (q < P->e && *q >= '0' && *q <= '9') {
            b = b < RX_MAX_COUNT ? b * 10 + (uint64_t)(*q - '0') : b;
            q++;
            db++;
        }
    }
    if (q >= P->e || *q != '}') {
        return false;
    }
    P->p = q + 1;
    *min = (uint32_t)(a < RX_MAX_COUNT ? a : RX_MAX_COUNT);
    *max = !comma ? *min : db == 0 ? RX_INF : (uint32_t)(b < RX_MAX_COUNT ? b : RX_MAX_COUNT);
    return true;
}

static uint32_t rx_alt(rxp *P, unsigned depth);

/* An atom (with no quantifier): the node, or RX_NONE. */
static uint32_t rx_atom(rxp *P, unsigned depth) {
    size_t at = rx_at(P);
    unsigned char c = *P->p;
    uint32_t cp, lo, hi;
    char cls;
    switch (c) {
        case '(': {
            if (depth >= RX_MAX_GROUP_DEPTH) {
                rx_fail(P, "groups nested deeper than %d", RX_MAX_GROUP_DEPTH);
                return RX_NONE;
            }
            P->p++;
            if (P->p < P->e && *P->p == '?') {
                if (P->e - P->p >= 2 && P->p[1] == ':') {
                    P->p += 2;
                } else if (P->e - P->p >= 3 && P->p[1] == '<' && P->p[2] != '=' && P->p[2] != '!') {
                    const unsigned char *q = P->p + 2; /* a named group: the name is dropped */
                    while (q < P->e && *q != '>') {
                        q++;
                    }
                    if (q >= P->e || q == P->p + 2) {
                        rx_fail(P, "bad group name at offset %zu", at);
                        return RX_NONE;
                    }
                    P->p = q + 1;
                } else if (P->e - P->p >= 2 &&
                           (P->p[1] == '=' || P->p[1] == '!' || P->p[1] == '<')) {
                    rx_fail(P, "lookaround assertions ('(?=', '(?!', '(?<=', '(?<!') are not "
                               "supported");
                    return RX_NONE;
                } else {
                    rx_fail(P, "invalid group '(?' at offset %zu", at);
                    return RX_NONE;
                }
            }
            uint32_t inner = rx_alt(P, depth + 1);
            if (inner == RX_NONE) {
                return RX_NONE;
            }
            if (P->p >= P->e || *P->p != ')') {
                rx_fail(P, "unterminated group starting at offset %zu", at);
                return RX_NONE;
            }
            P->p++;
            return inner;
        }
        case '[':
            P->p++;
            return rx_class(P);
        case '.':
            P->p++;
            return rx_node_new(P, N_ANY, 0, 0);
        case '^':
            P->p++;
            return rx_node_new(P, N_BOL, 0, 0);
        case '$':
            P->p++;
            return rx_node_new(P, N_EOL, 0, 0);
        case '\\':
            P->p++;
            if (!rx_escape(P, false, &cp, &cls)) {
                return RX_NONE;
            }
            if (cls == 'b' || cls == 'B') {
                return rx_node_new(P, cls == 'b' ? N_WORDB : N_NWORDB, 0, 0);
            }
            if (cls != 0) {
                P->n_tmp = 0;
                uint32_t set = RX_NONE;
                if (rx_add_class(P, cls)) {
                    set = rx_set_finish(P, false);
                }
                return set == RX_NONE ? RX_NONE : rx_node_new(P, N_SET, set, 0);
            }
            return rx_node_new(P, N_CHAR, cp, 0);
        case '*':
        case '+':
        case '?':
            rx_fail(P, "nothing to repeat at offset %zu", at);
            return RX_NONE;
        case '{':
            if (rx_braces(P, &lo, &hi)) {
                rx_fail(P, "nothing to repeat at offset %zu", at);
                return RX_NONE;
            }
            P->p++; /* a '{' that starts no quantifier is itself (Annex B) */
            return rx_node_new(P, N_CHAR, '{', 0);
        default:
            return rx_node_new(P, N_CHAR, sst__utf8_next(&P->p, P->e), 0);
    }
}

/* An atom and its quantifier, if any. */
static uint32_t rx_term(rxp *P, unsigned depth) {
    uint32_t atom = rx_atom(P, depth);
    if (atom == RX_NONE || P->p >= P->e) {
        return atom;
    }
    size_t at = rx_at(P);
    uint32_t min, max;
    unsigned char c = *P->p;
    if (c == '*') {
        min = 0, max = RX_INF;
        P->p++;
    } else if (c == '+') {
        min = 1, max = RX_INF;
        P->p++;
    } else if (c == '?') {
        min = 0, max = 1;
        P->p++;
    } else if (c != '{' || !rx_braces(P, &min, &max)) {
        return atom;
    } else if (min > max) {
        rx_fail(P, "numbers out of order in the quantifier at offset %zu", at);
        return RX_NONE;
    }
    uint32_t kind = P->nodes[atom].kind;
    if (kind == N_BOL || kind == N_EOL || kind == N_WORDB || kind == N_NWORDB) {
        rx_fail(P, "nothing to repeat at offset %zu", at);
        return RX_NONE;
    }
    if (P->p < P->e && *P->p == '?') {
        P->p++; /* lazy: the same set of matches */
    }
    if (P->p < P->e && (*P->p == '*' || *P->p == '+' || *P->p == '?' || *P->p == '{')) {
        const unsigned char *save = P->p;
        uint32_t a, b;
        if (*P->p != '{' || rx_braces(P, &a, &b)) { /* a second quantifier: "a**", "a+{2}" */
            P->p = save;
            rx_fail(P, "nothing to repeat at offset %zu", rx_at(P));
            return RX_NONE;
        }
    }
    uint32_t rep = rx_node_new(P, N_REP, min, max);
    if (rep != RX_NONE) {
        P->nodes[rep].child = atom;
    }
    return rep;
}

/* A sequence of terms up to '|', ')' or the end. */
static uint32_t rx_cat(rxp *P, unsigned depth) {
    uint32_t cat = rx_node_new(P, N_CAT, 0, 0);
    uint32_t last = RX_NONE;
    while (cat != RX_NONE && P->p < P->e && *P->p != '|' && *P->p != ')') {
        uint32_t t = rx_term(P, depth);
        if (t == RX_NONE) {
            return RX_NONE;
        }
        if (last == RX_NONE) {
            P->nodes[cat].child = t;
        } else {
            P->nodes[last].next = t;
        }
        last = t;
    }
    return cat;
}

/* Alternatives separated by '|'. */
static uint32_t rx_alt(rxp *P, unsigned depth) {
    uint32_t first = rx_cat(P, depth);
    if (first == RX_NONE || P->p >= P->e || *P->p != '|') {
        return first;
    }
    uint32_t alt = rx_node_new(P, N_ALT, 0, 0);
    if (alt == RX_NONE) {
        return RX_NONE;
    }
    P->nodes[alt].child = first;
    uint32_t last = first;
    while (P->p < P->e && *P->p == '|') {
        P->p++;
        uint32_t next = rx_cat(P, depth);
        if (next == RX_NONE) {
            return RX_NONE;
        }
        P->nodes[last].next = next;
        last = next;
    }
    return alt;
}

static uint32_t rx_emit(rxp *P, uint32_t op, uint32_t x, uint32_t y) {
    if (P->n_prog >= RX_MAX_PROG) {
        rx_fail(P,
                "the pattern is too large: more than %d steps once its counted repetitions "
                "({n,m}) are expanded",
                RX_MAX_PROG);
        return RX_NONE;
    }
    if (P->n_prog == P->cap_prog) {
        void *items = P->prog;
        size_t cap = P->cap_prog;
        if (!sst__grow(&items, &cap, P->n_prog, sizeof *P->prog, 32)) {
            rx_oom(P);
            return RX_NONE;
        }
        P->prog = items;
        P->cap_prog = (uint32_t)cap;
    }
    P->prog[P->n_prog] = (rx_inst){op, x, y};
    return P->n_prog++;
}

/* Emits the code of node @p i. Recursion follows group nesting (bounded). */
static bool rx_gen(rxp *P, uint32_t i) {
    if (++P->gen_steps > 16 * RX_MAX_PROG) { /* repetitions of empty groups emit nothing */
        return rx_fail(P,
                       "the pattern is too large: more than %d steps once its counted "
                       "repetitions ({n,m}) are expanded",
                       RX_MAX_PROG);
    }
    rx_node n = P->nodes[i];
    switch (n.kind) {
        case N_EMPTY:
            return true;
        case N_CHAR:
            return rx_emit(P, RX_CHAR, n.a, 0) != RX_NONE;
        case N_SET:
            return rx_emit(P, RX_SET, n.a, 0) != RX_NONE;
        case N_ANY:
            return rx_emit(P, RX_ANY, 0, 0) != RX_NONE;
        case N_BOL:
            return rx_emit(P, RX_BOL, 0, 0) != RX_NONE;
        case N_EOL:
            return rx_emit(P, RX_EOL, 0, 0) != RX_NONE;
        case N_WORDB:
            return rx_emit(P, RX_WORDB, 0, 0) != RX_NONE;
        case N_NWORDB:
            return rx_emit(P, RX_NWORDB, 0, 0) != RX_NONE;
        case N_CAT:
            for (uint32_t c = n.child; c != RX_NONE; c = P->nodes[c].next) {
                if (!rx_gen(P, c)) {
                    return false;
                }
            }
            return true;
        case N_ALT: {
            /* SPLIT a, next; a: ...; JMP end; next: SPLIT b, next2; ...; last: ...; end: */
            uint32_t jumps = RX_NONE; /* the JMPs to patch, chained through x */
            for (uint32_t c = n.child; c != RX_NONE; c = P->nodes[c].next) {
                if (P->nodes[c].next == RX_NONE) {
                    if (!rx_gen(P, c)) {
                        return false;
                    }
                    break;
                }
                uint32_t split = rx_emit(P, RX_SPLIT, P->n_prog + 1, 0);
                if (split == RX_NONE || !rx_gen(P, c)) {
                    return false;
                }
                uint32_t j = rx_emit(P, RX_JMP, jumps, 0);
                if (j == RX_NONE) {
                    return false;
                }
                jumps = j;
                P->prog[split].y = P->n_prog;
            }
            while (jumps != RX_NONE) {
                uint32_t next = P->prog[jumps].x;
                P->prog[jumps].x = P->n_prog;
                jumps = next;
            }
            return true;
        }
        case N_REP: {
            for (uint32_t k = 0; k < n.a; k++) {
                if (!rx_gen(P, n.child)) {
                    return false;
                }
            }
            if (n.b == RX_INF) { /* loop: SPLIT body, out; body; JMP loop; out: */
                uint32_t loop = rx_emit(P, RX_SPLIT, P->n_prog + 1, 0);
                if (loop == RX_NONE || !rx_gen(P, n.child) ||
                    rx_emit(P, RX_JMP, loop, 0) == RX_NONE) {
                    return false;
                }
                P->prog[loop].y = P->n_prog;
                return true;
            }
            uint32_t splits = RX_NONE; /* optional copies: SPLIT body, end; body; ... */
            for (uint32_t k = n.a; k < n.b; k++) {
                uint32_t s = rx_emit(P, RX_SPLIT, P->n_prog + 1, splits);
                if (s == RX_NONE || !rx_gen(P, n.child)) {
                    return false;
                }
                splits = s;
            }
            while (splits != RX_NONE) {
                uint32_t next = P->prog[splits].y;
                P->prog[splits].y = P->n_prog;
                splits = next;
            }
            return true;
        }
        default:
            SST_ASSERT(0);
            return false;
    }
}

static void rxp_free(rxp *P) {
    sst__free(P->nodes);
    sst__free(P->rng);
    sst__free(P->sets);
    sst__free(P->tmp);
    sst__free(P->prog);
}

/*
 * Compiles the ECMA-262 pattern @p src (@p len bytes of UTF-8). NULL with
 * @p why filled (the refusal; "" when out of memory).
 */
static jregex *rx_compile(const char *src, size_t len, char *why, size_t why_size) {
    rxp P;
    memset(&P, 0, sizeof P);
    P.s = P.p = (const unsigned char *)src;
    P.e = P.s + len;
    jregex *re = NULL;
    if (len > RX_MAX_PATTERN) {
        rx_fail(&P, "the pattern is longer than %d bytes", RX_MAX_PATTERN);
    } else {
        uint32_t root = rx_alt(&P, 0);
        if (root != RX_NONE && P.p < P.e) {
            rx_fail(&P, "unmatched ')' at offset %zu", rx_at(&P));
        } else if (root != RX_NONE && rx_gen(&P, root) && rx_emit(&P, RX_MATCH, 0, 0) != RX_NONE) {
            re = sst__calloc(1, sizeof *re);
            if (re == NULL) {
                P.oom = true;
            } else {
                const rx_node *r = &P.nodes[root];
                re->anchored = r->kind == N_BOL || (r->kind == N_CAT && r->child != RX_NONE &&
                                                    P.nodes[r->child].kind == N_BOL);
                re->prog = P.prog;
                re->n_prog = P.n_prog;
                re->sets = P.sets;
                re->rng = P.rng;
                P.prog = NULL;
                P.sets = NULL;
                P.rng = NULL;
            }
        }
    }
    snprintf(why, why_size, "%s", P.oom ? "" : P.why);
    rxp_free(&P);
    return re;
}

static bool rx_in_set(const jregex *re, uint32_t set, uint32_t c) {
    const rx_set *s = &re->sets[set];
    const uint32_t *r = re->rng + 2 * (size_t)s->off;
    size_t lo = 0, hi = s->n;
    bool in = false;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c < r[2 * mid]) {
            hi = mid;
        } else if (c > r[2 * mid + 1]) {
            lo = mid + 1;
        } else {
            in = true;
            break;
        }
    }
    return in != s->neg;
}

static bool is_word(uint32_t c) {
    return c != RX_NONE &&
           ((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_');
}

/* Working memory of the matcher, kept across the searches of one validation. */
typedef struct rx_scratch {
    uint32_t *mark;  /* per instruction: the generation that visited it */
    uint32_t *list;  /* the current threads (instructions that consume a character) */
    uint32_t *seeds; /* where the threads go after the current character */
    uint32_t *stack; /* the closure's work list */
    size_t cap;      /* instructions the arrays hold */
    uint32_t gen;
} rx_scratch;

static void rx_scratch_free(rx_scratch *w) {
    sst__free(w->mark);
    sst__free(w->list);
    sst__free(w->seeds);
    sst__free(w->stack);
    memset(w, 0, sizeof *w);
}

static bool rx_scratch_fit(rx_scratch *w, size_t n) {
    if (w->cap >= n) {
        return true;
    }
    rx_scratch_free(w);
    w->mark = sst__calloc(n, sizeof *w->mark);
    w->list = sst__malloc(n * sizeof *w->list);
    w->seeds = sst__malloc(n * sizeof *w->seeds);
    w->stack = sst__malloc((2 * n + 2) * sizeof *w->stack);
    if (w->mark == NULL || w->list == NULL || w->seeds == NULL || w->stack == NULL) {
        rx_scratch_free(w);
        return false;
    }
    w->cap = n;
    return true;
}

/*
 * Searches @p len bytes at @p s for a match anywhere. Adds the work done to
 * *steps. 1: found; 0: not found; -1: *steps passed @p max_steps; -2: out of
 * memory.
 */
static int rx_search(const jregex *re, const char *s, size_t len, rx_scratch *w, uint64_t *steps,
                     uint64_t max_steps) {
    if (!rx_scratch_fit(w, re->n_prog)) {
        return -2;
    }
    const unsigned char *start = (const unsigned char *)s, *p = start, *e = start + len;
    const rx_inst *prog = re->prog;
    uint32_t prev = RX_NONE, n_seeds = 0;
    for (;;) {
        const unsigned char *q = p;
        uint32_t cur = p < e ? sst__utf8_next(&q, e) : RX_NONE;
        if (++w->gen == 0) {
            memset(w->mark, 0, w->cap * sizeof *w->mark);
            w->gen = 1;
        }
        uint32_t n = 0, visited = 0; /* threads; instructions the closure went through */
        bool matched = false;
        bool spawn = !re->anchored || p == start;
        for (uint32_t i = 0; i < n_seeds + (spawn ? 1u : 0u); i++) {
            size_t top = 0;
            w->stack[top++] = i < n_seeds ? w->seeds[i] : 0;
            while (top > 0) {
                uint32_t pc = w->stack[--top];
                if (w->mark[pc] == w->gen) {
                    continue;
                }
                w->mark[pc] = w->gen;
                visited++;
                const rx_inst *in = &prog[pc];
                switch (in->op) {
                    case RX_JMP:
                        w->stack[top++] = in->x;
                        break;
                    case RX_SPLIT:
                        w->stack[top++] = in->y;
                        w->stack[top++] = in->x;
                        break;
                    case RX_BOL:
                        if (p == start) {
                            w->stack[top++] = pc + 1;
                        }
                        break;
                    case RX_EOL:
                        if (p == e) {
                            w->stack[top++] = pc + 1;
                        }
                        break;
                    case RX_WORDB:
                    case RX_NWORDB:
                        if ((is_word(prev) != is_word(cur)) == (in->op == RX_WORDB)) {
                            w->stack[top++] = pc + 1;
                        }
                        break;
                    case RX_MATCH:
                        matched = true;
                        break;
                    default:
                        w->list[n++] = pc;
                        break;
                }
            }
        }
        if (matched) {
            return 1;
        }
        if (p == e || (n == 0 && re->anchored)) {
            return 0;
        }
        n_seeds = 0;
        for (uint32_t i = 0; i < n; i++) {
            const rx_inst *in = &prog[w->list[i]];
            bool ok = in->op == RX_CHAR  ? cur == in->x
                      : in->op == RX_SET ? rx_in_set(re, in->x, cur)
                                         : cur != 0x0A && cur != 0x0D && cur != 0x2028 &&
                                               cur != 0x2029; /* RX_ANY */
            if (ok) {
                w->seeds[n_seeds++] = w->list[i] + 1;
            }
        }
        *steps += visited + n + 1;
        if (*steps > max_steps) {
            return -1;
        }
        prev = cur;
        p = q;
    }
}

/* ---- compiled schemas ---------------------------------------------------- */

enum {
    T_NULL = 1u << 0,
    T_BOOLEAN = 1u << 1,
    T_OBJECT = 1u << 2,
    T_ARRAY = 1u << 3,
    T_NUMBER = 1u << 4,
    T_STRING = 1u << 5,
    T_INTEGER = 1u << 6,
};
static const char *const k_type_names[] = {"null",   "boolean", "object", "array",
                                           "number", "string",  "integer"};

enum { S_SCHEMA, S_TRUE, S_FALSE };

typedef struct node node;

typedef struct pattern_prop {
    jregex *re; /* owned */
    const sst_value *source;
    node *schema;
} pattern_prop;

/* What the presence of a property needs: other properties, or a schema to hold. */
typedef struct dependent {
    const sst_value *key;
    const sst_value *required; /* an array of names, or NULL */
    node *schema;              /* or NULL */
} dependent;

/* One subschema. Borrowed values point into the compiled schema's document. */
struct node {
    const sst_value *src; /* the subschema */
    char *path;           /* owned: its location in the document ("" for the root) */
    uint8_t kind;         /* S_* */
    uint8_t chain_state;  /* compile: 0 unseen, 1 being visited, 2 done */
    uint8_t chain_height; /* compile: longest run of in-place applications from here */
    uint8_t n_types;
    uint8_t types[7]; /* "type" in the schema's order: indexes of k_type_names */
    unsigned type_mask;
    const sst_value *enum_, *const_;
    const sst_value *minimum, *maximum, *ex_minimum, *ex_maximum, *multiple_of;
    size_t min_length, max_length; /* code points; max SIZE_MAX: none */
    jregex *pattern;               /* owned */
    const sst_value *pattern_src;
    size_t min_items, max_items;
    bool unique_items;
    bool has_min_contains;
    node **prefix; /* owned array */
    size_t n_prefix;
    node *items, *contains;
    size_t min_contains, max_contains;
    size_t min_props, max_props;
    const sst_value *properties; /* the object; prop_nodes[i] is member i's schema */
    node **prop_nodes;           /* owned array */
    size_t n_props;
    pattern_prop *patterns; /* owned array */
    size_t n_patterns;
    node *additional, *property_names;
    const sst_value *required; /* array of strings */
    dependent *deps;           /* owned array: dependentRequired, dependentSchemas, dependencies */
    size_t n_deps;
    node **all_of, **any_of, **one_of; /* owned arrays */
    size_t n_all_of, n_any_of, n_one_of;
    node *not_, *if_, *then_, *else_;
    node *ref;
    const sst_value *ref_src; /* the "$ref" text */
};

struct sst__json_schema {
    sst_value *doc; /* owned reference */
    node **nodes;   /* owned: every node */
    size_t n_nodes, cap_nodes;
    node *root;
    uint32_t max_prog; /* the largest regex program: the matcher's scratch size */
};

static void node_free(node *n) {
    sst__free(n->path);
    rx_free(n->pattern);
    sst__free(n->prefix);
    sst__free(n->prop_nodes);
    for (size_t i = 0; i < n->n_patterns; i++) {
        rx_free(n->patterns[i].re);
    }
    sst__free(n->patterns);
    sst__free(n->deps);
    sst__free(n->all_of);
    sst__free(n->any_of);
    sst__free(n->one_of);
    sst__free(n);
}

void sst__json_schema_free(sst__json_schema *s) {
    if (s == NULL) {
        return;
    }
    for (size_t i = 0; i < s->n_nodes; i++) {
        node_free(s->nodes[i]);
    }
    sst__free(s->nodes);
    sst_value_unref(s->doc);
    sst__free(s);
}

const sst_value *sst__json_schema_source(const sst__json_schema *s) {
    return s != NULL ? s->doc : NULL;
}

/* ---- URIs (for "$id" and "$ref") -----------------------------------------
 *
 * Only references into the document itself are resolved, but "$id" may give
 * a part of it a URI of its own, and "$ref" may name that URI (relative to the
 * base in scope), so references go through RFC 3986 resolution.
 */

typedef struct slice {
    const char *p;
    size_t n;
    bool has;
} slice;

typedef struct uri {
    slice scheme, auth, path, query, frag;
} uri_parts;

static bool is_alpha(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static void uri_parse(const char *s, size_t n, uri_parts *u) {
    memset(u, 0, sizeof *u);
    const char *p = s, *e = s + n, *q = s;
    if (q < e && is_alpha(*q)) {
        q++;
        while (q < e &&
               (is_alpha(*q) || (*q >= '0' && *q <= '9') || *q == '+' || *q == '-' || *q == '.')) {
            q++;
        }
        if (q < e && *q == ':') {
            u->scheme = (slice){p, (size_t)(q - p), true};
            p = q + 1;
        }
    }
    if (e - p >= 2 && p[0] == '/' && p[1] == '/') {
        p += 2;
        for (q = p; q < e && *q != '/' && *q != '?' && *q != '#'; q++) {
        }
        u->auth = (slice){p, (size_t)(q - p), true};
        p = q;
    }
    for (q = p; q < e && *q != '?' && *q != '#'; q++) {
    }
    u->path = (slice){p, (size_t)(q - p), true};
    p = q;
    if (p < e && *p == '?') {
        for (q = ++p; q < e && *q != '#'; q++) {
        }
        u->query = (slice){p, (size_t)(q - p), true};
        p = q;
    }
    if (p < e && *p == '#') {
        p++;
        u->frag = (slice){p, (size_t)(e - p), true};
    }
}

/* Appends @p path with its "." and ".." segments removed (RFC 3986 5.2.4). */
static void put_path(sst__buf *b, const char *in, size_t n) {
    size_t start = b->len;
    const char *p = in, *e = in + n;
    while (p < e) {
        size_t left = (size_t)(e - p);
        if (left >= 3 && memcmp(p, "../", 3) == 0) {
            p += 3;
        } else if (left >= 2 && memcmp(p, "./", 2) == 0) {
            p += 2;
        } else if ((left >= 3 && memcmp(p, "/./", 3) == 0) ||
                   (left == 2 && memcmp(p, "/.", 2) == 0)) {
            p += 2; /* "/./x" goes on as "/x"; a final "/." becomes "/" */
            if (p == e) {
                sst__buf_putc(b, '/');
            }
        } else if ((left >= 4 && memcmp(p, "/../", 4) == 0) ||
                   (left == 3 && memcmp(p, "/..", 3) == 0)) {
            p += 3;
            while (b->len > start && b->data[b->len - 1] != '/') {
                b->len--;
            }
            if (b->len > start) {
                b->len--;
            }
            if (p == e) {
                sst__buf_putc(b, '/');
            }
        } else if ((left == 1 && *p == '.') || (left == 2 && memcmp(p, "..", 2) == 0)) {
            p = e;
        } else {
            const char *q = p + 1;
            while (q < e && *q != '/') {
                q++;
            }
            sst__buf_append(b, p, (size_t)(q - p));
            p = q;
        }
    }
}

/*
 * Resolves @p ref against @p base (RFC 3986 5.2.2): the target without its
 * fragment goes to @p out, the fragment (raw, NULL if none) to *frag.
 */
static void uri_resolve(const char *base, const char *ref, size_t ref_len, sst__buf *out,
                        slice *frag) {
    uri_parts b, r;
    uri_parse(base, strlen(base), &b);
    uri_parse(ref, ref_len, &r);
    *frag = r.frag;
    slice scheme = r.scheme.has ? r.scheme : b.scheme;
    slice auth = r.scheme.has || r.auth.has ? r.auth : b.auth;
    slice query = r.query;
    if (scheme.has) {
        sst__buf_append(out, scheme.p, scheme.n);
        sst__buf_putc(out, ':');
    }
    if (auth.has) {
        sst__buf_append(out, "//", 2);
        sst__buf_append(out, auth.p, auth.n);
    }
    if (r.scheme.has || r.auth.has) {
        put_path(out, r.path.p, r.path.n);
    } else if (r.path.n == 0) {
        sst__buf_append(out, b.path.p, b.path.n);
        if (!r.query.has) {
            query = b.query;
        }
    } else if (r.path.p[0] == '/') {
        put_path(out, r.path.p, r.path.n);
    } else {
        sst__buf merged; /* merge(base path, ref path) */
        sst__buf_init(&merged);
        if (b.auth.has && b.path.n == 0) {
            sst__buf_putc(&merged, '/');
        } else {
            size_t keep = b.path.n;
            while (keep > 0 && b.path.p[keep - 1] != '/') {
                keep--;
            }
            sst__buf_append(&merged, b.path.p, keep);
        }
        sst__buf_append(&merged, r.path.p, r.path.n);
        if (merged.oom) {
            out->oom = true;
        } else {
            put_path(out, merged.data, merged.len);
        }
        sst__buf_free(&merged);
    }
    if (query.has) {
        sst__buf_putc(out, '?');
        sst__buf_append(out, query.p, query.n);
    }
}

/* ---- the compiler ---------------------------------------------------------- */

/* A table from value addresses to nodes (open addressing). */
typedef struct ptrmap {
    const sst_value **keys;
    node **vals;
    size_t cap, n;
} ptrmap;

static size_t ptr_slot(const ptrmap *m, const sst_value *k) {
    uint64_t h = sst__hash_mix((uint64_t)(uintptr_t)k);
    size_t i = (size_t)h & (m->cap - 1);
    while (m->keys[i] != NULL && m->keys[i] != k) {
        i = (i + 1) & (m->cap - 1);
    }
    return i;
}

static node *ptrmap_get(const ptrmap *m, const sst_value *k) {
    if (m->cap == 0) {
        return NULL;
    }
    size_t i = ptr_slot(m, k);
    return m->keys[i] == k ? m->vals[i] : NULL;
}

static bool ptrmap_put(ptrmap *m, const sst_value *k, node *v) {
    if ((m->n + 1) * 2 > m->cap) {
        ptrmap g = {NULL, NULL, m->cap ? m->cap * 2 : 64, m->n};
        g.keys = sst__calloc(g.cap, sizeof *g.keys);
        g.vals = sst__calloc(g.cap, sizeof *g.vals);
        if (g.keys == NULL || g.vals == NULL) {
            sst__free(g.keys);
            sst__free(g.vals);
            return false;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (m->keys[i] != NULL) {
                size_t j = ptr_slot(&g, m->keys[i]);
                g.keys[j] = m->keys[i];
                g.vals[j] = m->vals[i];
            }
        }
        sst__free(m->keys);
        sst__free(m->vals);
        *m = g;
    }
    size_t i = ptr_slot(m, k);
    m->keys[i] = k;
    m->vals[i] = v;
    m->n++;
    return true;
}

/* Named things: URIs of resources ("$id") and of anchors, each with its node. */
typedef struct names {
    sst__strmap map; /* key -> index */
    char **keys;     /* owned strings */
    node **nodes;
    size_t n, cap;
} names;

static void names_free(names *t) {
    for (size_t i = 0; i < t->n; i++) {
        sst__free(t->keys[i]);
    }
    sst__free(t->keys);
    sst__free(t->nodes);
    sst__map_free(&t->map);
}

static node *names_get(const names *t, const char *key) {
    size_t i;
    return sst__map_get(&t->map, key, &i) ? t->nodes[i] : NULL;
}

/* Adds @p key (copied); a second definition of a key keeps the first. False on OOM. */
static bool names_put(names *t, const char *key, node *n) {
    if (names_get(t, key) != NULL) {
        return true;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 8;
        char **keys = sst__realloc(t->keys, cap * sizeof *keys);
        if (keys == NULL) {
            return false;
        }
        t->keys = keys;
        node **nodes = sst__realloc(t->nodes, cap * sizeof *nodes);
        if (nodes == NULL) {
            return false;
        }
        t->nodes = nodes;
        t->cap = cap;
    }
    char *copy = sst__strndup(key, strlen(key));
    if (copy == NULL || !sst__map_put(&t->map, copy, t->n)) {
        sst__free(copy);
        return false;
    }
    t->keys[t->n] = copy;
    t->nodes[t->n++] = n;
    return true;
}

/* A "$ref" to resolve once the whole document has been read. */
typedef struct pending {
    node *from;
    char *target; /* owned: the absolute URI without its fragment */
    char *frag;   /* owned: the raw fragment, NULL when there is none */
} pending;

typedef struct comp {
    sst__json_schema *s;
    sst_error *err;
    sst__buf path; /* the location being compiled */
    ptrmap seen;   /* subschema value -> node */
    names resources;
    names anchors; /* "URI#name" */
    pending *refs;
    size_t n_refs, cap_refs;
    bool failed;
} comp;

static void *cfail(comp *k, sst_code code, const char *fmt, ...) SST_PRINTF(3, 4);
static void *cfail(comp *k, sst_code code, const char *fmt, ...) {
    if (!k->failed) {
        char msg[SST_ERROR_MSG_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        char where[SHORT_MAX];
        shorten(k->path.len > 0 && !k->path.oom ? k->path.data : "/",
                k->path.len > 0 && !k->path.oom ? k->path.len : 1, where);
        sst__error(k->err, code, "schema at %s: %s", where, msg);
    }
    k->failed = true;
    return NULL;
}

static void *coom(comp *k) {
    if (!k->failed) {
        sst__enomem(k->err);
    }
    k->failed = true;
    return NULL;
}

/* Appends "/TOKEN" to the location; returns the length to restore. */
static size_t push(comp *k, const char *token, size_t n) {
    size_t mark = k->path.len;
    sst__buf_putc(&k->path, '/');
    put_token(&k->path, token, n);
    return mark;
}

static size_t push_index(comp *k, const char *kw, size_t i) {
    size_t mark = push(k, kw, strlen(kw));
    char num[SST__INT_BUF];
    sst__fmt_int((int64_t)i, num);
    sst__buf_putc(&k->path, '/');
    buf_puts(&k->path, num);
    return mark;
}

static void pop(comp *k, size_t mark) {
    k->path.len = mark;
}

static node *walk(comp *k, const sst_value *v, const char *base, size_t depth);

/* Compiles the subschema at keyword @p kw. NULL on failure (already reported). */
static node *sub(comp *k, const char *kw, const sst_value *v, const char *base, size_t depth) {
    size_t mark = push(k, kw, strlen(kw));
    node *n = walk(k, v, base, depth + 1);
    pop(k, mark);
    return n;
}

/* Compiles a non-empty array of subschemas at keyword @p kw into *out (*n). */
static bool sub_array(comp *k, const char *kw, const sst_value *v, const char *base, size_t depth,
                      node ***out, size_t *n) {
    if (!sst_is_array(v) || sst_array_len(v) == 0) {
        cfail(k, SST_EINVAL, "'%s' must be a non-empty array of schemas", kw);
        return false;
    }
    size_t len = sst_array_len(v);
    *out = sst__calloc(len, sizeof **out);
    if (*out == NULL) {
        coom(k);
        return false;
    }
    *n = len;
    for (size_t i = 0; i < len; i++) {
        size_t mark = push_index(k, kw, i);
        (*out)[i] = walk(k, sst_array_get(v, i), base, depth + 1);
        pop(k, mark);
        if ((*out)[i] == NULL) {
            return false;
        }
    }
    return true;
}

/* A non-negative integer keyword (2.0 counts, as the spec says); false when absent or bad. */
static bool count_kw(comp *k, const sst_value *o, const char *kw, size_t *out) {
    const sst_value *v = sst_object_get(o, kw);
    if (v == NULL) {
        return false;
    }
    double d = sst_number_value(v);
    if (sst_is_int(v) && sst_int_value(v) >= 0) {
        *out = (uint64_t)sst_int_value(v) > SIZE_MAX ? SIZE_MAX : (size_t)sst_int_value(v);
        return true;
    }
    if (sst_is_double(v) && d >= 0 && d == floor(d)) {
        *out = d >= (double)SIZE_MAX ? SIZE_MAX : (size_t)d;
        return true;
    }
    cfail(k, SST_EINVAL, "'%s' must be a non-negative integer", kw);
    return false;
}

static const sst_value *number_kw(comp *k, const sst_value *o, const char *kw) {
    const sst_value *v = sst_object_get(o, kw);
    if (v != NULL && !sst_is_number(v)) {
        cfail(k, SST_EINVAL, "'%s' must be a number", kw);
        return NULL;
    }
    return v;
}

/* Compiles a pattern for keyword @p kw ("pattern", or the key of "patternProperties"). */
static jregex *pattern_kw(comp *k, const char *kw, const sst_value *v) {
    char why[200];
    jregex *re = rx_compile(sst_string_cstr(v), sst_string_len(v), why, sizeof why);
    if (re == NULL) {
        if (why[0] == '\0') {
            return coom(k);
        }
        char *shown = json_text(v, 80);
        cfail(k, SST_EINVAL, "'%s' %s is not a supported regular expression: %s", kw,
              shown != NULL ? shown : "", why);
        sst_free(shown);
        return NULL;
    }
    if (re->n_prog > k->s->max_prog) {
        k->s->max_prog = re->n_prog;
    }
    return re;
}

static bool is_string_array(const sst_value *v) {
    if (!sst_is_array(v)) {
        return false;
    }
    for (size_t i = 0; i < sst_array_len(v); i++) {
        if (!sst_is_string(sst_array_get(v, i))) {
            return false;
        }
    }
    return true;
}

static bool type_kw(comp *k, node *n, const sst_value *t) {
    size_t count = sst_is_array(t) ? sst_array_len(t) : 1;
    if (!sst_is_string(t) && !is_string_array(t)) {
        cfail(k, SST_EINVAL, "'type' must be a string or an array of strings");
        return false;
    }
    for (size_t i = 0; i < count; i++) {
        const sst_value *name = sst_is_array(t) ? sst_array_get(t, i) : t;
        size_t j = 0;
        while (j < SST_ARRAY_LEN(k_type_names) &&
               strcmp(sst_string_cstr(name), k_type_names[j]) != 0) {
            j++;
        }
        if (j == SST_ARRAY_LEN(k_type_names)) {
            char *shown = json_text(name, 60);
            cfail(k, SST_EINVAL,
                  "'type' names an unknown type %s (expected null, boolean, object, array, "
                  "number, string or integer)",
                  shown != NULL ? shown : "");
            sst_free(shown);
            return false;
        }
        if (n->type_mask & (1u << j)) {
            cfail(k, SST_EINVAL, "'type' lists \"%s\" twice", k_type_names[j]);
            return false;
        }
        n->type_mask |= 1u << j;
        n->types[n->n_types++] = (uint8_t)j;
    }
    return true;
}

/* Registers the "$ref" of @p n for resolution after the walk. */
static bool add_ref(comp *k, node *n, const sst_value *ref, const char *base) {
    sst__buf target;
    sst__buf_init(&target);
    slice frag;
    uri_resolve(base, sst_string_cstr(ref), sst_string_len(ref), &target, &frag);
    char *t = target.oom ? NULL : sst__buf_detach(&target, NULL);
    sst__buf_free(&target);
    char *f = frag.has ? sst__strndup(frag.p, frag.n) : NULL;
    if (t == NULL || (frag.has && f == NULL)) {
        sst__free(t);
        sst__free(f);
        return coom(k) != NULL;
    }
    if (k->n_refs == k->cap_refs) {
        size_t cap = k->cap_refs ? k->cap_refs * 2 : 16;
        pending *refs = sst__realloc(k->refs, cap * sizeof *refs);
        if (refs == NULL) {
            sst__free(t);
            sst__free(f);
            return coom(k) != NULL;
        }
        k->refs = refs;
        k->cap_refs = cap;
    }
    k->refs[k->n_refs++] = (pending){n, t, f};
    return true;
}

/* True for a plain-name fragment as "$anchor" takes: [A-Za-z_][-A-Za-z0-9._]*. */
static bool anchor_name(const sst_value *v) {
    const char *s = sst_string_cstr(v);
    size_t n = sst_string_len(v);
    if (n == 0 || !(is_alpha(s[0]) || s[0] == '_')) {
        return false;
    }
    for (size_t i = 1; i < n; i++) {
        char c = s[i];
        if (!(is_alpha(c) || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_')) {
            return false;
        }
    }
    return true;
}

static bool add_anchor(comp *k, node *n, const char *base, const char *kw, const sst_value *a) {
    if (!sst_is_string(a) || !anchor_name(a)) {
        cfail(k, SST_EINVAL, "'%s' must be a name of letters, digits, '-', '.' and '_'", kw);
        return false;
    }
    sst__buf key;
    sst__buf_init(&key);
    buf_puts(&key, base);
    sst__buf_putc(&key, '#');
    sst__buf_append(&key, sst_string_cstr(a), sst_string_len(a));
    sst__buf_putc(&key, '\0');
    bool ok = !key.oom && names_put(&k->anchors, key.data, n);
    sst__buf_free(&key);
    return ok || coom(k) != NULL;
}

/* Keywords of newer drafts whose meaning we do not implement: refused, not ignored. */
static const char *const k_unsupported[] = {"$dynamicRef", "$recursiveRef", "unevaluatedItems",
                                            "unevaluatedProperties"};

/*
 * "dependentRequired" (arrays of names), "dependentSchemas" (schemas) and
 * draft 7's "dependencies" (either), into n->deps.
 */
static bool dependents_kw(comp *k, node *n, const sst_value *o, const char *kw, const char *base,
                          size_t depth) {
    const sst_value *v = sst_object_get(o, kw);
    if (v == NULL) {
        return true;
    }
    if (!sst_is_object(v)) {
        cfail(k, SST_EINVAL, "'%s' must be an object", kw);
        return false;
    }
    size_t len = sst_object_len(v);
    dependent *deps = sst__realloc(n->deps, (n->n_deps + len + 1) * sizeof *deps);
    if (deps == NULL) {
        return coom(k) != NULL;
    }
    n->deps = deps;
    size_t mark = push(k, kw, strlen(kw));
    for (size_t i = 0; i < len; i++) {
        const sst_value *key = sst_object_key_at(v, i);
        const sst_value *d = sst_object_value_at(v, i);
        size_t m2 = push(k, sst_string_cstr(key), sst_string_len(key));
        dependent *dep = &n->deps[n->n_deps];
        *dep = (dependent){key, NULL, NULL};
        bool want_names = strcmp(kw, "dependentRequired") == 0;
        bool want_schema = strcmp(kw, "dependentSchemas") == 0;
        if (!want_schema && is_string_array(d)) {
            dep->required = d;
        } else if (!want_names && (sst_is_object(d) || sst_is_bool(d))) {
            dep->schema = walk(k, d, base, depth + 1);
            if (dep->schema == NULL) {
                return false;
            }
        } else {
            cfail(k, SST_EINVAL, "'%s' must map names to %s", kw,
                  want_names    ? "arrays of property names"
                  : want_schema ? "schemas"
                                : "arrays of property names or schemas");
            return false;
        }
        pop(k, m2);
        n->n_deps++;
    }
    pop(k, mark);
    return true;
}

/* The object keywords: properties, patternProperties, required, dependencies. */
static bool object_kws(comp *k, node *n, const sst_value *o, const char *base, size_t depth) {
    const sst_value *v = sst_object_get(o, "properties");
    if (v != NULL) {
        if (!sst_is_object(v)) {
            cfail(k, SST_EINVAL, "'properties' must be an object of schemas");
            return false;
        }
        n->properties = v;
        n->n_props = sst_object_len(v);
        n->prop_nodes = sst__calloc(n->n_props + 1, sizeof *n->prop_nodes);
        if (n->prop_nodes == NULL) {
            return coom(k) != NULL;
        }
        size_t mark = push(k, "properties", 10);
        for (size_t i = 0; i < n->n_props; i++) {
            const sst_value *key = sst_object_key_at(v, i);
            size_t m2 = push(k, sst_string_cstr(key), sst_string_len(key));
            n->prop_nodes[i] = walk(k, sst_object_value_at(v, i), base, depth + 1);
            pop(k, m2);
            if (n->prop_nodes[i] == NULL) {
                return false;
            }
        }
        pop(k, mark);
    }
    v = sst_object_get(o, "patternProperties");
    if (v != NULL) {
        if (!sst_is_object(v)) {
            cfail(k, SST_EINVAL, "'patternProperties' must be an object of schemas");
            return false;
        }
        n->patterns = sst__calloc(sst_object_len(v) + 1, sizeof *n->patterns);
        if (n->patterns == NULL) {
            return coom(k) != NULL;
        }
        size_t mark = push(k, "patternProperties", 17);
        for (size_t i = 0; i < sst_object_len(v); i++) {
            const sst_value *key = sst_object_key_at(v, i);
            size_t m2 = push(k, sst_string_cstr(key), sst_string_len(key));
            pattern_prop *pp = &n->patterns[n->n_patterns];
            pp->source = key;
            pp->re = pattern_kw(k, "patternProperties", key);
            if (pp->re != NULL) {
                n->n_patterns++; /* counted once it owns a regex, for node_free */
                pp->schema = walk(k, sst_object_value_at(v, i), base, depth + 1);
            }
            pop(k, m2);
            if (pp->re == NULL || pp->schema == NULL) {
                return false;
            }
        }
        pop(k, mark);
    }
    v = sst_object_get(o, "required");
    if (v != NULL) {
        if (!is_string_array(v)) {
            cfail(k, SST_EINVAL, "'required' must be an array of strings");
            return false;
        }
        n->required = v;
    }
    if (!dependents_kw(k, n, o, "dependentRequired", base, depth) ||
        !dependents_kw(k, n, o, "dependentSchemas", base, depth) ||
        !dependents_kw(k, n, o, "dependencies", base, depth)) {
        return false;
    }
    if ((v = sst_object_get(o, "additionalProperties")) != NULL &&
        (n->additional = sub(k, "additionalProperties", v, base, depth)) == NULL) {
        return false;
    }
    if ((v = sst_object_get(o, "propertyNames")) != NULL &&
        (n->property_names = sub(k, "propertyNames", v, base, depth)) == NULL) {
        return false;
    }
    n->max_props = SIZE_MAX;
    if (k->failed || (count_kw(k, o, "minProperties", &n->min_props), k->failed) ||
        (count_kw(k, o, "maxProperties", &n->max_props), k->failed)) {
        return false;
    }
    return true;
}

/* The array keywords. */
static bool array_kws(comp *k, node *n, const sst_value *o, const char *base, size_t depth) {
    const sst_value *v = sst_object_get(o, "prefixItems");
    if (v != NULL && !sub_array(k, "prefixItems", v, base, depth, &n->prefix, &n->n_prefix)) {
        return false;
    }
    v = sst_object_get(o, "items");
    if (v != NULL && sst_is_array(v)) {
        /* Draft 7's tuple: "items" as an array, then "additionalItems" for the rest. */
        if (n->prefix != NULL) {
            cfail(k, SST_EINVAL,
                  "'items' must be a schema when 'prefixItems' is present (an array 'items' is "
                  "draft 7's form of 'prefixItems')");
            return false;
        }
        if (!sub_array(k, "items", v, base, depth, &n->prefix, &n->n_prefix)) {
            return false;
        }
        v = sst_object_get(o, "additionalItems");
        if (v != NULL && (n->items = sub(k, "additionalItems", v, base, depth)) == NULL) {
            return false;
        }
    } else if (v != NULL && (n->items = sub(k, "items", v, base, depth)) == NULL) {
        return false;
    }
    if ((v = sst_object_get(o, "contains")) != NULL &&
        (n->contains = sub(k, "contains", v, base, depth)) == NULL) {
        return false;
    }
    v = sst_object_get(o, "uniqueItems");
    if (v != NULL && !sst_is_bool(v)) {
        cfail(k, SST_EINVAL, "'uniqueItems' must be a boolean");
        return false;
    }
    n->unique_items = sst_bool_value(v);
    n->max_items = n->max_contains = SIZE_MAX;
    n->min_contains = 1;
    count_kw(k, o, "minItems", &n->min_items);
    if (!k->failed) {
        count_kw(k, o, "maxItems", &n->max_items);
    }
    if (!k->failed) {
        n->has_min_contains = count_kw(k, o, "minContains", &n->min_contains);
    }
    if (!k->failed) {
        count_kw(k, o, "maxContains", &n->max_contains);
    }
    return !k->failed;
}

/* The keywords of numbers and strings. */
static bool scalar_kws(comp *k, node *n, const sst_value *o) {
    n->minimum = number_kw(k, o, "minimum");
    n->maximum = number_kw(k, o, "maximum");
    n->ex_minimum = number_kw(k, o, "exclusiveMinimum");
    n->ex_maximum = number_kw(k, o, "exclusiveMaximum");
    n->multiple_of = number_kw(k, o, "multipleOf");
    if (k->failed) {
        return false;
    }
    if (n->multiple_of != NULL && !(sst_number_value(n->multiple_of) > 0)) {
        cfail(k, SST_EINVAL, "'multipleOf' must be greater than 0");
        return false;
    }
    n->max_length = SIZE_MAX;
    count_kw(k, o, "minLength", &n->min_length);
    if (!k->failed) {
        count_kw(k, o, "maxLength", &n->max_length);
    }
    if (k->failed) {
        return false;
    }
    const sst_value *v = sst_object_get(o, "pattern");
    if (v != NULL) {
        if (!sst_is_string(v)) {
            cfail(k, SST_EINVAL, "'pattern' must be a string");
            return false;
        }
        n->pattern_src = v;
        if ((n->pattern = pattern_kw(k, "pattern", v)) == NULL) {
            return false;
        }
    }
    return true;
}

/* The applicators that apply to the instance itself: allOf, anyOf, oneOf, not, if. */
static bool logic_kws(comp *k, node *n, const sst_value *o, const char *base, size_t depth) {
    const sst_value *v;
    if ((v = sst_object_get(o, "allOf")) != NULL &&
        !sub_array(k, "allOf", v, base, depth, &n->all_of, &n->n_all_of)) {
        return false;
    }
    if ((v = sst_object_get(o, "anyOf")) != NULL &&
        !sub_array(k, "anyOf", v, base, depth, &n->any_of, &n->n_any_of)) {
        return false;
    }
    if ((v = sst_object_get(o, "oneOf")) != NULL &&
        !sub_array(k, "oneOf", v, base, depth, &n->one_of, &n->n_one_of)) {
        return false;
    }
    static const char *const kws[] = {"not", "if", "then", "else"};
    node **slots[] = {&n->not_, &n->if_, &n->then_, &n->else_};
    for (size_t i = 0; i < SST_ARRAY_LEN(kws); i++) {
        if ((v = sst_object_get(o, kws[i])) != NULL &&
            (*slots[i] = sub(k, kws[i], v, base, depth)) == NULL) {
            return false;
        }
    }
    return true;
}

/* "$defs" and "definitions": compiled even when nothing refers to them, to check them. */
static bool defs_kw(comp *k, const sst_value *o, const char *kw, const char *base, size_t depth) {
    const sst_value *v = sst_object_get(o, kw);
    if (v == NULL) {
        return true;
    }
    if (!sst_is_object(v)) {
        cfail(k, SST_EINVAL, "'%s' must be an object of schemas", kw);
        return false;
    }
    size_t mark = push(k, kw, strlen(kw));
    for (size_t i = 0; i < sst_object_len(v); i++) {
        const sst_value *key = sst_object_key_at(v, i);
        size_t m2 = push(k, sst_string_cstr(key), sst_string_len(key));
        node *d = walk(k, sst_object_value_at(v, i), base, depth + 1);
        pop(k, m2);
        if (d == NULL) {
            return false;
        }
    }
    pop(k, mark);
    return true;
}

/* The base URI of the resource a "$id" starts (owned by k->resources); NULL on failure. */
static const char *enter_resource(comp *k, node *n, const sst_value *id, const char *base) {
    if (!sst_is_string(id)) {
        return cfail(k, SST_EINVAL, "'$id' must be a string");
    }
    sst__buf target;
    sst__buf_init(&target);
    slice frag;
    uri_resolve(base, sst_string_cstr(id), sst_string_len(id), &target, &frag);
    sst__buf_putc(&target, '\0');
    const char *uri = NULL;
    if (frag.has && frag.n > 0) {
        cfail(k, SST_EINVAL, "'$id' must not have a fragment (use '$anchor' to name a subschema)");
    } else if (target.oom || !names_put(&k->resources, target.data, n)) {
        coom(k);
    } else {
        size_t i = 0;
        sst__map_get(&k->resources.map, target.data, &i);
        uri = k->resources.keys[i];
    }
    sst__buf_free(&target);
    return uri;
}

/*
 * Compiles the subschema @p v (with @p base the URI in scope) into a node, or
 * returns the node made for the same value before. NULL on failure.
 */
static node *walk(comp *k, const sst_value *v, const char *base, size_t depth) {
    node *n = ptrmap_get(&k->seen, v);
    if (n != NULL) {
        return n;
    }
    if (depth > SST__JSON_SCHEMA_MAX_NESTING) {
        return cfail(k, SST_ELIMIT, "subschemas nested deeper than %d",
                     SST__JSON_SCHEMA_MAX_NESTING);
    }
    if (!sst_is_object(v) && !sst_is_bool(v)) {
        return cfail(k, SST_EINVAL, "expected a schema (an object or a boolean), got %s",
                     sst_is_double(v) ? "number" : sst_type_name(sst_value_type(v)));
    }
    if (k->path.oom) {
        return coom(k);
    }
    n = sst__calloc(1, sizeof *n);
    if (n == NULL) {
        return coom(k);
    }
    n->src = v;
    n->path = sst__strndup(k->path.len > 0 ? k->path.data : "", k->path.len);
    sst__json_schema *s = k->s;
    if (n->path != NULL && s->n_nodes == s->cap_nodes) {
        void *items = s->nodes;
        if (sst__grow(&items, &s->cap_nodes, s->n_nodes, sizeof *s->nodes, 16)) {
            s->nodes = items;
        } else {
            sst__free(n->path);
            n->path = NULL;
        }
    }
    if (n->path == NULL) {
        node_free(n);
        return coom(k);
    }
    s->nodes[s->n_nodes++] = n;
    if (!ptrmap_put(&k->seen, v, n)) {
        return coom(k);
    }
    if (sst_is_bool(v)) {
        n->kind = sst_bool_value(v) ? S_TRUE : S_FALSE;
        return n;
    }
    for (size_t i = 0; i < SST_ARRAY_LEN(k_unsupported); i++) {
        if (sst_object_get(v, k_unsupported[i]) != NULL) {
            return cfail(k, SST_EINVAL, "'%s' is not supported", k_unsupported[i]);
        }
    }
    const sst_value *a = sst_object_get(v, "$id");
    if (a != NULL && sst_is_string(a) && sst_string_len(a) > 0 && sst_string_cstr(a)[0] == '#') {
        /* Before 2019-09, "$id": "#name" named a subschema, as "$anchor" does now. */
        sst__buf name;
        sst__buf_init(&name);
        sst__buf_append(&name, sst_string_cstr(a) + 1, sst_string_len(a) - 1);
        sst_value *nv =
            name.oom ? NULL : sst_string_newn(name.data ? name.data : "", name.len, NULL);
        sst__buf_free(&name);
        bool ok = nv != NULL && add_anchor(k, n, base, "$id", nv);
        sst_value_unref(nv);
        if (!ok) {
            return nv == NULL ? coom(k) : NULL;
        }
    } else if (a != NULL && (base = enter_resource(k, n, a, base)) == NULL) {
        return NULL;
    }
    if ((a = sst_object_get(v, "$anchor")) != NULL && !add_anchor(k, n, base, "$anchor", a)) {
        return NULL;
    }
    if ((a = sst_object_get(v, "$dynamicAnchor")) != NULL &&
        !add_anchor(k, n, base, "$dynamicAnchor", a)) {
        return NULL;
    }
    if ((a = sst_object_get(v, "$ref")) != NULL) {
        if (!sst_is_string(a)) {
            return cfail(k, SST_EINVAL, "'$ref' must be a string");
        }
        n->ref_src = a;
        if (!add_ref(k, n, a, base)) {
            return NULL;
        }
    }
    if ((a = sst_object_get(v, "type")) != NULL && !type_kw(k, n, a)) {
        return NULL;
    }
    n->enum_ = sst_object_get(v, "enum");
    if (n->enum_ != NULL && !sst_is_array(n->enum_)) {
        return cfail(k, SST_EINVAL, "'enum' must be an array");
    }
    n->const_ = sst_object_get(v, "const");
    if (!defs_kw(k, v, "$defs", base, depth) || !defs_kw(k, v, "definitions", base, depth) ||
        !scalar_kws(k, n, v) || !array_kws(k, n, v, base, depth) ||
        !object_kws(k, n, v, base, depth) || !logic_kws(k, n, v, base, depth)) {
        return NULL;
    }
    return n;
}

/* Decodes %XX escapes of a URI fragment in place; false for a bad escape. */
static bool percent_decode(char *s, size_t *len) {
    size_t o = 0;
    for (size_t i = 0; i < *len; i++) {
        if (s[i] != '%') {
            s[o++] = s[i];
            continue;
        }
        int hi = i + 2 < *len ? sst__hex_digit((unsigned char)s[i + 1]) : -1;
        int lo = hi >= 0 ? sst__hex_digit((unsigned char)s[i + 2]) : -1;
        if (lo < 0) {
            return false;
        }
        s[o++] = (char)(hi * 16 + lo);
        i += 2;
    }
    *len = o;
    return true;
}

/* The value JSON Pointer @p ptr (decoded, @p len bytes) names in @p doc, or NULL. */
static const sst_value *pointer_get(const sst_value *doc, const char *ptr, size_t len) {
    const sst_value *v = doc;
    size_t i = 0;
    char token[1024];
    while (i < len && v != NULL) {
        if (ptr[i] != '/') {
            return NULL;
        }
        i++;
        size_t t = 0;
        while (i < len && ptr[i] != '/') {
            char c = ptr[i++];
            if (c == '~' && i < len && (ptr[i] == '0' || ptr[i] == '1')) {
                c = ptr[i++] == '0' ? '~' : '/';
            } else if (c == '~') {
                return NULL;
            }
            if (t == sizeof token) {
                return NULL;
            }
            token[t++] = c;
        }
        if (sst_is_object(v)) {
            v = sst_object_getn(v, token, t);
        } else if (sst_is_array(v)) {
            size_t idx = 0;
            if (t == 0 || (t > 1 && token[0] == '0') || t > 18) {
                return NULL;
            }
            for (size_t j = 0; j < t; j++) {
                if (token[j] < '0' || token[j] > '9') {
                    return NULL;
                }
                idx = idx * 10 + (size_t)(token[j] - '0');
            }
            v = sst_array_get(v, idx);
        } else {
            return NULL;
        }
    }
    return v;
}

/* Resolves pending reference @p i (new subschemas it reaches add to the list). */
static bool resolve_ref(comp *k, size_t i) {
    pending r = k->refs[i];
    const char *ref_text = sst_string_cstr(r.from->ref_src);
    pop(k, 0);
    buf_puts(&k->path, r.from->path);
    node *root = names_get(&k->resources, r.target);
    node *target = NULL;
    if (root == NULL) {
        cfail(k, SST_EINVAL,
              "cannot resolve '$ref' \"%s\": only references within this document are "
              "supported (no remote schemas)",
              ref_text);
        return false;
    }
    size_t flen = r.frag != NULL ? strlen(r.frag) : 0;
    if (flen == 0) {
        target = root;
    } else if (r.frag[0] == '/') {
        if (!percent_decode(r.frag, &flen)) {
            cfail(k, SST_EINVAL, "'$ref' \"%s\" has a bad %%-escape", ref_text);
            return false;
        }
        const sst_value *v = pointer_get(root->src, r.frag, flen);
        if (v == NULL) {
            cfail(k, SST_EINVAL, "cannot resolve '$ref' \"%s\": nothing is at that location",
                  ref_text);
            return false;
        }
        target = ptrmap_get(&k->seen, v);
        if (target == NULL) { /* a location no keyword made a schema of: compile it now */
            pop(k, 0);
            buf_puts(&k->path, root->path);
            sst__buf_append(&k->path, r.frag, flen);
            target = walk(k, v, r.target, 0);
            if (target == NULL) {
                return false;
            }
        }
    } else {
        sst__buf key;
        sst__buf_init(&key);
        buf_puts(&key, r.target);
        sst__buf_putc(&key, '#');
        buf_puts(&key, r.frag);
        sst__buf_putc(&key, '\0');
        target = key.oom ? NULL : names_get(&k->anchors, key.data);
        bool oom = key.oom;
        sst__buf_free(&key);
        if (oom) {
            return coom(k) != NULL;
        }
        if (target == NULL) {
            cfail(k, SST_EINVAL, "cannot resolve '$ref' \"%s\": no '$anchor' \"%s\"", ref_text,
                  r.frag);
            return false;
        }
    }
    r.from->ref = target;
    return true;
}

static node *chain_child(const node *n, size_t i, size_t *count);

/*
 * Checks that the subschemas applied in place from @p n (to the same
 * instance: "$ref", allOf, anyOf, oneOf, not, if, then, else,
 * dependentSchemas) form no cycle and no chain longer than
 * SST__JSON_SCHEMA_MAX_CHAIN: either would loop forever, or nest evaluation
 * past any stack. Recursion is bounded by that same limit.
 */
static bool chain_check(comp *k, node *n, size_t depth) {
    if (n->chain_state == 2) {
        return true;
    }
    if (n->chain_state == 1) {
        pop(k, 0);
        buf_puts(&k->path, n->path);
        cfail(k, SST_EINVAL,
              "'$ref' cycle: applying this schema leads back to it without descending into the "
              "instance (it would never end)");
        return false;
    }
    if (depth >= SST__JSON_SCHEMA_MAX_CHAIN) {
        pop(k, 0);
        buf_puts(&k->path, n->path);
        cfail(k, SST_ELIMIT,
              "more than %d schemas ('$ref', 'allOf', 'not', ...) apply in a row to one value",
              SST__JSON_SCHEMA_MAX_CHAIN);
        return false;
    }
    n->chain_state = 1;
    size_t height = 1, count = 0;
    for (size_t i = 0;; i++) {
        node *c = chain_child(n, i, &count);
        if (i >= count) {
            break;
        }
        if (c == NULL) {
            continue;
        }
        if (!chain_check(k, c, depth + 1)) {
            return false;
        }
        if ((size_t)c->chain_height + 1 > height) {
            height = (size_t)c->chain_height + 1;
        }
    }
    if (height + depth > SST__JSON_SCHEMA_MAX_CHAIN) {
        pop(k, 0);
        buf_puts(&k->path, n->path);
        cfail(k, SST_ELIMIT,
              "more than %d schemas ('$ref', 'allOf', 'not', ...) apply in a row to one value",
              SST__JSON_SCHEMA_MAX_CHAIN);
        return false;
    }
    n->chain_height = (uint8_t)height;
    n->chain_state = 2;
    return true;
}

/* The @p i-th in-place child of @p n (NULL for an absent one); *count: how many slots. */
static node *chain_child(const node *n, size_t i, size_t *count) {
    *count = 5 + n->n_all_of + n->n_any_of + n->n_one_of + n->n_deps;
    node *fixed[5] = {n->ref, n->not_, n->if_, n->then_, n->else_};
    if (i < 5) {
        return fixed[i];
    }
    i -= 5;
    if (i < n->n_all_of) {
        return n->all_of[i];
    }
    i -= n->n_all_of;
    if (i < n->n_any_of) {
        return n->any_of[i];
    }
    i -= n->n_any_of;
    if (i < n->n_one_of) {
        return n->one_of[i];
    }
    i -= n->n_one_of;
    return i < n->n_deps ? n->deps[i].schema : NULL;
}

static void comp_free(comp *k) {
    sst__buf_free(&k->path);
    sst__free(k->seen.keys);
    sst__free(k->seen.vals);
    names_free(&k->resources);
    names_free(&k->anchors);
    for (size_t i = 0; i < k->n_refs; i++) {
        sst__free(k->refs[i].target);
        sst__free(k->refs[i].frag);
    }
    sst__free(k->refs);
}

sst__json_schema *sst__json_schema_compile(const sst_value *schema, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (schema == NULL) {
        sst__error(err, SST_EINVAL, "schema at /: expected a schema, got nothing (NULL)");
        return NULL;
    }
    comp k;
    memset(&k, 0, sizeof k);
    k.err = err;
    sst__buf_init(&k.path);
    k.s = sst__calloc(1, sizeof *k.s);
    if (k.s == NULL) {
        sst__enomem(err);
        return NULL;
    }
    k.s->doc = sst_value_ref(schema);
    /* The document itself is the resource "" (the base when the root has no "$id"). */
    node *root = walk(&k, schema, "", 0);
    if (root != NULL && !names_put(&k.resources, "", root)) {
        root = coom(&k);
    }
    for (size_t i = 0; root != NULL && i < k.n_refs; i++) {
        if (!resolve_ref(&k, i)) {
            root = NULL;
        }
    }
    for (size_t i = 0; root != NULL && i < k.s->n_nodes; i++) {
        if (!chain_check(&k, k.s->nodes[i], 0)) {
            root = NULL;
        }
    }
    comp_free(&k);
    if (root == NULL) {
        if (err->code == SST_OK) {
            sst__enomem(err);
        }
        sst__json_schema_free(k.s);
        return NULL;
    }
    k.s->root = root;
    return k.s;
}

/* ---- validation ------------------------------------------------------------ */

/* Evaluation frames (nested schema applications) one validation may stack up. */
#define MAX_FRAMES 512

typedef struct seg {
    const sst_value *key; /* a member's key, or NULL for an array index */
    size_t index;
} seg;

enum { F_OTHER, F_TYPE }; /* kinds of failure, to merge "expected X" across anyOf branches */

/* Where failures go while a (sub)schema is evaluated. */
typedef struct sink {
    bool quiet;           /* only validity matters: stop at the first failure, keep no text */
    bool explain;         /* a failing anyOf/oneOf says which branch came closest */
    size_t keep;          /* failures whose text is kept */
    size_t count;         /* failures found */
    size_t kept;          /* failures whose text is in `text` */
    sst__buf text;        /* "LOCATION: message\0" for each kept failure */
    int first_kind;       /* the first failure: F_* */
    size_t first_depth;   /* its instance depth */
    unsigned first_types; /* F_TYPE: the types it expected */
    size_t first_msg;     /* offset of its message (after "LOCATION: ") in `text` */
} sink;

typedef struct vctx {
    const sst__json_schema *s;
    const char *where; /* prefix of locations, or NULL */
    sink *sink;
    size_t depth; /* entries in segs: the location of the value being checked */
    seg segs[SST__JSON_SCHEMA_MAX_DEPTH];
    size_t frames;
    uint64_t steps;     /* work done: schema evaluations and pattern steps */
    uint64_t max_steps; /* the budget (over_budget) */
    bool sized;         /* the budget has grown with the value's size */
    const sst_value *root;
    rx_scratch rx;
    sst_code stop_code; /* why validation stopped (STOP), else SST_OK */
    sst__buf stop;      /* and the message */
} vctx;

static void put_location(const vctx *c, sst__buf *b) {
    if (c->where != NULL && c->where[0] != '\0') {
        buf_puts(b, c->where);
    } else if (c->depth == 0) {
        sst__buf_putc(b, '/');
    }
    for (size_t i = 0; i < c->depth; i++) {
        sst__buf_putc(b, '/');
        if (c->segs[i].key != NULL) {
            put_token(b, sst_string_cstr(c->segs[i].key), sst_string_len(c->segs[i].key));
        } else {
            char num[SST__INT_BUF];
            sst__fmt_int((int64_t)c->segs[i].index, num);
            buf_puts(b, num);
        }
    }
}

static int stop(vctx *c, sst_code code, const char *fmt, ...) SST_PRINTF(3, 4);
static int stop(vctx *c, sst_code code, const char *fmt, ...) {
    if (c->stop_code == SST_OK) {
        c->stop_code = code;
        if (code == SST_ENOMEM) {
            buf_puts(&c->stop, "out of memory");
        } else {
            sst__buf loc;
            sst__buf_init(&loc);
            put_location(c, &loc);
            char where[SHORT_MAX];
            shorten(loc.oom || loc.data == NULL ? "?" : loc.data, loc.oom ? 1 : loc.len, where);
            sst__buf_free(&loc);
            buf_puts(&c->stop, where);
            sst__buf_append(&c->stop, ": ", 2);
            va_list ap;
            va_start(ap, fmt);
            buf_vprintf(&c->stop, fmt, ap);
            va_end(ap);
        }
    }
    return STOP;
}

/*
 * Records that the text of a failure could not be made for want of memory:
 * the validation then ends with SST_ENOMEM rather than a vaguer message.
 */
static int no_memory(vctx *c) {
    c->sink->text.oom = true;
    return BAD;
}

/*
 * The number of values in @p root (itself, items, members, recursively),
 * counted without recursion; at most @p cap. 0 when out of memory.
 */
static uint64_t count_values(const sst_value *root, uint64_t cap) {
    uint64_t total = 1;
    const sst_value **stack = NULL;
    size_t n = 0, size = 0;
    const sst_value *v = root;
    for (;;) {
        size_t len = sst_is_array(v) ? sst_array_len(v) : sst_object_len(v);
        for (size_t i = 0; i < len && total < cap; i++) {
            const sst_value *x = sst_is_array(v) ? sst_array_get(v, i) : sst_object_value_at(v, i);
            total++;
            if ((sst_is_array(x) && sst_array_len(x) > 0) ||
                (sst_is_object(x) && sst_object_len(x) > 0)) {
                if (n == size) {
                    void *items = stack;
                    if (!sst__grow(&items, &size, n, sizeof *stack, 16)) {
                        sst__free(stack);
                        return 0;
                    }
                    stack = items;
                }
                stack[n++] = x;
            }
        }
        if (n == 0 || total >= cap) {
            break;
        }
        v = stack[--n];
    }
    sst__free(stack);
    return total;
}

/*
 * Called when the work passes the budget. The first time, the budget grows
 * by 64 steps per value of the instance, so that a large value is checked in
 * full while a schema whose cost explodes (work doubling at each level) is
 * still stopped; after that, validation stops. True when it must stop.
 */
static bool over_budget(vctx *c) {
    if (!c->sized) {
        c->sized = true;
        uint64_t values = count_values(c->root, UINT64_MAX / 128);
        if (values == 0) {
            stop(c, SST_ENOMEM, "out of memory");
            return true;
        }
        c->max_steps += 64 * values;
        if (c->steps <= c->max_steps) {
            return false;
        }
    }
    stop(c, SST_ELIMIT,
         "validation stopped after %" PRIu64 " steps: the schema is too costly for this value",
         c->max_steps);
    return true;
}

/* True when the next failure's text would be kept (so it is worth composing). */
static bool wants_text(const vctx *c) {
    return !c->sink->quiet && c->sink->kept < c->sink->keep;
}

static int fail(vctx *c, int kind, unsigned types, const char *fmt, ...) SST_PRINTF(4, 5);
static int fail(vctx *c, int kind, unsigned types, const char *fmt, ...) {
    sink *k = c->sink;
    k->count++;
    if (k->quiet) {
        return BAD;
    }
    if (k->count == 1) {
        k->first_kind = kind;
        k->first_depth = c->depth;
        k->first_types = types;
    }
    if (k->kept < k->keep) {
        put_location(c, &k->text);
        sst__buf_append(&k->text, ": ", 2);
        if (k->kept == 0) {
            k->first_msg = k->text.len;
        }
        va_list ap;
        va_start(ap, fmt);
        buf_vprintf(&k->text, fmt, ap);
        va_end(ap);
        sst__buf_putc(&k->text, '\0');
        k->kept++;
    }
    return BAD;
}

/* Folds a result into *bad; true when evaluation must return now (STOP, or BAD when quiet). */
#define CHECK(c, bad, expr)                                                                        \
    do {                                                                                           \
        int r_ = (expr);                                                                           \
        if (r_ == STOP) {                                                                          \
            return STOP;                                                                           \
        }                                                                                          \
        if (r_ == BAD) {                                                                           \
            (bad) = true;                                                                          \
            if ((c)->sink->quiet) {                                                                \
                return BAD;                                                                        \
            }                                                                                      \
        }                                                                                          \
    } while (0)

static int eval_node(vctx *c, const node *n, const sst_value *v);

static int eval(vctx *c, const node *n, const sst_value *v) {
    if (n->kind == S_TRUE) {
        return OK;
    }
    if (c->frames >= MAX_FRAMES) {
        return stop(c, SST_ELIMIT, "validation nested deeper than %d schemas", MAX_FRAMES);
    }
    if (++c->steps > c->max_steps && over_budget(c)) {
        return STOP;
    }
    c->frames++;
    int r = eval_node(c, n, v);
    c->frames--;
    return r;
}

/* Evaluates @p n against @p v, the member @p key (or item @p index) of the current value. */
static int eval_child(vctx *c, const node *n, const sst_value *v, const sst_value *key,
                      size_t index) {
    if (n->kind == S_TRUE) {
        return OK;
    }
    if (c->depth >= SST__JSON_SCHEMA_MAX_DEPTH) {
        return stop(c, SST_ELIMIT, "the value is nested deeper than %d levels",
                    SST__JSON_SCHEMA_MAX_DEPTH);
    }
    c->segs[c->depth++] = (seg){key, index};
    int r = eval(c, n, v);
    c->depth--;
    return r;
}

/* Evaluates with failures going to @p k. */
static int eval_in(vctx *c, sink *k, const node *n, const sst_value *v) {
    sink *saved = c->sink;
    c->sink = k;
    int r = eval(c, n, v);
    c->sink = saved;
    if (k->text.oom) {
        return stop(c, SST_ENOMEM, "out of memory");
    }
    return r;
}

/* Whether @p v is valid against @p n (OK or BAD), keeping no failures. */
static int quietly(vctx *c, const node *n, const sst_value *v) {
    if (c->sink->quiet) {
        return eval(c, n, v);
    }
    sink q = {.quiet = true};
    return eval_in(c, &q, n, v);
}

/* ---- messages ---- */

/* The JSON Schema type of a value, as messages name it. */
static const char *type_of(const sst_value *v) {
    switch (sst_value_type(v)) {
        case SST_TYPE_INT:
            return "integer";
        case SST_TYPE_DOUBLE:
            return "number";
        default:
            return sst_type_name(sst_value_type(v));
    }
}

static unsigned type_bits(const sst_value *v) {
    switch (sst_value_type(v)) {
        case SST_TYPE_NULL:
            return T_NULL;
        case SST_TYPE_BOOL:
            return T_BOOLEAN;
        case SST_TYPE_INT:
            return T_INTEGER | T_NUMBER;
        case SST_TYPE_DOUBLE: { /* 1.0 is an integer, as the spec says */
            double d = sst_double_value(v);
            return T_NUMBER | (d == floor(d) ? T_INTEGER : 0u);
        }
        case SST_TYPE_STRING:
            return T_STRING;
        case SST_TYPE_ARRAY:
            return T_ARRAY;
        default:
            return T_OBJECT;
    }
}

/* "string", "string or null", "string, integer or null": the types @p order lists. */
static void types_text(sst__buf *b, const uint8_t *order, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (i > 0) {
            buf_puts(b, i + 1 == n ? " or " : ", ");
        }
        buf_puts(b, k_type_names[order[i]]);
    }
    sst__buf_putc(b, '\0');
}

/* The types of @p mask in a fixed order (string, number, integer, boolean, object, array, null). */
static size_t mask_order(unsigned mask, uint8_t order[7]) {
    static const uint8_t canon[] = {5, 4, 6, 1, 2, 3, 0};
    size_t n = 0;
    for (size_t i = 0; i < SST_ARRAY_LEN(canon); i++) {
        if (mask & (1u << canon[i])) {
            order[n++] = canon[i];
        }
    }
    return n;
}

static int fail_type(vctx *c, unsigned mask, const uint8_t *order, size_t n, const sst_value *v) {
    if (!wants_text(c)) {
        return fail(c, F_TYPE, mask, "%s", "");
    }
    sst__buf b;
    sst__buf_init(&b);
    types_text(&b, order, n);
    int r = b.oom ? no_memory(c) : fail(c, F_TYPE, mask, "expected %s, got %s", b.data, type_of(v));
    sst__buf_free(&b);
    return r;
}

/* Fails with "PREFIX JSON[, got VALUE]" where JSON is @p shown as JSON (cut when long). */
static int fail_value(vctx *c, const char *prefix, const sst_value *shown, const sst_value *v) {
    if (!wants_text(c)) {
        return fail(c, F_OTHER, 0, "%s", "");
    }
    char *want = json_text(shown, 120);
    bool scalar = !sst_is_array(v) && !sst_is_object(v);
    char *got = scalar ? json_text(v, 60) : NULL;
    int r = want == NULL || (scalar && got == NULL)
                ? no_memory(c)
                : fail(c, F_OTHER, 0, "%s %s%s%s", prefix, want, scalar ? ", got " : "",
                       scalar ? got : "");
    sst_free(want);
    sst_free(got);
    return r;
}

/* ---- numbers ---- */

static int cmp_int_double(int64_t i, double d) {
    if (d >= 9223372036854775808.0) {
        return -1;
    }
    if (d < -9223372036854775808.0) {
        return 1;
    }
    double t = trunc(d);
    int64_t ti = (int64_t)t;
    if (i != ti) {
        return i < ti ? -1 : 1;
    }
    return d > t ? -1 : d < t ? 1 : 0;
}

/* Compares two numbers exactly (an int64 and a double included). */
static int num_cmp(const sst_value *a, const sst_value *b) {
    if (sst_is_int(a) && sst_is_int(b)) {
        int64_t x = sst_int_value(a), y = sst_int_value(b);
        return x < y ? -1 : x > y ? 1 : 0;
    }
    if (sst_is_int(a)) {
        return cmp_int_double(sst_int_value(a), sst_double_value(b));
    }
    if (sst_is_int(b)) {
        return -cmp_int_double(sst_int_value(b), sst_double_value(a));
    }
    double x = sst_double_value(a), y = sst_double_value(b);
    return x < y ? -1 : x > y ? 1 : 0;
}

/*
 * Whether @p v is a multiple of @p m (> 0). Integers are exact; otherwise the
 * quotient must be within a few units in the last place of a whole number, so
 * that 0.0075 is a multiple of 0.0001 although neither is exact in binary.
 */
static bool is_multiple(const sst_value *v, const sst_value *m) {
    if (sst_is_int(v) && sst_is_int(m)) {
        return sst_int_value(v) % sst_int_value(m) == 0;
    }
    double x = sst_number_value(v), d = sst_number_value(m);
    double q = x / d;
    if (!isfinite(q)) { /* a huge quotient: fmod is exact where the quotient overflows */
        return fmod(x, d) == 0;
    }
    return fabs(q - round(q)) <= 4 * 2.220446049250313e-16 * fmax(1.0, fabs(q));
}

static int check_number(vctx *c, const node *n, const sst_value *v) {
    bool bad = false;
    static const char *const ops[] = {">=", ">", "<=", "<"};
    const sst_value *bounds[] = {n->minimum, n->ex_minimum, n->maximum, n->ex_maximum};
    for (size_t i = 0; i < 4; i++) {
        if (bounds[i] == NULL) {
            continue;
        }
        int cmp = num_cmp(v, bounds[i]);
        bool ok = i == 0 ? cmp >= 0 : i == 1 ? cmp > 0 : i == 2 ? cmp <= 0 : cmp < 0;
        if (!ok) {
            char a[SST__DOUBLE_BUF], b[SST__DOUBLE_BUF];
            CHECK(c, bad,
                  fail(c, F_OTHER, 0, "must be %s %s, got %s", ops[i], num_text(bounds[i], a),
                       num_text(v, b)));
        }
    }
    if (n->multiple_of != NULL && !is_multiple(v, n->multiple_of)) {
        char a[SST__DOUBLE_BUF], b[SST__DOUBLE_BUF];
        CHECK(c, bad,
              fail(c, F_OTHER, 0, "must be a multiple of %s, got %s", num_text(n->multiple_of, a),
                   num_text(v, b)));
    }
    return bad ? BAD : OK;
}

/* ---- strings ---- */

/* 1 when @p re matches somewhere in @p s, 0 when not, -1 when validation stopped. */
static int search(vctx *c, const jregex *re, const char *s, size_t len) {
    int r = rx_search(re, s, len, &c->rx, &c->steps, c->max_steps);
    if (r == -1 && !over_budget(c)) { /* the budget grew with the value's size: once more */
        r = rx_search(re, s, len, &c->rx, &c->steps, c->max_steps);
    }
    if (r == -2) {
        stop(c, SST_ENOMEM, "out of memory");
        return -1;
    }
    if (r == -1) {
        over_budget(c);
        return -1;
    }
    return r;
}

/* The text of a pattern for a message, cut when long (new, sst__free). */
static char *pattern_text(const sst_value *p) {
    size_t len = sst_string_len(p);
    size_t cut = len <= 100 ? len : 97;
    while (cut < len && cut > 0 && ((unsigned char)sst_string_cstr(p)[cut] & 0xC0) == 0x80) {
        cut--;
    }
    char *s = sst__malloc(cut + 4);
    if (s != NULL) {
        memcpy(s, sst_string_cstr(p), cut);
        memcpy(s + cut, cut < len ? "..." : "", cut < len ? 4 : 1);
    }
    return s;
}

static int check_string(vctx *c, const node *n, const sst_value *v) {
    bool bad = false;
    const char *s = sst_string_cstr(v);
    size_t len = sst_string_len(v);
    if (n->min_length > 0 || n->max_length != SIZE_MAX) {
        size_t chars = utf8_count(s, len);
        if (chars < n->min_length) {
            CHECK(c, bad,
                  fail(c, F_OTHER, 0, "expected at least %zu characters, got %zu", n->min_length,
                       chars));
        }
        if (chars > n->max_length) {
            CHECK(c, bad,
                  fail(c, F_OTHER, 0, "expected at most %zu characters, got %zu", n->max_length,
                       chars));
        }
    }
    if (n->pattern != NULL) {
        int r = search(c, n->pattern, s, len);
        if (r < 0) {
            return STOP;
        }
        if (r == 0) {
            bool wants = wants_text(c);
            char *p = wants ? pattern_text(n->pattern_src) : NULL;
            int f = wants && p == NULL ? no_memory(c)
                                       : fail(c, F_OTHER, 0, "does not match the pattern '%s'",
                                              p != NULL ? p : "");
            sst__free(p);
            CHECK(c, bad, f);
        }
    }
    return bad ? BAD : OK;
}

/* ---- arrays ---- */

typedef struct hashed {
    uint64_t hash;
    size_t index;
} hashed;

static int cmp_hashed(const void *a, const void *b) {
    const hashed *x = a, *y = b;
    if (x->hash != y->hash) {
        return x->hash < y->hash ? -1 : 1;
    }
    return x->index < y->index ? -1 : x->index > y->index ? 1 : 0;
}

/*
 * Finds two equal items of @p a (the pair with the smallest second index):
 * 1 with *i < *j, 0 when all differ, -1 when validation stopped. Items are
 * sorted by hash, so a large array costs n log n, not n^2.
 */
static int find_duplicate(vctx *c, const sst_value *a, size_t *i, size_t *j) {
    size_t len = sst_array_len(a);
    c->steps += len;
    if (len <= 16) {
        for (size_t y = 1; y < len; y++) {
            for (size_t x = 0; x < y; x++) {
                if (sst_value_equal(sst_array_get(a, x), sst_array_get(a, y))) {
                    *i = x;
                    *j = y;
                    return 1;
                }
            }
        }
        return 0;
    }
    hashed *h = sst__malloc(len * sizeof *h);
    if (h == NULL) {
        stop(c, SST_ENOMEM, "out of memory");
        return -1;
    }
    sst_array_iter it;
    sst_array_iter_init(&it, a);
    for (size_t k = 0; k < len; k++) {
        h[k] = (hashed){sst_value_hash(sst_array_iter_next(&it)), k};
    }
    qsort(h, len, sizeof *h, cmp_hashed);
    bool found = false;
    for (size_t start = 0; start < len;) {
        size_t end = start + 1;
        while (end < len && h[end].hash == h[start].hash) {
            end++;
        }
        for (size_t y = start + 1; y < end; y++) { /* a run of equal hashes: compare for real */
            for (size_t x = start; x < y; x++) {
                if ((!found || h[y].index < *j) &&
                    sst_value_equal(sst_array_get(a, h[x].index), sst_array_get(a, h[y].index))) {
                    *i = h[x].index;
                    *j = h[y].index;
                    found = true;
                    break;
                }
            }
        }
        start = end;
    }
    sst__free(h);
    return found ? 1 : 0;
}

static int check_array(vctx *c, const node *n, const sst_value *v) {
    bool bad = false;
    size_t len = sst_array_len(v);
    if (len < n->min_items) {
        CHECK(c, bad,
              fail(c, F_OTHER, 0, "expected at least %zu items, got %zu", n->min_items, len));
    }
    if (len > n->max_items) {
        CHECK(c, bad,
              fail(c, F_OTHER, 0, "expected at most %zu items, got %zu", n->max_items, len));
    }
    if (n->unique_items && len > 1) {
        size_t i = 0, j = 0;
        int r = find_duplicate(c, v, &i, &j);
        if (r < 0) {
            return STOP;
        }
        if (r > 0) {
            CHECK(c, bad,
                  fail(c, F_OTHER, 0, "expected unique items, but items %zu and %zu are equal", i,
                       j));
        }
    }
    if (n->n_prefix > 0 || n->items != NULL) {
        sst_array_iter it;
        sst_array_iter_init(&it, v);
        const sst_value *item;
        for (size_t i = 0; (item = sst_array_iter_next(&it)) != NULL; i++) {
            const node *s = i < n->n_prefix ? n->prefix[i] : n->items;
            if (s == NULL) {
                break;
            }
            CHECK(c, bad, eval_child(c, s, item, NULL, i));
        }
    }
    if (n->contains != NULL) {
        size_t matches = 0;
        sst_array_iter it;
        sst_array_iter_init(&it, v);
        const sst_value *item;
        sink q = {.quiet = true};
        for (size_t i = 0; (item = sst_array_iter_next(&it)) != NULL; i++) {
            if (n->max_contains == SIZE_MAX && matches >= n->min_contains) {
                break; /* the answer is known */
            }
            sink *saved = c->sink;
            c->sink = &q;
            int r = eval_child(c, n->contains, item, NULL, i);
            c->sink = saved;
            if (r == STOP) {
                return STOP;
            }
            matches += r == OK;
        }
        if (matches < n->min_contains) {
            if (n->has_min_contains) {
                CHECK(c, bad,
                      fail(c, F_OTHER, 0,
                           "expected at least %zu items matching 'contains', got %zu",
                           n->min_contains, matches));
            } else {
                CHECK(c, bad, fail(c, F_OTHER, 0, "no item matches the 'contains' schema"));
            }
        }
        if (matches > n->max_contains) {
            CHECK(c, bad,
                  fail(c, F_OTHER, 0, "expected at most %zu items matching 'contains', got %zu",
                       n->max_contains, matches));
        }
    }
    return bad ? BAD : OK;
}

/* ---- objects ---- */

static bool has_key(const sst_value *o, const sst_value *key) {
    return sst_object_getn(o, sst_string_cstr(key), sst_string_len(key)) != NULL;
}

/* Checks a property name against "propertyNames". */
static int check_name(vctx *c, const node *pn, const sst_value *key) {
    if (!wants_text(c)) {
        int r = quietly(c, pn, key);
        return r == BAD ? fail(c, F_OTHER, 0, "%s", "") : r;
    }
    sink e = {.keep = 1};
    int r = eval_in(c, &e, pn, key);
    if (r == BAD) {
        const char *why = e.kept > 0 ? e.text.data + e.first_msg : "it does not match";
        r = fail(c, F_OTHER, 0, "invalid property name '%s': %s", sst_string_cstr(key), why);
    }
    sst__buf_free(&e.text);
    return r;
}

static int check_object(vctx *c, const node *n, const sst_value *v) {
    bool bad = false;
    size_t count = sst_object_len(v);
    if (count < n->min_props) {
        CHECK(
            c, bad,
            fail(c, F_OTHER, 0, "expected at least %zu properties, got %zu", n->min_props, count));
    }
    if (count > n->max_props) {
        CHECK(c, bad,
              fail(c, F_OTHER, 0, "expected at most %zu properties, got %zu", n->max_props, count));
    }
    for (size_t i = 0; i < sst_array_len(n->required); i++) {
        const sst_value *key = sst_array_get(n->required, i);
        if (!has_key(v, key)) {
            CHECK(c, bad,
                  fail(c, F_OTHER, 0, "missing required property '%s'", sst_string_cstr(key)));
        }
    }
    for (size_t i = 0; i < n->n_deps; i++) {
        const dependent *d = &n->deps[i];
        for (size_t j = 0;
             d->required != NULL && has_key(v, d->key) && j < sst_array_len(d->required); j++) {
            const sst_value *need = sst_array_get(d->required, j);
            if (!has_key(v, need)) {
                CHECK(c, bad,
                      fail(c, F_OTHER, 0, "property '%s' is required when '%s' is present",
                           sst_string_cstr(need), sst_string_cstr(d->key)));
            }
        }
    }
    for (size_t i = 0; i < n->n_props; i++) {
        const sst_value *key = sst_object_key_at(n->properties, i);
        const sst_value *member = sst_object_getn(v, sst_string_cstr(key), sst_string_len(key));
        if (member != NULL) {
            CHECK(c, bad, eval_child(c, n->prop_nodes[i], member, key, 0));
        }
    }
    if (n->n_patterns > 0 || n->additional != NULL) {
        for (size_t i = 0; i < count; i++) {
            const sst_value *key = sst_object_key_at(v, i);
            const sst_value *member = sst_object_value_at(v, i);
            bool matched = n->properties != NULL && has_key(n->properties, key);
            for (size_t j = 0; j < n->n_patterns; j++) {
                int r = search(c, n->patterns[j].re, sst_string_cstr(key), sst_string_len(key));
                if (r < 0) {
                    return STOP;
                }
                if (r > 0) {
                    matched = true;
                    CHECK(c, bad, eval_child(c, n->patterns[j].schema, member, key, 0));
                }
            }
            if (matched || n->additional == NULL) {
                continue;
            }
            if (n->additional->kind == S_FALSE) {
                CHECK(c, bad,
                      fail(c, F_OTHER, 0, "property '%s' is not allowed", sst_string_cstr(key)));
            } else {
                CHECK(c, bad, eval_child(c, n->additional, member, key, 0));
            }
        }
    }
    if (n->property_names != NULL) {
        for (size_t i = 0; i < count; i++) {
            CHECK(c, bad, check_name(c, n->property_names, sst_object_key_at(v, i)));
        }
    }
    for (size_t i = 0; i < n->n_deps; i++) {
        if (n->deps[i].schema != NULL && has_key(v, n->deps[i].key)) {
            CHECK(c, bad, eval(c, n->deps[i].schema, v));
        }
    }
    return bad ? BAD : OK;
}

/* ---- anyOf, oneOf ---- */

/*
 * The failure of an anyOf/oneOf that no branch matched. A model fixes its
 * answer better when told what the nearest branch wants: when every branch
 * only wanted another type, the types are merged ("expected string or null,
 * got integer"); otherwise the closest branch is named with its first
 * failure: the one with the fewest failures among those whose type the value
 * has (a branch that wants another type altogether is the farthest, however
 * few its failures). Those details come from evaluating the branches again,
 * which happens only at the top level of a report (branch sinks do not
 * explain), so the cost stays at most twice that of a plain check.
 */
static int explain_none(vctx *c, const char *kw, node *const *branches, size_t count,
                        const sst_value *v) {
    if (!wants_text(c) || !c->sink->explain) {
        return wants_text(c) ? fail(c, F_OTHER, 0, "does not match any schema in %s", kw)
                             : fail(c, F_OTHER, 0, "%s", "");
    }
    size_t best = 0, best_count = SIZE_MAX, best_rank = SIZE_MAX;
    unsigned types = 0;
    bool all_type = true;
    sst__buf best_text;
    sst__buf_init(&best_text);
    for (size_t i = 0; i < count; i++) {
        sink e = {.keep = 1};
        int r = eval_in(c, &e, branches[i], v);
        if (r == STOP) {
            sst__buf_free(&e.text);
            sst__buf_free(&best_text);
            return STOP;
        }
        bool wrong_type = e.first_kind == F_TYPE && e.first_depth == c->depth;
        if (e.count == 1 && wrong_type) {
            types |= e.first_types;
        } else {
            all_type = false;
        }
        size_t rank = wrong_type ? SIZE_MAX - 1 : e.count;
        if (rank < best_rank && e.kept > 0) {
            best = i;
            best_rank = rank;
            best_count = e.count;
            sst__buf_free(&best_text);
            best_text = e.text;
        } else {
            sst__buf_free(&e.text);
        }
    }
    int r;
    if (all_type && types != 0) {
        uint8_t order[7];
        r = fail_type(c, types, order, mask_order(types, order), v);
    } else if (best_text.oom) {
        r = no_memory(c);
    } else if (best_count == SIZE_MAX) {
        r = fail(c, F_OTHER, 0, "does not match any schema in %s", kw);
    } else {
        char more[48] = "";
        if (best_count > 1) {
            snprintf(more, sizeof more, " (and %zu more there)", best_count - 1);
        }
        r = fail(c, F_OTHER, 0, "does not match any schema in %s; the closest, %s/%zu, fails: %s%s",
                 kw, kw, best, best_text.data, more);
    }
    sst__buf_free(&best_text);
    return r;
}

static int check_any_of(vctx *c, const node *n, const sst_value *v) {
    for (size_t i = 0; i < n->n_any_of; i++) {
        int r = quietly(c, n->any_of[i], v);
        if (r != BAD) {
            return r;
        }
    }
    return explain_none(c, "anyOf", n->any_of, n->n_any_of, v);
}

static int check_one_of(vctx *c, const node *n, const sst_value *v) {
    size_t matched = 0, first = 0, second = 0;
    for (size_t i = 0; i < n->n_one_of && matched < 2; i++) {
        int r = quietly(c, n->one_of[i], v);
        if (r == STOP) {
            return STOP;
        }
        if (r == OK) {
            *(matched == 0 ? &first : &second) = i;
            matched++;
        }
    }
    if (matched == 1) {
        return OK;
    }
    if (matched == 0) {
        return explain_none(c, "oneOf", n->one_of, n->n_one_of, v);
    }
    return fail(c, F_OTHER, 0,
                "matches more than one schema in oneOf (oneOf/%zu and oneOf/%zu), but must match "
                "exactly one",
                first, second);
}

static bool in_enum(const sst_value *e, const sst_value *v) {
    sst_array_iter it;
    sst_array_iter_init(&it, e);
    const sst_value *x;
    while ((x = sst_array_iter_next(&it)) != NULL) {
        if (sst_value_equal(x, v)) {
            return true;
        }
    }
    return false;
}

static int eval_node(vctx *c, const node *n, const sst_value *v) {
    if (n->kind == S_FALSE) {
        return fail(c, F_OTHER, 0, "no value is allowed here (the schema is false)");
    }
    if (n->type_mask != 0 && (n->type_mask & type_bits(v)) == 0) {
        /* The other keywords would mostly repeat this; the type comes first. */
        return fail_type(c, n->type_mask, n->types, n->n_types, v);
    }
    bool bad = false;
    if (n->const_ != NULL && !sst_value_equal(n->const_, v)) {
        CHECK(c, bad, fail_value(c, "must be", n->const_, v));
    }
    if (n->enum_ != NULL && !in_enum(n->enum_, v)) {
        c->steps += sst_array_len(n->enum_);
        CHECK(c, bad,
              fail_value(c, sst_array_len(n->enum_) == 1 ? "must be" : "must be one of",
                         sst_array_len(n->enum_) == 1 ? sst_array_get(n->enum_, 0) : n->enum_, v));
    }
    switch (sst_value_type(v)) {
        case SST_TYPE_INT:
        case SST_TYPE_DOUBLE:
            CHECK(c, bad, check_number(c, n, v));
            break;
        case SST_TYPE_STRING:
            CHECK(c, bad, check_string(c, n, v));
            break;
        case SST_TYPE_ARRAY:
            CHECK(c, bad, check_array(c, n, v));
            break;
        case SST_TYPE_OBJECT:
            CHECK(c, bad, check_object(c, n, v));
            break;
        default:
            break;
    }
    if (n->ref != NULL) {
        CHECK(c, bad, eval(c, n->ref, v));
    }
    for (size_t i = 0; i < n->n_all_of; i++) {
        CHECK(c, bad, eval(c, n->all_of[i], v));
    }
    if (n->n_any_of > 0) {
        CHECK(c, bad, check_any_of(c, n, v));
    }
    if (n->n_one_of > 0) {
        CHECK(c, bad, check_one_of(c, n, v));
    }
    if (n->not_ != NULL) {
        int r = quietly(c, n->not_, v);
        if (r == STOP) {
            return STOP;
        }
        if (r == OK) {
            CHECK(c, bad, fail(c, F_OTHER, 0, "must not match the schema in 'not'"));
        }
    }
    if (n->if_ != NULL && (n->then_ != NULL || n->else_ != NULL)) {
        int r = quietly(c, n->if_, v);
        if (r == STOP) {
            return STOP;
        }
        const node *branch = r == OK ? n->then_ : n->else_;
        if (branch != NULL) {
            CHECK(c, bad, eval(c, branch, v));
        }
    }
    return bad ? BAD : OK;
}

/* ---- the entry points ---- */

/*
 * Joins the kept failures of @p k with "; ", adding "; and N more" for those
 * not shown. With @p limit > 0, stops before a failure that would not fit in
 * @p limit bytes (the first is always shown, cut later if need be).
 */
static void compose(const sink *k, size_t limit, sst__buf *out) {
    const char *p = k->text.data;
    size_t shown = 0;
    for (size_t i = 0; i < k->kept; i++) {
        size_t n = strlen(p);
        if (limit > 0 && shown > 0 && out->len + 2 + n + 24 > limit) {
            break;
        }
        if (shown > 0) {
            sst__buf_append(out, "; ", 2);
        }
        sst__buf_append(out, p, n);
        shown++;
        p += n + 1;
    }
    if (k->count > shown) {
        sst__buf_printf(out, "; and %zu more", k->count - shown);
    }
    sst__buf_putc(out, '\0');
}

sst_code sst__json_schema_validate_report(const sst__json_schema *s, const sst_value *instance,
                                          const char *where, size_t max_failures, char **report,
                                          sst_error *err) {
    SST__ERR_LOCAL(err);
    if (report != NULL) {
        *report = NULL;
    }
    if (s == NULL || instance == NULL) {
        return sst__error(err, SST_EINVAL, "json schema: no %s to validate",
                          s == NULL ? "schema" : "value");
    }
    vctx c;
    memset(&c, 0, sizeof c);
    c.s = s;
    c.where = where;
    sink top = {.keep = max_failures > 0 ? max_failures : SST__JSON_SCHEMA_MAX_FAILURES,
                .explain = true};
    c.sink = &top;
    c.root = instance;
    c.max_steps = SST__JSON_SCHEMA_MAX_STEPS;
    sst__buf_init(&c.stop);
    int r = eval(&c, s->root, instance);
    sst_code code = SST_OK;
    sst__buf text;
    sst__buf_init(&text);
    if (r == STOP || top.text.oom) {
        code = top.text.oom || c.stop_code == SST_ENOMEM || c.stop.oom ? SST_ENOMEM : c.stop_code;
        if (code == SST_ENOMEM) {
            sst__enomem(err);
        } else {
            sst__buf_append(&text, c.stop.data, c.stop.len);
            sst__buf_putc(&text, '\0');
            sst__error(err, code, "%s", c.stop.data);
        }
    } else if (r == BAD) {
        code = SST_EINVAL;
        sst__buf msg;
        sst__buf_init(&msg);
        compose(&top, SST_ERROR_MSG_MAX - 1, &msg);
        if (msg.oom) {
            code = sst__enomem(err);
        } else {
            sst__error(err, code, "%s", msg.data);
        }
        sst__buf_free(&msg);
        if (report != NULL && code == SST_EINVAL) {
            compose(&top, 0, &text);
        }
    }
    if (report != NULL && code != SST_OK && code != SST_ENOMEM) {
        *report = sst__buf_detach(&text, NULL);
        if (*report == NULL) {
            code = sst__enomem(err);
        }
    }
    sst__buf_free(&text);
    sst__buf_free(&top.text);
    sst__buf_free(&c.stop);
    rx_scratch_free(&c.rx);
    return code;
}

sst_code sst__json_schema_validate(const sst__json_schema *s, const sst_value *instance,
                                   sst_error *err) {
    return sst__json_schema_validate_report(s, instance, NULL, 0, NULL, err);
}
