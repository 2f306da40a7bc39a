/* SPDX-License-Identifier: MIT */
/*
 * Field paths: LangGraph's tokenize_path and get_text_at_path
 * (langgraph/store/base/embed.py), token for token, so an item yields the
 * same texts to embed as it does in LangGraph. The Python text of values
 * (str(), json.dumps) is in pytext.c.
 */
#include <limits.h>
#include <string.h>

#include "store_int.h"

/* ---- string lists ---- */

bool sst__texts_add(sst__texts *t, const char *s, size_t len) {
    if (t->n == t->cap && !sst__grow((void **)&t->s, &t->cap, t->n, sizeof *t->s, 8)) {
        return false;
    }
    char *copy = sst__strndup(s, len);
    if (copy == NULL) {
        return false;
    }
    t->s[t->n++] = copy;
    return true;
}

size_t sst__texts_find(const sst__texts *t, const char *s) {
    for (size_t i = 0; i < t->n; i++) {
        if (strcmp(t->s[i], s) == 0) {
            return i;
        }
    }
    return SIZE_MAX;
}

void sst__texts_free(sst__texts *t) {
    for (size_t i = 0; i < t->n; i++) {
        sst__free(t->s[i]);
    }
    sst__free(t->s);
    memset(t, 0, sizeof *t);
}

/* ---- tokenize_path ---- */

/* Skips a bracketed group starting at s[i] (open/close nest); returns the index after it. */
static size_t skip_group(const char *s, size_t i, size_t len, char open, char close) {
    int depth = 1;
    i++;
    while (i < len && depth > 0) {
        if (s[i] == open) {
            depth++;
        } else if (s[i] == close) {
            depth--;
        }
        i++;
    }
    return i;
}

/* Tokenises s[0..len) into @p out (LangGraph's tokenize_path). */
static bool tokenize(const char *s, size_t len, sst__texts *out) {
    size_t start = 0, cur = 0; /* the pending plain token is s[start..cur) */
    size_t i = 0;
    while (i < len) {
        char c = s[i];
        if (c == '[' || c == '{') {
            if (cur > start && !sst__texts_add(out, s + start, cur - start)) {
                return false;
            }
            size_t end = skip_group(s, i, len, c, c == '[' ? ']' : '}');
            if (!sst__texts_add(out, s + i, end - i)) {
                return false;
            }
            i = start = cur = end;
            continue;
        }
        if (c == '.') {
            if (cur > start && !sst__texts_add(out, s + start, cur - start)) {
                return false;
            }
            start = cur = i + 1;
        } else {
            cur = i + 1;
        }
        i++;
    }
    return cur <= start || sst__texts_add(out, s + start, cur - start);
}

sst_code sst__path_parse(const char *text, sst__path *p, sst_error *err) {
    memset(p, 0, sizeof *p);
    sst__texts t = {0};
    p->text = sst__strndup(text, strlen(text));
    if (p->text == NULL || !tokenize(text, strlen(text), &t)) {
        sst__texts_free(&t);
        sst__free(p->text);
        p->text = NULL;
        return sst__enomem(err);
    }
    p->tokens = t.s;
    p->n = t.n;
    /* LangGraph keeps "$" untokenised and treats an empty token list as the whole value. */
    p->whole = strcmp(text, "$") == 0 || t.n == 0;
    return SST_OK;
}

void sst__path_free(sst__path *p) {
    sst__texts t = {.s = p->tokens, .n = p->n, .cap = p->n};
    sst__texts_free(&t);
    sst__free(p->text);
    memset(p, 0, sizeof *p);
}

/* ---- get_text_at_path ---- */

/*
 * Python's int() of @p s[0..len): optional whitespace around, a sign, digits
 * with single underscores between them. False when it is not an integer; an
 * integer beyond long long reads as out of any array's range.
 */
static bool py_int(const char *s, size_t len, long long *out) {
    size_t i = 0;
    while (i < len && strchr(" \t\n\r\f\v", s[i]) != NULL) {
        i++;
    }
    while (len > i && strchr(" \t\n\r\f\v", s[len - 1]) != NULL) {
        len--;
    }
    bool neg = i < len && s[i] == '-';
    i += i < len && (s[i] == '-' || s[i] == '+');
    if (i == len || s[i] < '0' || s[i] > '9') {
        return false;
    }
    unsigned long long v = 0;
    bool big = false;
    for (; i < len; i++) {
        if (s[i] == '_' && i + 1 < len && s[i + 1] >= '0' && s[i + 1] <= '9' && s[i - 1] != '_') {
            continue;
        }
        if (s[i] < '0' || s[i] > '9') {
            return false;
        }
        big = big || v > (ULLONG_MAX - 9) / 10;
        v = big ? v : v * 10 + (unsigned long long)(s[i] - '0');
    }
    big = big || v > (unsigned long long)LLONG_MAX;
    *out = big ? (neg ? LLONG_MIN : LLONG_MAX) : (neg ? -(long long)v : (long long)v);
    return true;
}

/* The text of a path's end value: str() of a scalar, json.dumps of a container, none for null. */
static bool leaf_text(const sst_value *v, sst__texts *out) {
    if (sst_is_null(v)) {
        return true;
    }
    sst__buf b;
    sst__buf_init(&b);
    if (sst_is_array(v) || sst_is_object(v)) {
        sst__py_json(&b, v);
    } else {
        sst__py_str(&b, v);
    }
    bool ok = !b.oom && sst__texts_add(out, b.data != NULL ? b.data : "", b.len);
    sst__buf_free(&b);
    return ok;
}

static bool extract(const sst_value *v, char *const *tok, size_t n, sst__texts *out);

/* "[i]" and "[*]" on an array. */
static bool extract_index(const sst_value *v, const char *t, size_t tlen, char *const *tok,
                          size_t n, sst__texts *out) {
    if (!sst_is_array(v)) {
        return true;
    }
    size_t len = sst_array_len(v);
    if (tlen == 3 && t[1] == '*') {
        sst_array_iter it;
        sst_array_iter_init(&it, v);
        for (const sst_value *e; (e = sst_array_iter_next(&it)) != NULL;) {
            if (!extract(e, tok + 1, n - 1, out)) {
                return false;
            }
        }
        return true;
    }
    long long idx;
    if (!py_int(t + 1, tlen - 2, &idx)) {
        return true;
    }
    if (idx < 0) {
        idx = idx < -(long long)len ? -1 : (long long)len + idx;
    }
    return idx < 0 || (unsigned long long)idx >= len ||
           extract(sst_array_get(v, (size_t)idx), tok + 1, n - 1, out);
}

/* One field of "{a,b.c}": followed through objects only; its text is taken as it is. */
static bool extract_field(const sst_value *v, const char *f, size_t flen, sst__texts *out) {
    while (flen > 0 && strchr(" \t\n\r\f\v", f[0]) != NULL) {
        f++, flen--;
    }
    while (flen > 0 && strchr(" \t\n\r\f\v", f[flen - 1]) != NULL) {
        flen--;
    }
    sst__texts toks = {0};
    if (!tokenize(f, flen, &toks)) {
        return false;
    }
    const sst_value *cur = toks.n > 0 ? v : NULL;
    for (size_t i = 0; cur != NULL && i < toks.n; i++) {
        cur = sst_is_object(cur) ? sst_object_get(cur, toks.s[i]) : NULL;
    }
    sst__texts_free(&toks);
    return cur == NULL || leaf_text(cur, out);
}

/* "{a,b.c}" on an object: the remaining tokens are not followed (as in LangGraph). */
static bool extract_fields(const sst_value *v, const char *t, size_t tlen, sst__texts *out) {
    if (!sst_is_object(v)) {
        return true;
    }
    const char *p = t + 1, *end = t + tlen - 1;
    for (;;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *stop = comma != NULL ? comma : end;
        if (!extract_field(v, p, (size_t)(stop - p), out)) {
            return false;
        }
        if (comma == NULL) {
            return true;
        }
        p = comma + 1;
    }
}

/* LangGraph's _extract_from_obj. */
static bool extract(const sst_value *v, char *const *tok, size_t n, sst__texts *out) {
    if (n == 0) {
        return leaf_text(v, out);
    }
    const char *t = tok[0];
    size_t tlen = strlen(t);
    if (tlen >= 2 && t[0] == '[' && t[tlen - 1] == ']') {
        return extract_index(v, t, tlen, tok, n, out);
    }
    if (tlen >= 2 && t[0] == '{' && t[tlen - 1] == '}') {
        return extract_fields(v, t, tlen, out);
    }
    if (strcmp(t, "*") == 0 && (sst_is_object(v) || sst_is_array(v))) {
        size_t len = sst_is_object(v) ? sst_object_len(v) : sst_array_len(v);
        for (size_t i = 0; i < len; i++) {
            const sst_value *e = sst_is_object(v) ? sst_object_value_at(v, i) : sst_array_get(v, i);
            if (!extract(e, tok + 1, n - 1, out)) {
                return false;
            }
        }
        return true;
    }
    const sst_value *m = sst_is_object(v) ? sst_object_get(v, t) : NULL;
    return m == NULL || extract(m, tok + 1, n - 1, out);
}

sst_code sst__path_texts(const sst_value *v, const sst__path *p, sst__texts *out, sst_error *err) {
    bool ok;
    if (p->whole) {
        sst__buf b;
        sst__buf_init(&b);
        sst__py_json(&b, v);
        ok = !b.oom && sst__texts_add(out, b.data != NULL ? b.data : "", b.len);
        sst__buf_free(&b);
    } else {
        ok = extract(v, p->tokens, p->n, out);
    }
    return ok ? SST_OK : sst__enomem(err);
}
