/* SPDX-License-Identifier: MIT */
/*
 * Objects: members in insertion order, copied on write when shared. Above
 * SST__OBJECT_INDEX_MIN members an open-addressing hash index (member
 * position + 1; 0 = empty slot) makes lookup O(1); small objects, the common
 * case for messages and graph state, are scanned linearly.
 */
#include <stdio.h>
#include <string.h>

#include "build.h"
#include "values_int.h"

#define OBJECT_HASH_SEED 0x6f626a6563746b79ull

static uint64_t key_hash(const char *key, size_t len) {
    return sst__hash_bytes(key, len, OBJECT_HASH_SEED);
}

static bool key_eq(const sst_value *k, const char *key, size_t len) {
    const sst__string *s = sst__str(k);
    /* Shared keys (the parser's) compare by pointer before by bytes. */
    return s->len == len &&
           (s->data == key || len == 0 || (s->data[0] == key[0] && memcmp(s->data, key, len) == 0));
}

size_t sst__object_find(const sst__object *o, const char *key, size_t len) {
    if (o->index != NULL) {
        size_t mask = o->index_cap - 1;
        for (size_t i = key_hash(key, len) & mask;; i = (i + 1) & mask) {
            uint32_t slot = o->index[i];
            if (slot == 0) {
                return SIZE_MAX;
            }
            if (key_eq(o->members[slot - 1].key, key, len)) {
                return slot - 1;
            }
        }
    }
    for (size_t i = 0; i < o->count; i++) {
        if (key_eq(o->members[i].key, key, len)) {
            return i;
        }
    }
    return SIZE_MAX;
}

/* Rebuilds the index for the current members (or drops it when small). false on OOM. */
static bool index_rebuild(sst__object *o) {
    if (o->count <= SST__OBJECT_INDEX_MIN) {
        sst__free(o->index);
        o->index = NULL;
        o->index_cap = 0;
        return true;
    }
    if (o->count > UINT32_MAX / 4) {
        return false;
    }
    size_t cap = 16;
    while (cap < o->count * 2) {
        cap *= 2;
    }
    uint32_t *idx = sst__calloc(cap, sizeof *idx);
    if (idx == NULL) {
        return false;
    }
    size_t mask = cap - 1;
    for (size_t m = 0; m < o->count; m++) {
        const sst__string *k = sst__str(o->members[m].key);
        size_t i = key_hash(k->data, k->len) & mask;
        while (idx[i] != 0) {
            i = (i + 1) & mask;
        }
        idx[i] = (uint32_t)(m + 1);
    }
    sst__free(o->index);
    o->index = idx;
    o->index_cap = cap;
    return true;
}

/* Objects built in one piece (the parser) keep their members right after the header. */
static inline sst__member *inline_members(sst__object *o) {
    return (sst__member *)(o + 1);
}

void sst__object_release(sst__object *o, sst_value **dead) {
    for (size_t i = 0; i < o->count; i++) {
        sst__unref_into(o->members[i].key, dead);
        sst__unref_into(o->members[i].val, dead);
    }
    if (o->members != inline_members(o)) {
        sst__free(o->members);
    }
    sst__free(o->index);
}

/* Returns an object only the caller references, with room for one more member. Consumes v. */
static sst__object *object_unique(sst_value *v) {
    sst__object *o = (sst__object *)v;
    if (sst_value_is_unique(v)) {
        if (o->count < o->cap) {
            return o;
        }
        size_t cap = o->cap < 4 ? 4 : o->cap * 2;
        sst__member *m;
        if (o->members == inline_members(o)) {
            m = sst__malloc(cap * sizeof *m);
            if (m != NULL) {
                memcpy(m, o->members, o->count * sizeof *m);
            }
        } else {
            m = sst__realloc(o->members, cap * sizeof *m);
        }
        if (m == NULL) {
            sst_value_unref(v);
            return NULL;
        }
        o->members = m;
        o->cap = cap;
        return o;
    }
    sst__object *c = sst__value_alloc(sizeof *c, SST_TYPE_OBJECT);
    if (c == NULL) {
        sst_value_unref(v);
        return NULL;
    }
    c->count = 0;
    c->cap = o->count + 1 < 4 ? 4 : o->count + 1;
    c->index = NULL;
    c->index_cap = 0;
    c->members = sst__malloc(c->cap * sizeof *c->members);
    if (c->members == NULL) {
        sst__free(c);
        sst_value_unref(v);
        return NULL;
    }
    for (size_t i = 0; i < o->count; i++) {
        c->members[i].key = sst_value_ref(o->members[i].key);
        c->members[i].val = sst_value_ref(o->members[i].val);
    }
    c->count = o->count;
    if (o->index != NULL) {
        c->index = sst__malloc(o->index_cap * sizeof *c->index);
        if (c->index == NULL) {
            sst_value_unref(&c->h);
            sst_value_unref(v);
            return NULL;
        }
        memcpy(c->index, o->index, o->index_cap * sizeof *c->index);
        c->index_cap = o->index_cap;
    }
    sst_value_unref(v);
    return c;
}

static sst_value *object_fail(sst_value *o, sst_value *val, sst_error *err, sst_code code,
                              const char *msg) {
    sst__error(err, code, "%s", msg);
    sst_value_unref(o);
    sst_value_unref(val);
    return NULL;
}

/*
 * The common setter: @p keyv may be a ready string value, else key/len are
 * copied. @p key_owned says whether the caller's reference to keyv is
 * consumed (the parser's case) or borrowed.
 */
static sst_value *object_set(sst_value *v, const sst_value *keyv, bool key_owned, const char *key,
                             size_t len, sst_value *val, sst_error *err) {
    if (!sst_is_object(v)) {
        char msg[96];
        snprintf(msg, sizeof msg, "object set: expected object, got %s",
                 v == NULL ? "NULL" : sst_type_name(sst_value_type(v)));
        return object_fail(v, val, err, SST_ETYPE, msg);
    }
    if (val == NULL) {
        return object_fail(v, val, err, SST_EINVAL, "object set: NULL value");
    }
    if (key == NULL) {
        return object_fail(v, val, err, SST_EINVAL, "object set: NULL key");
    }
    size_t bad;
    if (keyv == NULL && !sst__utf8_valid(key, len, &bad)) {
        return object_fail(v, val, err, SST_EUTF8, "object set: key is not valid UTF-8");
    }
    const sst__object *old = (const sst__object *)v;
    size_t pos = sst__object_find(old, key, len);
    if (pos != SIZE_MAX && sst_value_is_unique(v)) {
        sst__object *o = (sst__object *)v;
        sst_value *prev = o->members[pos].val;
        o->members[pos].val = val;
        sst_value_unref(prev);
        if (key_owned) {
            sst_value_unref((sst_value *)keyv);
        }
        return v;
    }
    sst_value *k = keyv == NULL ? sst__string_new_trusted(key, len)
                   : key_owned  ? (sst_value *)keyv
                                : sst_value_ref(keyv);
    if (k == NULL) {
        return object_fail(v, val, err, SST_ENOMEM, "out of memory");
    }
    sst__object *o = object_unique(v);
    if (o == NULL) {
        sst_value_unref(k);
        sst_value_unref(val);
        sst__enomem(err);
        return NULL;
    }
    if (pos != SIZE_MAX) {
        sst_value *prev = o->members[pos].val;
        o->members[pos].val = val;
        sst_value_unref(prev);
        sst_value_unref(k);
        return &o->h;
    }
    o->members[o->count].key = k;
    o->members[o->count].val = val;
    o->count++;
    bool need_rebuild =
        o->count > SST__OBJECT_INDEX_MIN && (o->index == NULL || o->count * 2 > o->index_cap);
    if (need_rebuild) {
        if (!index_rebuild(o)) {
            sst_value_unref(&o->h);
            sst__enomem(err);
            return NULL;
        }
    } else if (o->index != NULL) {
        size_t mask = o->index_cap - 1;
        size_t i = key_hash(key, len) & mask;
        while (o->index[i] != 0) {
            i = (i + 1) & mask;
        }
        o->index[i] = (uint32_t)o->count;
    }
    return &o->h;
}

sst_value *sst_object_setn_take(sst_value *o, const char *key, size_t key_len, sst_value *val,
                                sst_error *err) {
    return object_set(o, NULL, false, key, key_len, val, err);
}

sst_value *sst_object_set_take(sst_value *o, const char *key, sst_value *val, sst_error *err) {
    return object_set(o, NULL, false, key, key == NULL ? 0 : strlen(key), val, err);
}

/* For the chaining setters: true (after releasing both) when an earlier step failed. */
static bool chain_failed(sst_value *o, sst_value *v, sst_error *err) {
    if (o != NULL && v != NULL) {
        return false;
    }
    sst_value_unref(o);
    sst_value_unref(v);
    sst__error_unless_set(err, SST_ENOMEM, "out of memory");
    return true;
}

sst_value *sst__set_take(sst_value *o, const char *key, sst_value *v, sst_error *err) {
    return chain_failed(o, v, err) ? NULL : sst_object_set_take(o, key, v, err);
}

sst_value *sst__push_take(sst_value *a, sst_value *v, sst_error *err) {
    return chain_failed(a, v, err) ? NULL : sst_array_push_take(a, v, err);
}

sst_value *sst__setv_take(sst_value *o, const sst_value *key, sst_value *v, sst_error *err) {
    return chain_failed(o, v, err) ? NULL : sst_object_setv_take(o, key, v, err);
}

sst_value *sst_object_setv_take(sst_value *o, const sst_value *key, sst_value *val,
                                sst_error *err) {
    if (!sst_is_string(key)) {
        return object_fail(o, val, err, SST_ETYPE, "object set: key must be a string value");
    }
    return object_set(o, key, false, sst__str(key)->data, sst__str(key)->len, val, err);
}

sst_value *sst_object_remove_take(sst_value *v, const char *key, sst_error *err) {
    if (!sst_is_object(v) || key == NULL) {
        return object_fail(v, NULL, err, sst_is_object(v) ? SST_EINVAL : SST_ETYPE,
                           sst_is_object(v) ? "object remove: NULL key"
                                            : "object remove: expected object");
    }
    size_t pos = sst__object_find((const sst__object *)v, key, strlen(key));
    if (pos == SIZE_MAX) {
        return v;
    }
    sst__object *o = object_unique(v);
    if (o == NULL) {
        sst__enomem(err);
        return NULL;
    }
    sst_value *k = o->members[pos].key;
    sst_value *val = o->members[pos].val;
    memmove(&o->members[pos], &o->members[pos + 1], (o->count - pos - 1) * sizeof *o->members);
    o->count--;
    sst_value_unref(k);
    sst_value_unref(val);
    if (!index_rebuild(o)) {
        sst_value_unref(&o->h);
        sst__enomem(err);
        return NULL;
    }
    return &o->h;
}

size_t sst_object_len(const sst_value *v) {
    return sst_is_object(v) ? ((const sst__object *)v)->count : 0;
}

const sst_value *sst_object_getn(const sst_value *v, const char *key, size_t len) {
    if (!sst_is_object(v) || key == NULL) {
        return NULL;
    }
    const sst__object *o = (const sst__object *)v;
    size_t pos = sst__object_find(o, key, len);
    return pos == SIZE_MAX ? NULL : o->members[pos].val;
}

const sst_value *sst_object_get(const sst_value *v, const char *key) {
    return key == NULL ? NULL : sst_object_getn(v, key, strlen(key));
}

const sst_value *sst_object_key_at(const sst_value *v, size_t i) {
    if (!sst_is_object(v) || i >= ((const sst__object *)v)->count) {
        return NULL;
    }
    return ((const sst__object *)v)->members[i].key;
}

const sst_value *sst_object_value_at(const sst_value *v, size_t i) {
    if (!sst_is_object(v) || i >= ((const sst__object *)v)->count) {
        return NULL;
    }
    return ((const sst__object *)v)->members[i].val;
}

/* Appends a member the caller checked is new, maintaining the index. false on OOM. */
static bool append_member(sst__object *o, sst_value *key, sst_value *val) {
    o->members[o->count].key = key;
    o->members[o->count].val = val;
    o->count++;
    if (o->count <= SST__OBJECT_INDEX_MIN) {
        return true;
    }
    if (o->index == NULL || o->count * 2 > o->index_cap) {
        return index_rebuild(o);
    }
    size_t mask = o->index_cap - 1;
    const sst__string *k = sst__str(key);
    size_t i = key_hash(k->data, k->len) & mask;
    while (o->index[i] != 0) {
        i = (i + 1) & mask;
    }
    o->index[i] = (uint32_t)o->count;
    return true;
}

sst_value *sst__object_with_capacity(size_t n, sst_error *err) {
    sst__object *o = NULL;
    if (n > 0 && n <= 4096) {
        o = sst__value_alloc(sizeof *o + n * sizeof(sst__member), SST_TYPE_OBJECT);
    }
    if (o == NULL) {
        if (n > 0 && n <= 4096) {
            sst__enomem(err);
            return NULL;
        }
        return sst_object_empty();
    }
    o->count = 0;
    o->cap = n;
    o->members = inline_members(o);
    o->index = NULL;
    o->index_cap = 0;
    return &o->h;
}

sst_value *sst__object_from(sst__arena *arena, sst_value **kv, size_t n) {
    if (n == 0) {
        return sst_object_empty();
    }
    sst__object *o = NULL;
    if (n <= (SIZE_MAX - sizeof *o) / sizeof(sst__member)) {
        o = sst__arena_value(arena, sizeof *o + n * sizeof(sst__member), SST_TYPE_OBJECT);
    }
    size_t i = 0;
    if (o != NULL) {
        o->count = 0;
        o->cap = n;
        o->members = inline_members(o);
        o->index = NULL;
        o->index_cap = 0;
        for (; i < n; i++) {
            sst_value *key = kv[2 * i], *val = kv[2 * i + 1];
            size_t pos = sst__object_find(o, sst__str(key)->data, sst__str(key)->len);
            if (pos != SIZE_MAX) {
                sst_value_unref(o->members[pos].val);
                o->members[pos].val = val;
                sst_value_unref(key);
            } else if (!append_member(o, key, val)) {
                i++;
                break;
            }
        }
        if (i == n) {
            return &o->h;
        }
    }
    for (; i < n; i++) {
        sst_value_unref(kv[2 * i]);
        sst_value_unref(kv[2 * i + 1]);
    }
    sst_value_unref(o != NULL ? &o->h : NULL);
    return NULL;
}
