/* SPDX-License-Identifier: MIT */
/*
 * add_messages: LangGraph's message reducer for OpenAI-style chat messages
 * (DESIGN.md "add_messages"; docs/reducers.md has the full rules).
 *
 * An update is normalised first (strings and [role, content] pairs become
 * message objects, missing ids become UUIDv4s), then merged by id: a known
 * id replaces the message in place, a new id appends, {"type": "remove"}
 * deletes, "__remove_all__" drops everything before it.
 */
#include <stdio.h>
#include <string.h>

#include "reducers_int.h"

#define REMOVE_ALL "__remove_all__"

static const char *const k_roles[] = {"system",    "developer", "user",
                                      "assistant", "tool",      "function"};

/* The canonical role for @p role (aliases human -> user, ai -> assistant), or NULL. */
static const char *canonical_role(const char *role) {
    if (strcmp(role, "human") == 0) {
        return "user";
    }
    if (strcmp(role, "ai") == 0) {
        return "assistant";
    }
    for (size_t i = 0; i < SST_ARRAY_LEN(k_roles); i++) {
        if (strcmp(role, k_roles[i]) == 0) {
            return k_roles[i];
        }
    }
    return NULL;
}

static sst_value *msg_error(sst_error *err, sst_code code, const char *field, size_t index,
                            const char *what) {
    sst__error(err, code, "reducer 'add_messages' on field '%s': message %zu: %s", field, index,
               what);
    return NULL;
}

static sst_value *unknown_role(sst_error *err, const char *field, size_t index,
                               const sst_value *role) {
    char what[160];
    snprintf(what, sizeof what,
             "unknown role '%.40s' (expected user, assistant, system, developer, tool, function, "
             "human or ai)",
             sst_string_cstr(role));
    return msg_error(err, SST_EINVAL, field, index, what);
}

static bool is_remove(const sst_value *m) {
    const sst_value *t = sst_object_get(m, "type");
    return sst_is_string(t) && strcmp(sst_string_cstr(t), "remove") == 0;
}

/* Builds {"id": id, "role": role, ...rest of @p src except id and role}. */
static sst_value *build_message(const sst_value *id, const char *role, const sst_value *content,
                                const sst_value *src, sst_error *err) {
    sst_value *m = sst_object_set_take(sst_object_empty(), "id", sst_value_ref(id), err);
    if (m != NULL) {
        sst_value *r = sst_string_new(role, err);
        m = r != NULL ? sst_object_set_take(m, "role", r, err) : (sst_value_unref(m), NULL);
    }
    if (m != NULL && content != NULL) {
        m = sst_object_set_take(m, "content", sst_value_ref(content), err);
    }
    for (size_t i = 0, n = sst_object_len(src); i < n && m != NULL; i++) {
        const sst_value *k = sst_object_key_at(src, i);
        if (strcmp(sst_string_cstr(k), "id") == 0 || strcmp(sst_string_cstr(k), "role") == 0) {
            continue;
        }
        m = sst_object_setv_take(m, k, sst_value_ref(sst_object_value_at(src, i)), err);
    }
    return m;
}

static sst_value *new_id(sst_error *err) {
    char uuid[37];
    if (sst__uuid4(uuid, err) != SST_OK) {
        return NULL;
    }
    return sst_string_new(uuid, err);
}

/* A message object @p e in normal form: checked id, canonical role, an id when missing. */
static sst_value *normalize_object(const char *field, size_t index, const sst_value *e,
                                   sst_error *err) {
    const sst_value *id = sst_object_get(e, "id");
    if (id != NULL && !sst_is_null(id) && !sst_is_string(id)) {
        char what[96];
        snprintf(what, sizeof what, "'id' must be a string, got %s", sst__type_word(id));
        return msg_error(err, SST_ETYPE, field, index, what);
    }
    if (is_remove(e)) {
        if (!sst_is_string(id)) {
            return msg_error(err, SST_EINVAL, field, index, "a remove message needs a string 'id'");
        }
        return sst_value_ref(e);
    }
    const sst_value *role = sst_object_get(e, "role");
    /* LangChain's message dicts ({"type": "human", ...}, what LangGraph's SDKs and UIs
     * send) name the role by "type": it becomes the role. */
    const sst_value *type = role == NULL ? sst_object_get(e, "type") : NULL;
    role = type != NULL ? type : role;
    if (!sst_is_string(role)) {
        return msg_error(err, SST_ETYPE, field, index,
                         role == NULL ? "message object has no 'role' (nor LangChain's 'type')"
                                      : "message 'role' must be a string");
    }
    const char *canon = canonical_role(sst_string_cstr(role));
    if (canon == NULL) {
        return unknown_role(err, field, index, role);
    }
    bool role_ok = type == NULL && strcmp(canon, sst_string_cstr(role)) == 0;
    if (sst_is_string(id) && role_ok) {
        return sst_value_ref(e); /* already normal: share it */
    }
    sst_value *nid = sst_is_string(id) ? sst_value_ref(id) : new_id(err);
    if (nid == NULL) {
        return NULL;
    }
    sst_value *m = build_message(nid, canon, NULL, e, err);
    sst_value_unref(nid);
    if (m != NULL && type != NULL) {
        m = sst_object_remove_take(m, "type", err);
    }
    return m;
}

/* One element of an update as a message object (new), or NULL with err. */
static sst_value *normalize_one(const char *field, size_t index, const sst_value *e,
                                sst_error *err) {
    if (sst_is_string(e)) {
        sst_value *id = new_id(err);
        if (id == NULL) {
            return NULL;
        }
        sst_value *m = build_message(id, "user", e, NULL, err);
        sst_value_unref(id);
        return m;
    }
    if (sst_is_array(e)) {
        const sst_value *role = sst_array_get(e, 0);
        if (sst_array_len(e) != 2 || !sst_is_string(role)) {
            return msg_error(err, SST_ETYPE, field, index,
                             "a list message must be a [role, content] pair");
        }
        const char *canon = canonical_role(sst_string_cstr(role));
        if (canon == NULL) {
            return unknown_role(err, field, index, role);
        }
        sst_value *id = new_id(err);
        if (id == NULL) {
            return NULL;
        }
        sst_value *m = build_message(id, canon, sst_array_get(e, 1), NULL, err);
        sst_value_unref(id);
        return m;
    }
    if (!sst_is_object(e)) {
        char what[160];
        snprintf(what, sizeof what,
                 "expected a message object, a string or a [role, content] pair, got %s",
                 sst__type_word(e));
        return msg_error(err, SST_ETYPE, field, index, what);
    }
    return normalize_object(field, index, e, err);
}

sst_value *sst__messages_normalize(const char *field, const sst_value *update, sst_error *err) {
    if (update == NULL || sst_is_null(update)) {
        return sst_array_empty();
    }
    if (sst_is_string(update) || sst_is_object(update)) {
        sst_value *m = normalize_one(field, 0, update, err);
        return m != NULL ? sst_array_push_take(sst_array_empty(), m, err) : NULL;
    }
    if (!sst_is_array(update)) {
        sst__error(err, SST_ETYPE,
                   "reducer 'add_messages' on field '%s': expected a message or a list of "
                   "messages, got %s",
                   field, sst__type_word(update));
        return NULL;
    }
    sst_value *out = sst_array_empty();
    sst_array_iter it;
    sst_array_iter_init(&it, update);
    const sst_value *e;
    size_t i = 0;
    bool changed = false;
    while ((e = sst_array_iter_next(&it)) != NULL) {
        sst_value *m = normalize_one(field, i++, e, err);
        if (m == NULL) {
            sst_value_unref(out);
            return NULL;
        }
        changed |= m != e;
        out = sst_array_push_take(out, m, err);
        if (out == NULL) {
            return NULL;
        }
    }
    if (!changed) {
        sst_value_unref(out); /* every message was already normal: keep the shared original */
        return sst_value_ref(update);
    }
    return out;
}

/* ---- the merge ---------------------------------------------------------- */

/* Positions this update removes (a removal may be cancelled by a later message). */
typedef struct removals {
    size_t *pos;
    bool *on;
    size_t n, cap;
} removals;

static bool removals_set(removals *r, size_t pos, bool on) {
    for (size_t i = 0; i < r->n; i++) {
        if (r->pos[i] == pos) {
            r->on[i] = on;
            return true;
        }
    }
    if (!on) {
        return true;
    }
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 8;
        size_t *p = sst__realloc(r->pos, cap * sizeof *p);
        if (p != NULL) {
            r->pos = p;
        }
        bool *o = sst__realloc(r->on, cap * sizeof *o);
        if (o != NULL) {
            r->on = o;
        }
        if (p == NULL || o == NULL) {
            return false;
        }
        r->cap = cap;
    }
    r->pos[r->n] = pos;
    r->on[r->n++] = true;
    return true;
}

static bool removed_at(const removals *r, size_t pos) {
    for (size_t i = 0; i < r->n; i++) {
        if (r->pos[i] == pos) {
            return r->on[i];
        }
    }
    return false;
}

static sst_value *merge_fail(sst_value *merged, sst_value *upd, sst__id_index *idx, removals *rm) {
    sst_value_unref(merged);
    sst_value_unref(upd);
    sst__id_index_unref(idx);
    sst__free(rm->pos);
    sst__free(rm->on);
    return NULL;
}

/* The index just past the last "__remove_all__" in @p upd, or 0. */
static size_t remove_all_start(const sst_value *upd) {
    size_t start = 0, n_upd = sst_array_len(upd);
    for (size_t i = 0; i < n_upd; i++) {
        const sst_value *m = sst_array_get(upd, i);
        if (is_remove(m) && strcmp(sst_string_cstr(sst_object_get(m, "id")), REMOVE_ALL) == 0) {
            start = i + 1;
        }
    }
    return start;
}

/*
 * Merges the messages of @p upd from @p start into @p merged (takes it) by id: replaces or
 * appends through @p idx and marks removals in @p rm, counting them in *removed. NULL on
 * failure, with @p merged released.
 */
static sst_value *merge_by_id(sst_value *merged, const sst_value *upd, size_t start,
                              sst__id_index *idx, removals *rm, size_t *removed, const char *field,
                              sst_error *err) {
    for (size_t i = start; i < sst_array_len(upd); i++) {
        const sst_value *m = sst_array_get(upd, i);
        const sst_value *id = sst_object_get(m, "id");
        size_t pos = sst__id_index_find(idx, merged, id);
        if (is_remove(m)) {
            if (pos == SIZE_MAX) {
                char ex[80];
                sst__excerpt(id, ex, sizeof ex);
                sst__error(err, SST_EINVAL,
                           "reducer 'add_messages' on field '%s': Attempting to delete a message "
                           "with an ID that doesn't exist (%s)",
                           field, ex);
                sst_value_unref(merged);
                return NULL;
            }
            *removed += !removed_at(rm, pos);
            if (!removals_set(rm, pos, true)) {
                sst__enomem(err);
                sst_value_unref(merged);
                return NULL;
            }
            continue;
        }
        if (pos != SIZE_MAX) {
            *removed -= removed_at(rm, pos);
            removals_set(rm, pos, false);
            merged = sst_array_set_take(merged, pos, sst_value_ref(m), err);
        } else {
            pos = sst_array_len(merged);
            merged = sst_array_push_take(merged, sst_value_ref(m), err);
            if (merged != NULL && !sst__id_index_put(idx, id, pos)) {
                sst__enomem(err);
                sst_value_unref(merged);
                return NULL;
            }
        }
        if (merged == NULL) {
            return NULL;
        }
    }
    return merged;
}

/* @p merged (taken) without the positions marked in @p rm; the new list has no index. */
static sst_value *without_removed(sst_value *merged, const removals *rm, sst_error *err) {
    sst_value *kept = sst_array_empty();
    sst_array_iter it;
    sst_array_iter_init(&it, merged);
    const sst_value *e;
    for (size_t pos = 0; (e = sst_array_iter_next(&it)) != NULL && kept != NULL; pos++) {
        if (!removed_at(rm, pos)) {
            kept = sst_array_push_take(kept, sst_value_ref(e), err);
        }
    }
    sst_value_unref(merged);
    return kept;
}

/*
 * The merge is O(update): positions come from the id index attached to the
 * current list (built once, O(history), when a list arrives without one,
 * e.g. from a checkpoint) and the new version carries the updated index.
 */
sst_value *sst__reduce_add_messages(void *ud, const char *field, sst_value *cur,
                                    const sst_value *update, sst_error *err) {
    SST_UNUSED(ud);
    if (cur == NULL || sst_is_null(cur)) {
        sst_value_unref(cur);
        cur = sst_array_empty();
    }
    if (!sst_is_array(cur)) {
        sst__reducer_type_error(err, "add_messages", field, "array", cur, true);
        sst_value_unref(cur);
        return NULL;
    }
    sst_value *upd = sst__messages_normalize(field, update, err);
    if (upd == NULL) {
        sst_value_unref(cur);
        return NULL;
    }
    /* "__remove_all__" drops everything before its (last) occurrence. */
    size_t start = remove_all_start(upd);
    sst_value *merged = cur;
    if (start > 0) {
        sst_value_unref(merged);
        merged = sst_array_empty();
    }
    if (start == sst_array_len(upd)) {
        sst_value_unref(upd);
        return merged;
    }
    removals rm = {NULL, NULL, 0, 0};
    sst__id_index *idx = sst__id_index_of(merged);
    if (idx == NULL) {
        idx = sst__id_index_build(merged);
        if (idx == NULL) {
            sst__enomem(err);
            return merge_fail(merged, upd, NULL, &rm);
        }
    }
    size_t removed = 0;
    merged = merge_by_id(merged, upd, start, idx, &rm, &removed, field, err);
    if (merged == NULL) {
        return merge_fail(NULL, upd, idx, &rm);
    }
    if (removed > 0) {
        /* Positions shift: the new list starts without an index. */
        merged = without_removed(merged, &rm, err);
    } else if (sst_value_is_unique(merged)) {
        /* A cache: when attaching fails the next merge rebuilds the index. */
        sst_code ignored = sst_array_attach(merged, &sst__id_index_type, idx, NULL);
        (void)ignored;
    }
    sst_value_unref(upd);
    sst__id_index_unref(idx);
    sst__free(rm.pos);
    sst__free(rm.on);
    return merged;
}
