/* SPDX-License-Identifier: MIT */
/*
 * The JSON writer: compact, pretty (two-space indent) and canonical
 * (compact with keys sorted by their UTF-8 bytes, which is code point order).
 * Strings are already valid UTF-8, so only '"', '\\' and control characters
 * need escapes.
 */
#include <stdio.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <string.h>

#include "superstep/json.h"
#include "values_int.h"
#include "values_num.h"

#define MAX_WRITE_DEPTH 4096

typedef struct writer {
    sst__buf b;
    unsigned flags;
    size_t depth;
    bool too_deep;
} writer;

static inline bool needs_escape(unsigned char c) {
    return c < 0x20 || c == '"' || c == '\\';
}

/* The first byte at or after @p p that needs an escape, or @p end. */
static inline const unsigned char *next_escape(const unsigned char *p, const unsigned char *end) {
#ifdef __SSE2__
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    const __m128i ctrl_max = _mm_set1_epi8(0x1F);
    while (end - p >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i ctrl = _mm_cmpeq_epi8(_mm_max_epu8(x, ctrl_max), ctrl_max); /* x <= 0x1F */
        __m128i m = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)), ctrl);
        unsigned mask = (unsigned)_mm_movemask_epi8(m);
        if (mask != 0) {
            return p + __builtin_ctz(mask);
        }
        p += 16;
    }
#endif
    while (p < end && !needs_escape(*p)) {
        p++;
    }
    return p;
}

static void write_string(sst__buf *b, const char *s, size_t len) {
    static const char hex[] = "0123456789abcdef";
    if (!sst__buf_reserve(b, len + 2)) {
        return;
    }
    b->data[b->len++] = '"';
    const unsigned char *p = (const unsigned char *)s;
    const unsigned char *end = p + len;
    for (;;) {
        const unsigned char *run = p;
        p = next_escape(p, end);
        sst__buf_append(b, run, (size_t)(p - run));
        if (p >= end) {
            break;
        }
        char esc[6] = {'\\', 0, 0, 0, 0, 0};
        size_t n = 2;
        switch (*p) {
            case '"':
                esc[1] = '"';
                break;
            case '\\':
                esc[1] = '\\';
                break;
            case '\b':
                esc[1] = 'b';
                break;
            case '\f':
                esc[1] = 'f';
                break;
            case '\n':
                esc[1] = 'n';
                break;
            case '\r':
                esc[1] = 'r';
                break;
            case '\t':
                esc[1] = 't';
                break;
            default:
                esc[1] = 'u';
                esc[2] = '0';
                esc[3] = '0';
                esc[4] = hex[*p >> 4];
                esc[5] = hex[*p & 15];
                n = 6;
                break;
        }
        sst__buf_append(b, esc, n);
        p++;
    }
    sst__buf_putc(b, '"');
}

static void newline(writer *w) {
    sst__buf_putc(&w->b, '\n');
    for (size_t i = 0; i < w->depth; i++) {
        sst__buf_append(&w->b, "  ", 2);
    }
}

static int member_cmp(const void *pa, const void *pb) {
    const sst__string *a = sst__str((*(const sst__member *const *)pa)->key);
    const sst__string *b = sst__str((*(const sst__member *const *)pb)->key);
    size_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->data, b->data, n);
    if (c != 0) {
        return c;
    }
    return a->len < b->len ? -1 : a->len > b->len;
}

static void write_value(writer *w, const sst_value *v);

static void write_array(writer *w, const sst_value *v) {
    bool pretty = (w->flags & SST_JSON_PRETTY) != 0;
    sst__buf_putc(&w->b, '[');
    if (sst_array_len(v) == 0) {
        sst__buf_putc(&w->b, ']');
        return;
    }
    w->depth++;
    sst_array_iter it;
    sst_array_iter_init(&it, v);
    const sst_value *e;
    bool first = true;
    while ((e = sst_array_iter_next(&it)) != NULL && !w->too_deep && !w->b.oom) {
        if (!first) {
            sst__buf_putc(&w->b, ',');
        }
        first = false;
        if (pretty) {
            newline(w);
        }
        write_value(w, e);
    }
    w->depth--;
    if (pretty) {
        newline(w);
    }
    sst__buf_putc(&w->b, ']');
}

static void write_object(writer *w, const sst_value *v) {
    const sst__object *o = (const sst__object *)v;
    bool canonical = (w->flags & SST_JSON_CANONICAL) != 0;
    bool pretty = (w->flags & SST_JSON_PRETTY) != 0;
    sst__buf_putc(&w->b, '{');
    if (o->count == 0) {
        sst__buf_putc(&w->b, '}');
        return;
    }
    const sst__member **order = NULL;
    if (canonical && o->count > 1) {
        order = sst__malloc(o->count * sizeof *order);
        if (order == NULL) {
            w->b.oom = true;
            return;
        }
        for (size_t i = 0; i < o->count; i++) {
            order[i] = &o->members[i];
        }
        qsort(order, o->count, sizeof *order, member_cmp);
    }
    w->depth++;
    for (size_t i = 0; i < o->count && !w->too_deep && !w->b.oom; i++) {
        const sst__member *m = order != NULL ? order[i] : &o->members[i];
        if (i > 0) {
            sst__buf_putc(&w->b, ',');
        }
        if (pretty) {
            newline(w);
        }
        write_string(&w->b, sst__str(m->key)->data, sst__str(m->key)->len);
        sst__buf_append(&w->b, pretty ? ": " : ":", pretty ? 2 : 1);
        write_value(w, m->val);
    }
    w->depth--;
    sst__free(order);
    if (pretty) {
        newline(w);
    }
    sst__buf_putc(&w->b, '}');
}

static void write_value(writer *w, const sst_value *v) {
    switch (sst_value_type(v)) {
        case SST_TYPE_NULL:
            sst__buf_append(&w->b, "null", 4);
            break;
        case SST_TYPE_BOOL:
            if (sst_bool_value(v)) {
                sst__buf_append(&w->b, "true", 4);
            } else {
                sst__buf_append(&w->b, "false", 5);
            }
            break;
        case SST_TYPE_INT: {
            char tmp[SST__INT_BUF];
            sst__buf_append(&w->b, tmp, sst__fmt_int(sst_int_value(v), tmp));
            break;
        }
        case SST_TYPE_DOUBLE: {
            char tmp[SST__DOUBLE_BUF];
            sst__buf_append(&w->b, tmp, sst__fmt_double(sst_double_value(v), tmp));
            break;
        }
        case SST_TYPE_STRING:
            write_string(&w->b, sst__str(v)->data, sst__str(v)->len);
            break;
        case SST_TYPE_ARRAY:
        case SST_TYPE_OBJECT:
            if (w->depth >= MAX_WRITE_DEPTH) {
                w->too_deep = true;
                return;
            }
            if (v->type == SST_TYPE_ARRAY) {
                write_array(w, v);
            } else {
                write_object(w, v);
            }
            break;
    }
}

char *sst_json_write(const sst_value *v, unsigned flags, size_t *len_out, sst_error *err) {
    if (v == NULL) {
        sst__error(err, SST_EINVAL, "JSON write: NULL value");
        return NULL;
    }
    writer w;
    sst__buf_init(&w.b);
    w.flags = flags;
    w.depth = 0;
    w.too_deep = false;
    write_value(&w, v);
    if (w.too_deep) {
        sst__buf_free(&w.b);
        sst__error(err, SST_ELIMIT, "JSON write: value nested deeper than %d levels",
                   MAX_WRITE_DEPTH);
        return NULL;
    }
    char *out = sst__buf_detach(&w.b, len_out);
    if (out == NULL) {
        sst__enomem(err);
    }
    return out;
}
