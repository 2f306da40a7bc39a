/* SPDX-License-Identifier: MIT */
/* Private parts of the reducers layer: the reducer record and error helpers. */
#ifndef SUPERSTEP_REDUCERS_INT_H
#define SUPERSTEP_REDUCERS_INT_H

#include "common.h"
#include "superstep/json.h"
#include "superstep/reducer.h"
#include "superstep/value.h"

typedef enum sst__reducer_kind {
    SST__R_REPLACE,
    SST__R_APPEND,
    SST__R_SUM,
    SST__R_MERGE,
    SST__R_DEEP_MERGE,
    SST__R_UNIQUE,
    SST__R_ADD_MESSAGES,
    SST__R_CUSTOM
} sst__reducer_kind;

struct sst_reducer {
    sst__reducer_kind kind;
    const char *name; /* static for built-ins; owned (sst__malloc) for custom ones */
    sst_reduce_fn fn; /* the binary merge */
    void *user_data;
};

/* Built-in binary merges (builtin.c, add_messages.c). */
sst_value *sst__reduce_replace(void *ud, const char *field, sst_value *cur, const sst_value *upd,
                               sst_error *err);
sst_value *sst__reduce_append(void *ud, const char *field, sst_value *cur, const sst_value *upd,
                              sst_error *err);
sst_value *sst__reduce_sum(void *ud, const char *field, sst_value *cur, const sst_value *upd,
                           sst_error *err);
sst_value *sst__reduce_merge(void *ud, const char *field, sst_value *cur, const sst_value *upd,
                             sst_error *err);
sst_value *sst__reduce_deep_merge(void *ud, const char *field, sst_value *cur, const sst_value *upd,
                                  sst_error *err);
sst_value *sst__reduce_add_messages(void *ud, const char *field, sst_value *cur,
                                    const sst_value *upd, sst_error *err);
/* add_messages normalisation: a new array of message objects with ids. */
sst_value *sst__messages_normalize(const char *field, const sst_value *update, sst_error *err);

/* ---- update markers (writes.c) ---- */

/* The writes of a {"$writes": [...]} marker (borrowed), or NULL when @p v is not one. */
const sst_value *sst__writes_list(const sst_value *v);
/* True when one of @p updates is an Overwrite or a $writes marker. */
bool sst__writes_has_markers(const sst_value *const *updates, size_t n);
/* @p updates with $writes markers expanded in place (new array of borrowed values). */
const sst_value **sst__writes_flatten(const sst_value *const *updates, size_t n, size_t *out_n,
                                      sst_error *err);
/* The one Overwrite's value among flat @p updates, or NULL; two set *conflict and @p err. */
const sst_value *sst__writes_overwrite(const char *field, const sst_value *const *updates, size_t n,
                                       bool *conflict, sst_error *err);
/* add_messages normalisation of a write that may be a marker (takes @p update). */
sst_value *sst__messages_prepare(const char *field, sst_value *update, sst_error *err);

/* The add_messages id index (id_index.c). */
typedef struct sst__id_index sst__id_index;
extern const sst_attachment_type sst__id_index_type;
/* A new index of the ids of @p list (refcount 1); NULL on OOM. */
sst__id_index *sst__id_index_build(const sst_value *list);
/* The index attached to @p list (a new reference), or NULL. */
sst__id_index *sst__id_index_of(const sst_value *list);
/* The position of @p id in @p list, or SIZE_MAX. */
size_t sst__id_index_find(sst__id_index *x, const sst_value *list, const sst_value *id);
/* Records that @p id is at @p pos (in a version that carries this index). false on OOM. */
bool sst__id_index_put(sst__id_index *x, const sst_value *id, size_t pos);
void sst__id_index_unref(sst__id_index *x);

/* "number" for ints and doubles, else the type name. */
const char *sst__type_word(const sst_value *v);

/*
 * Writes a compact JSON excerpt of @p v into @p out (at most @p n bytes,
 * cut with "..." when longer) for error messages.
 */
void sst__excerpt(const sst_value *v, char *out, size_t n);

/* "reducer 'R' on field 'F': expected E, got T" */
sst_code sst__reducer_type_error(sst_error *err, const char *reducer, const char *field,
                                 const char *expected, const sst_value *got, bool in_current);

#endif /* SUPERSTEP_REDUCERS_INT_H */
