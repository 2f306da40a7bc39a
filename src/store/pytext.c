/* SPDX-License-Identifier: MIT */
/*
 * The texts Python makes of JSON values, as LangGraph embeds them: str() of
 * a scalar and json.dumps(value, sort_keys=True, ensure_ascii=False) of a
 * container (", " and ": " separators, keys sorted by code point, floats as
 * repr() prints them). Equal texts give equal vectors, so these must match
 * Python's byte for byte.
 */
#include <stdio.h>
#include <string.h>

#include "store_int.h"
#include "values/values_num.h"

/*
 * The shortest decimal digits that read back to @p d (> 0, finite) and the
 * decimal exponent of the first: d = 0.D * 10^(*exp10 + 1). printf rounds
 * correctly, so the first precision that reads back is the shortest and
 * the closest, as Python's repr picks.
 */
static size_t shortest_digits(double d, char digits[20], int *exp10) {
    char tmp[48];
    for (int prec = 1; prec <= 17; prec++) {
        int n = snprintf(tmp, sizeof tmp, "%.*e", prec - 1, d);
        if (n <= 0 || (size_t)n >= sizeof tmp) {
            break;
        }
        if (prec < 17 && sst__strtod_c(tmp, NULL) != d) {
            continue;
        }
        size_t nd = 0;
        const char *p = tmp;
        for (; *p != '\0' && *p != 'e' && *p != 'E'; p++) {
            if (*p >= '0' && *p <= '9' && nd < 19) {
                digits[nd++] = *p;
            }
        }
        *exp10 = (*p != '\0') ? (int)sst__strtod_c(p + 1, NULL) : 0;
        while (nd > 1 && digits[nd - 1] == '0') {
            nd--;
        }
        digits[nd] = '\0';
        return nd;
    }
    digits[0] = '0';
    digits[1] = '\0';
    *exp10 = 0;
    return 1;
}

void sst__py_float(sst__buf *b, double d) {
    if (d < 0 || (d == 0 && 1 / d < 0)) {
        sst__buf_putc(b, '-');
        d = -d;
    }
    if (d == 0) {
        sst__buf_append(b, "0.0", 3);
        return;
    }
    char digits[20];
    int e;
    size_t nd = shortest_digits(d, digits, &e);
    int decpt = e + 1; /* digits before the decimal point */
    if (decpt <= -4 || decpt > 16) {
        sst__buf_putc(b, digits[0]);
        if (nd > 1) {
            sst__buf_putc(b, '.');
            sst__buf_append(b, digits + 1, nd - 1);
        }
        sst__buf_printf(b, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
    } else if (decpt <= 0) {
        sst__buf_append(b, "0.", 2);
        for (int i = 0; i < -decpt; i++) {
            sst__buf_putc(b, '0');
        }
        sst__buf_append(b, digits, nd);
    } else if ((size_t)decpt >= nd) {
        sst__buf_append(b, digits, nd);
        for (size_t i = nd; i < (size_t)decpt; i++) {
            sst__buf_putc(b, '0');
        }
        sst__buf_append(b, ".0", 2);
    } else {
        sst__buf_append(b, digits, (size_t)decpt);
        sst__buf_putc(b, '.');
        sst__buf_append(b, digits + decpt, nd - (size_t)decpt);
    }
}

void sst__py_str(sst__buf *b, const sst_value *v) {
    switch (sst_value_type(v)) {
        case SST_TYPE_STRING:
            sst__buf_append(b, sst_string_cstr(v), sst_string_len(v));
            break;
        case SST_TYPE_BOOL:
            sst__buf_printf(b, "%s", sst_bool_value(v) ? "True" : "False");
            break;
        case SST_TYPE_INT:
            sst__buf_printf(b, "%lld", (long long)sst_int_value(v));
            break;
        case SST_TYPE_DOUBLE:
            sst__py_float(b, sst_double_value(v));
            break;
        default:
            sst__py_json(b, v);
            break;
    }
}

/* A JSON string as Python's encoder writes it with ensure_ascii=False. */
static void py_json_string(sst__buf *b, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    sst__buf_putc(b, '"');
    size_t run = 0; /* start of the bytes not yet written */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') {
            continue;
        }
        sst__buf_append(b, s + run, i - run);
        run = i + 1;
        const char *esc = c == '"'    ? "\\\""
                          : c == '\\' ? "\\\\"
                          : c == '\n' ? "\\n"
                          : c == '\r' ? "\\r"
                          : c == '\t' ? "\\t"
                          : c == '\b' ? "\\b"
                          : c == '\f' ? "\\f"
                                      : NULL;
        if (esc != NULL) {
            sst__buf_append(b, esc, 2);
        } else {
            char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            sst__buf_append(b, u, 6);
        }
    }
    sst__buf_append(b, s + run, n - run);
    sst__buf_putc(b, '"');
}

/* A member for sorting: its key's bytes and its index. */
typedef struct member {
    const char *key;
    size_t len, index;
} member;

/* Byte order of two keys (Python sorts str by code point: the same for UTF-8). */
static int member_cmp(const void *pa, const void *pb) {
    const member *a = pa, *b = pb;
    int c = memcmp(a->key, b->key, a->len < b->len ? a->len : b->len);
    return c != 0 ? c : (a->len > b->len) - (a->len < b->len);
}

/* The members of @p o sorted by key (keys are unique: the order is total). */
static member *sorted_members(const sst_value *o, size_t n) {
    member *m = sst__malloc((n > 0 ? n : 1) * sizeof *m);
    if (m == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const sst_value *k = sst_object_key_at(o, i);
        m[i] = (member){sst_string_cstr(k), sst_string_len(k), i};
    }
    qsort(m, n, sizeof *m, member_cmp);
    return m;
}

static void py_json_object(sst__buf *b, const sst_value *v) {
    size_t n = sst_object_len(v);
    member *m = sorted_members(v, n);
    if (m == NULL) {
        b->oom = true;
        return;
    }
    sst__buf_putc(b, '{');
    for (size_t i = 0; i < n && !b->oom; i++) {
        if (i > 0) {
            sst__buf_append(b, ", ", 2);
        }
        py_json_string(b, m[i].key, m[i].len);
        sst__buf_append(b, ": ", 2);
        sst__py_json(b, sst_object_value_at(v, m[i].index));
    }
    sst__buf_putc(b, '}');
    sst__free(m);
}

void sst__py_json(sst__buf *b, const sst_value *v) {
    switch (sst_value_type(v)) {
        case SST_TYPE_NULL:
            sst__buf_append(b, "null", 4);
            break;
        case SST_TYPE_BOOL:
            sst__buf_printf(b, "%s", sst_bool_value(v) ? "true" : "false");
            break;
        case SST_TYPE_STRING:
            py_json_string(b, sst_string_cstr(v), sst_string_len(v));
            break;
        case SST_TYPE_ARRAY: {
            sst__buf_putc(b, '[');
            sst_array_iter it;
            sst_array_iter_init(&it, v);
            size_t i = 0;
            for (const sst_value *e; (e = sst_array_iter_next(&it)) != NULL && !b->oom; i++) {
                if (i > 0) {
                    sst__buf_append(b, ", ", 2);
                }
                sst__py_json(b, e);
            }
            sst__buf_putc(b, ']');
            break;
        }
        case SST_TYPE_OBJECT:
            py_json_object(b, v);
            break;
        default: /* numbers: as str() */
            sst__py_str(b, v);
            break;
    }
}
