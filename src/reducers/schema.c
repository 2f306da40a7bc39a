/* SPDX-License-Identifier: MIT */
/*
 * State schemas: field -> reducer and default, or one whole-state reducer,
 * and the application of a superstep's deltas in deterministic order.
 */
#include <string.h>

#include "reducers_int.h"

typedef struct schema_field {
    char *name;          /* owned */
    sst_reducer reducer; /* copy; a custom reducer's name is owned */
    sst_value *def;      /* owned default, or NULL */
} schema_field;

struct sst_schema {
    schema_field *fields; /* owned array */
    size_t count;
    size_t cap;
    sst_state_reduce_fn state_fn;
    void *state_ud;
    bool closed; /* updates and input lose the keys that are not declared fields */
};

sst_schema *sst_schema_new(sst_error *err) {
    sst_schema *s = sst__calloc(1, sizeof *s);
    if (s == NULL) {
        sst__enomem(err);
    }
    return s;
}

sst_schema *sst_schema_copy(const sst_schema *s, sst_error *err) {
    if (s == NULL) {
        sst__error(err, SST_EINVAL, "schema copy: NULL schema");
        return NULL;
    }
    sst_schema *c = sst_schema_new(err);
    for (size_t i = 0; c != NULL && i < s->count; i++) {
        const schema_field *f = &s->fields[i];
        if (sst_schema_add_field(c, f->name, &f->reducer, sst_value_ref(f->def), err) != SST_OK) {
            sst_schema_free(c);
            c = NULL;
        }
    }
    if (c != NULL) {
        c->state_fn = s->state_fn;
        c->state_ud = s->state_ud;
        c->closed = s->closed;
    }
    return c;
}

void sst_schema_free(sst_schema *s) {
    if (s == NULL) {
        return;
    }
    for (size_t i = 0; i < s->count; i++) {
        sst__free(s->fields[i].name);
        if (s->fields[i].reducer.kind == SST__R_CUSTOM) {
            sst__free((char *)s->fields[i].reducer.name);
        }
        sst_value_unref(s->fields[i].def);
    }
    sst__free(s->fields);
    sst__free(s);
}

static const schema_field *find_field(const sst_schema *s, const char *name, size_t len) {
    for (size_t i = 0; i < s->count; i++) {
        if (strncmp(s->fields[i].name, name, len) == 0 && s->fields[i].name[len] == '\0') {
            return &s->fields[i];
        }
    }
    return NULL;
}

sst_code sst_schema_add_field(sst_schema *s, const char *field, const sst_reducer *r,
                              sst_value *default_value, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (s == NULL || field == NULL || r == NULL) {
        sst_value_unref(default_value);
        return sst__error(err, SST_EINVAL, "schema: NULL %s",
                          s == NULL       ? "schema"
                          : field == NULL ? "field name"
                                          : "reducer");
    }
    if (find_field(s, field, strlen(field)) != NULL) {
        sst_value_unref(default_value);
        return sst__error(err, SST_EINVAL, "schema: field '%s' is declared twice", field);
    }
    if (default_value != NULL) {
        default_value = sst_reducer_prepare(r, field, default_value, err);
        if (default_value == NULL) {
            return sst__code(err);
        }
    }
    if (s->count == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 8;
        schema_field *f = sst__realloc(s->fields, cap * sizeof *f);
        if (f == NULL) {
            sst_value_unref(default_value);
            return sst__enomem(err);
        }
        s->fields = f;
        s->cap = cap;
    }
    schema_field *f = &s->fields[s->count];
    f->name = sst__strndup(field, strlen(field));
    f->reducer = *r;
    if (r->kind == SST__R_CUSTOM) {
        f->reducer.name = sst__strndup(r->name, strlen(r->name));
    }
    if (f->name == NULL || f->reducer.name == NULL) {
        sst__free(f->name);
        if (r->kind == SST__R_CUSTOM) {
            sst__free((char *)f->reducer.name);
        }
        sst_value_unref(default_value);
        return sst__enomem(err);
    }
    f->def = default_value;
    s->count++;
    return SST_OK;
}

sst_code sst_schema_set_state_reducer(sst_schema *s, sst_state_reduce_fn fn, void *user_data,
                                      sst_error *err) {
    if (s == NULL) {
        return sst__error(err, SST_EINVAL, "schema: NULL schema");
    }
    s->state_fn = fn;
    s->state_ud = user_data;
    return SST_OK;
}

sst_code sst_schema_set_closed(sst_schema *s, bool closed, sst_error *err) {
    if (s == NULL) {
        return sst__error(err, SST_EINVAL, "schema: NULL schema");
    }
    s->closed = closed;
    return SST_OK;
}

bool sst_schema_closed(const sst_schema *s) {
    return s != NULL && s->closed;
}

const sst_reducer *sst_schema_field_reducer(const sst_schema *s, const char *field) {
    const schema_field *f =
        (s != NULL && field != NULL) ? find_field(s, field, strlen(field)) : NULL;
    return f != NULL ? &f->reducer : sst_reducer_replace();
}

static const sst_reducer *reducer_of(const sst_schema *s, const sst_value *key) {
    const schema_field *f = find_field(s, sst_string_cstr(key), sst_string_len(key));
    return f != NULL ? &f->reducer : sst_reducer_replace();
}

size_t sst_schema_field_count(const sst_schema *s) {
    return s != NULL ? s->count : 0;
}

const char *sst_schema_field_name(const sst_schema *s, size_t i) {
    return (s != NULL && i < s->count) ? s->fields[i].name : NULL;
}

sst_value *sst_schema_initial_state(const sst_schema *s, sst_error *err) {
    sst_value *state = sst_object_empty();
    for (size_t i = 0; s != NULL && i < s->count && state != NULL; i++) {
        if (s->fields[i].def != NULL) {
            state =
                sst_object_set_take(state, s->fields[i].name, sst_value_ref(s->fields[i].def), err);
        }
    }
    return state;
}

/* True when a closed schema drops @p key: not declared and not an engine field ("__..."). */
static bool dropped(const sst_schema *s, const sst_value *key) {
    return s->closed && strncmp(sst_string_cstr(key), "__", 2) != 0 &&
           find_field(s, sst_string_cstr(key), sst_string_len(key)) == NULL;
}

/* @p delta (taken) without the members a closed schema drops. */
static sst_value *drop_undeclared(const sst_schema *s, sst_value *delta, sst_error *err) {
    bool any = false;
    for (size_t i = 0; i < sst_object_len(delta) && !any; i++) {
        any = dropped(s, sst_object_key_at(delta, i));
    }
    if (!any) {
        return delta;
    }
    sst_value *out = sst_object_empty();
    for (size_t i = 0; i < sst_object_len(delta) && out != NULL; i++) {
        const sst_value *k = sst_object_key_at(delta, i);
        if (!dropped(s, k)) {
            out = sst_object_setv_take(out, k, sst_value_ref(sst_object_value_at(delta, i)), err);
        }
    }
    sst_value_unref(delta);
    return out;
}

sst_value *sst_schema_prepare_delta(const sst_schema *s, sst_value *delta, sst_error *err) {
    if (s == NULL || !sst_is_object(delta)) {
        sst__error(err, s == NULL ? SST_EINVAL : SST_ETYPE,
                   "state update must be an object, got %s",
                   delta == NULL ? "NULL" : sst_type_name(sst_value_type(delta)));
        sst_value_unref(delta);
        return NULL;
    }
    delta = drop_undeclared(s, delta, err);
    for (size_t i = 0; delta != NULL && i < sst_object_len(delta); i++) {
        const sst_value *key = sst_object_key_at(delta, i);
        const sst_reducer *r = reducer_of(s, key);
        if (r->kind != SST__R_ADD_MESSAGES) {
            continue;
        }
        const sst_value *old = sst_object_value_at(delta, i);
        sst_value *norm = sst_reducer_prepare(r, sst_string_cstr(key), sst_value_ref(old), err);
        if (norm == NULL) {
            sst_value_unref(delta);
            return NULL;
        }
        if (norm == old) {
            sst_value_unref(norm);
            continue;
        }
        delta = sst_object_setv_take(delta, key, norm, err);
    }
    return delta;
}

/* The writes of one superstep to one field. */
typedef struct field_group {
    const sst_value *key; /* borrowed from a delta */
    size_t count;         /* writes to this field */
    size_t next;          /* fill cursor into the shared updates array */
} field_group;

static bool same_key(const sst_value *a, const sst_value *b) {
    return a == b || (sst_string_len(a) == sst_string_len(b) &&
                      memcmp(sst_string_cstr(a), sst_string_cstr(b), sst_string_len(a)) == 0);
}

/* The writes of one superstep grouped by field (all arrays owned, sized for every write). */
typedef struct write_groups {
    field_group *groups;
    size_t ngroups;
    const sst_value **updates; /* borrowed values, grouped by field */
    size_t *slot_of;           /* delta member -> group, in member order */
    uint32_t *hash;            /* group + 1, 0 = empty; NULL for few writes */
    size_t hcap;
} write_groups;

static void write_groups_free(write_groups *w) {
    sst__free(w->groups);
    sst__free(w->updates);
    sst__free(w->slot_of);
    sst__free(w->hash);
}

/* Allocates @p w for @p total writes, with a hash of field names when there are more than 8. */
static bool write_groups_init(write_groups *w, size_t total) {
    memset(w, 0, sizeof *w);
    w->groups = sst__malloc(total * sizeof *w->groups);
    w->updates = sst__malloc(total * sizeof *w->updates);
    if (total > 8) {
        w->hcap = 16;
        while (w->hcap < total * 2) {
            w->hcap *= 2;
        }
        w->hash = sst__calloc(w->hcap, sizeof *w->hash);
    }
    w->slot_of = sst__malloc(total * sizeof *w->slot_of);
    if (w->groups == NULL || w->updates == NULL || w->slot_of == NULL ||
        (total > 8 && w->hash == NULL)) {
        write_groups_free(w);
        return false;
    }
    return true;
}

/* The group of field @p key (borrowed), added after the others when it has none yet. */
static inline size_t group_of(write_groups *w, const sst_value *key) {
    size_t g = SIZE_MAX;
    if (w->hash != NULL) {
        size_t mask = w->hcap - 1;
        size_t h = (size_t)sst__hash_bytes(sst_string_cstr(key), sst_string_len(key), 0) & mask;
        while (w->hash[h] != 0 && !same_key(w->groups[w->hash[h] - 1].key, key)) {
            h = (h + 1) & mask;
        }
        if (w->hash[h] != 0) {
            g = w->hash[h] - 1;
        } else {
            w->hash[h] = (uint32_t)(w->ngroups + 1);
        }
    } else {
        for (size_t j = 0; j < w->ngroups && g == SIZE_MAX; j++) {
            g = same_key(w->groups[j].key, key) ? j : SIZE_MAX;
        }
    }
    if (g == SIZE_MAX) {
        g = w->ngroups++;
        w->groups[g].key = key;
        w->groups[g].count = 0;
    }
    return g;
}

/* Groups the members of @p deltas by field into @p w, each field's writes in delta order. */
static void group_writes(write_groups *w, const sst_value *const *deltas, size_t n) {
    size_t m = 0;
    for (size_t d = 0; d < n; d++) {
        for (size_t i = 0; i < sst_object_len(deltas[d]); i++, m++) {
            size_t g = group_of(w, sst_object_key_at(deltas[d], i));
            w->groups[g].count++;
            w->slot_of[m] = g;
        }
    }
    size_t start = 0;
    for (size_t g = 0; g < w->ngroups; g++) {
        w->groups[g].next = start;
        start += w->groups[g].count;
    }
    m = 0;
    for (size_t d = 0; d < n; d++) {
        for (size_t i = 0; i < sst_object_len(deltas[d]); i++, m++) {
            w->updates[w->groups[w->slot_of[m]].next++] = sst_object_value_at(deltas[d], i);
        }
    }
}

/* Merges each group's writes into @p state (takes it) through the field's reducer. */
static sst_value *merge_groups(const sst_schema *s, sst_value *state, const write_groups *w,
                               sst_error *err) {
    size_t start = 0;
    for (size_t g = 0; g < w->ngroups && state != NULL; g++) {
        const sst_value *key = w->groups[g].key;
        const char *k = sst_string_cstr(key);
        size_t klen = sst_string_len(key);
        sst_value *cur = sst_value_ref(sst_object_getn(state, k, klen));
        if (cur != NULL && sst_value_is_unique(state)) {
            /* Detach the field so that a reducer may update it in place. */
            state = sst_object_setv_take(state, key, sst_null(), err);
            if (state == NULL) {
                sst_value_unref(cur);
                break;
            }
        }
        sst_value *merged = sst_reducer_apply(reducer_of(s, key), k, cur, w->updates + start,
                                              w->groups[g].count, err);
        start += w->groups[g].count;
        if (merged == NULL) {
            sst_value_unref(state);
            state = NULL;
            break;
        }
        state = sst_object_setv_take(state, key, merged, err);
    }
    return state;
}

/*
 * Groups the writes of all deltas by field, fields in order of first write
 * and each field's writes in delta order, then merges each field through its
 * reducer. Linear in the number of writes (a hash of field names once there
 * are more than a few), so 100 000 tasks writing one field stay cheap.
 */
static sst_value *apply_fields(const sst_schema *s, sst_value *state,
                               const sst_value *const *deltas, size_t n, sst_error *err) {
    size_t total = 0;
    for (size_t d = 0; d < n; d++) {
        total += sst_object_len(deltas[d]);
    }
    if (total == 0) {
        return state;
    }
    write_groups w;
    if (!write_groups_init(&w, total)) {
        sst_value_unref(state);
        sst__enomem(err);
        return NULL;
    }
    group_writes(&w, deltas, n);
    state = merge_groups(s, state, &w, err);
    write_groups_free(&w);
    return state;
}

sst_value *sst_schema_apply(const sst_schema *s, sst_value *state, const sst_value *const *deltas,
                            size_t n, sst_error *err) {
    if (state == NULL) {
        state = sst_object_empty();
    }
    if (s == NULL || !sst_is_object(state) || (deltas == NULL && n > 0)) {
        sst__error(err, SST_EINVAL, "schema apply: %s",
                   s == NULL        ? "NULL schema"
                   : deltas == NULL ? "NULL deltas"
                                    : "state must be an object");
        sst_value_unref(state);
        return NULL;
    }
    for (size_t d = 0; d < n; d++) {
        if (!sst_is_object(deltas[d])) {
            sst__error(err, SST_ETYPE, "state update %zu must be an object, got %s", d,
                       deltas[d] == NULL ? "NULL" : sst_type_name(sst_value_type(deltas[d])));
            sst_value_unref(state);
            return NULL;
        }
    }
    if (s->state_fn != NULL) {
        return s->state_fn(s->state_ud, state, deltas, n, err);
    }
    return apply_fields(s, state, deltas, n, err);
}
