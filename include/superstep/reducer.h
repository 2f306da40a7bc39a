/* SPDX-License-Identifier: MIT */
/*
 * Field reducers and state schemas (the reducers layer).
 *
 * A reducer merges the writes a superstep made to one state field into the
 * field's current value: `merged = reduce(current, update)`, folded over the
 * writes in task order. The built-ins follow DESIGN.md semantic 2:
 *
 *   replace      last write wins (the default for undeclared fields)
 *   append       list concatenation; a non-list current counts as []; an
 *                update that is not a list is appended as one element
 *   sum          numbers; integers stay exact int64 (overflow is an error),
 *                an integer plus a double is a double; absent/null is 0
 *   merge        shallow object merge; absent/null is {}
 *   deep_merge   recursive object merge; non-objects replace
 *   unique       one write per superstep; two are an SST_ECONFLICT error
 *                naming the field and both values (LangGraph's LastValue)
 *   add_messages OpenAI-style chat messages merged by id (docs/reducers.md)
 *
 * Type mismatches are SST_ETYPE errors naming reducer, field and both types:
 * "reducer 'sum' on field 'counter': expected number, got string".
 *
 * A schema maps field names to reducers and default values, and may instead
 * carry one whole-state reducer that replaces every field reducer.
 *
 * Thread-safety: built-in reducers and a schema that is no longer being
 * changed may be used from any number of threads at once.
 */
#ifndef SUPERSTEP_REDUCER_H
#define SUPERSTEP_REDUCER_H

#include <stdbool.h>
#include <stddef.h>

#include "superstep/error.h"
#include "superstep/export.h"
#include "superstep/value.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sst_reducer sst_reducer;
typedef struct sst_schema sst_schema;

/**
 * A custom binary reducer.
 * @param user_data the pointer given to sst_reducer_new
 * @param field     the field being merged (for error messages)
 * @param current   takes; NULL when the field is absent from the state
 * @param update    borrowed
 * @return new merged value; NULL with @p err filled on failure.
 * Thread-safety: may be called from several threads at once.
 */
typedef sst_value *(*sst_reduce_fn)(void *user_data, const char *field, sst_value *current,
                                    const sst_value *update, sst_error *err);

/** Built-in reducers: static, never freed, usable from any thread. */
SST_API const sst_reducer *sst_reducer_replace(void);
SST_API const sst_reducer *sst_reducer_append(void);
SST_API const sst_reducer *sst_reducer_sum(void);
SST_API const sst_reducer *sst_reducer_merge(void);
SST_API const sst_reducer *sst_reducer_deep_merge(void);
SST_API const sst_reducer *sst_reducer_unique(void);
SST_API const sst_reducer *sst_reducer_add_messages(void);

/** The built-in reducer called @p name ("sum", ...); NULL if there is none. */
SST_API const sst_reducer *sst_reducer_builtin(const char *name);

/** The reducer's name (borrowed); never NULL for a valid reducer. */
SST_API const char *sst_reducer_name(const sst_reducer *r);

/**
 * A custom reducer. @p name (copied) appears in error messages.
 * @return new reducer, freed with sst_reducer_free; NULL with SST_EINVAL or SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_reducer *sst_reducer_new(const char *name, sst_reduce_fn fn,
                                                   void *user_data, sst_error *err);

/** Frees a custom reducer. NULL is a no-op. Schemas keep their own copy. */
SST_API void sst_reducer_free(sst_reducer *r);

/**
 * Merges one superstep's writes to @p field.
 * @param current takes; NULL when the field is absent
 * @param updates borrowed array of @p n borrowed values, in task order (n >= 1);
 *                Overwrite and $writes markers are read as such
 * @return new merged value; NULL on error (the caller's other references to
 *         the current value are untouched).
 */
SST_NODISCARD SST_API sst_value *sst_reducer_apply(const sst_reducer *r, const char *field,
                                                   sst_value *current,
                                                   const sst_value *const *updates, size_t n,
                                                   sst_error *err);

/**
 * Normalises a write before it is stored, so that replaying it later is
 * deterministic. add_messages turns strings and [role, content] pairs into
 * message objects and gives each message without an id a UUIDv4 (inside
 * Overwrite and $writes markers too); the other built-ins return the update
 * unchanged.
 * @param update takes
 * @return new normalised update; NULL on error.
 */
SST_NODISCARD SST_API sst_value *sst_reducer_prepare(const sst_reducer *r, const char *field,
                                                     sst_value *update, sst_error *err);

/* ---- update markers ----------------------------------------------------- */

/*
 * Two values a write may take that the reducers read as instructions, not
 * data (LangGraph's Overwrite and a node's repeated writes). They are stored
 * as they are in checkpoint deltas, so a replay gives the same state.
 *
 *   {"__overwrite__": v}    Overwrite(v): the field becomes v, bypassing its
 *                           reducer; the superstep's other writes to the
 *                           field are dropped. Two Overwrites of one field in
 *                           one superstep are an SST_ECONFLICT error ("Can
 *                           receive only one Overwrite value per super-step.").
 *   {"$writes": [w1, w2]}   several writes to one field from one update,
 *                           merged in order as separate writes.
 *
 * An object is a marker only when that key is its only member.
 */
#define SST_OVERWRITE_KEY "__overwrite__"
#define SST_WRITES_KEY    "$writes"

/**
 * Overwrite(value): {"__overwrite__": value}. Write it to a field (e.g. with
 * sst_node_update) to set the field to @p value whatever its reducer.
 * @param value takes
 * @return new marker; NULL with SST_EINVAL (NULL value) or SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_value *sst_overwrite_new(sst_value *value, sst_error *err);

/** The value an Overwrite marker carries (borrowed), or NULL when @p v is not one. */
SST_API const sst_value *sst_overwrite_value(const sst_value *v);

/**
 * Adds one write of @p value to @p field of @p delta: the field's first
 * write is stored as it is; a second turns it into a {"$writes": [...]}
 * marker, so each write goes through the reducer in order.
 * @param delta takes: an object
 * @param value takes
 * @return the new delta; NULL with SST_EINVAL, SST_ETYPE (not an object) or SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_value *sst_delta_add_write(sst_value *delta, const char *field,
                                                     sst_value *value, sst_error *err);

/* ---- schemas ---------------------------------------------------------- */

/**
 * A whole-state reducer: merges a superstep's deltas into the state at once
 * (seed 002: state reducer > field reducers > default).
 * @param state  takes: the current state object
 * @param deltas borrowed objects, in task order
 * @return new state object; NULL with @p err filled on failure.
 */
typedef sst_value *(*sst_state_reduce_fn)(void *user_data, sst_value *state,
                                          const sst_value *const *deltas, size_t n, sst_error *err);

/** @return a new empty schema (every field `replace`); NULL on SST_ENOMEM. */
SST_NODISCARD SST_API sst_schema *sst_schema_new(sst_error *err);

/** A copy of @p s (fields, defaults, state reducer). @return new; NULL on SST_ENOMEM. */
SST_NODISCARD SST_API sst_schema *sst_schema_copy(const sst_schema *s, sst_error *err);

/** Frees a schema. NULL is a no-op. */
SST_API void sst_schema_free(sst_schema *s);

/**
 * Declares @p field with reducer @p r (copied: a custom reducer may be freed
 * afterwards) and an optional default.
 * @param default_value takes; NULL for none. add_messages defaults are normalised.
 * @return SST_OK; SST_EINVAL (NULL argument, field declared twice), SST_ENOMEM,
 *         or the error of normalising the default.
 */
SST_NODISCARD SST_API sst_code sst_schema_add_field(sst_schema *s, const char *field,
                                                    const sst_reducer *r, sst_value *default_value,
                                                    sst_error *err);

/** Uses @p fn for whole deltas instead of the field reducers. */
SST_NODISCARD SST_API sst_code sst_schema_set_state_reducer(sst_schema *s, sst_state_reduce_fn fn,
                                                            void *user_data, sst_error *err);

/**
 * A closed schema drops the members of an update (a node's write, the
 * input, update_state values) that are not declared fields, as LangGraph
 * ignores keys that are not state channels. Engine fields ("__...") stay.
 * Open (the default): undeclared fields use `replace`.
 * @return SST_OK; SST_EINVAL for a NULL schema.
 */
SST_NODISCARD SST_API sst_code sst_schema_set_closed(sst_schema *s, bool closed, sst_error *err);
SST_API bool sst_schema_closed(const sst_schema *s);

/** The reducer of @p field: the declared one, else replace (borrowed). */
SST_API const sst_reducer *sst_schema_field_reducer(const sst_schema *s, const char *field);

/** Number of declared fields and their names in declaration order (borrowed). */
SST_API size_t sst_schema_field_count(const sst_schema *s);
SST_API const char *sst_schema_field_name(const sst_schema *s, size_t i);

/** @return new object holding every declared default; NULL on SST_ENOMEM. */
SST_NODISCARD SST_API sst_value *sst_schema_initial_state(const sst_schema *s, sst_error *err);

/**
 * Normalises a delta (a task's partial update) field by field with
 * sst_reducer_prepare (the writes inside markers included); a closed
 * schema drops undeclared fields first.
 * @param delta takes: an object
 * @return new delta; NULL with SST_ETYPE (not an object) or a reducer's error.
 */
SST_NODISCARD SST_API sst_value *sst_schema_prepare_delta(const sst_schema *s, sst_value *delta,
                                                          sst_error *err);

/**
 * Applies one superstep's deltas to the state: each written field is merged
 * by its reducer from the writes in delta order, fields in order of first
 * write (or all at once by the whole-state reducer, which gets the update
 * markers as they are). Overwrite and $writes markers apply as described
 * above (sst_reducer_apply reads them).
 * @param state  takes: an object (NULL means {})
 * @param deltas borrowed objects in task order
 * @return new state; NULL on error. Keep your own reference to the old state
 *         to leave it untouched on error.
 */
SST_NODISCARD SST_API sst_value *sst_schema_apply(const sst_schema *s, sst_value *state,
                                                  const sst_value *const *deltas, size_t n,
                                                  sst_error *err);

#ifdef __cplusplus
}
#endif
#endif /* SUPERSTEP_REDUCER_H */
