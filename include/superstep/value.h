/* SPDX-License-Identifier: MIT */
/*
 * sst_value: immutable, reference-counted JSON values (the values layer).
 *
 * Ownership words used on every function (docs/values.md):
 *   new      - the caller owns one reference and must call sst_value_unref;
 *   borrowed - valid while the parent value (or the caller's reference) lives;
 *              call sst_value_ref to keep it longer;
 *   takes    - the function consumes the caller's reference, even on failure.
 *
 * Values are immutable once published: reading one value from many threads
 * needs no lock, and ref/unref are atomic (relaxed increment, acq_rel
 * decrement). Containers change only through `_take` functions, which return
 * the updated container; when the caller holds the only reference the update
 * happens in place, otherwise a new version is made that shares structure
 * with the old one (arrays are persistent vectors: push, set and get are
 * O(log32 n); objects are copied on write). Borrowed pointers into a
 * container you pass to a `_take` function are invalid afterwards.
 *
 * Thread-safety: every function is thread-safe on values the caller holds a
 * reference to; a `_take` function must not race with other uses of the
 * reference it consumes.
 */
#ifndef SUPERSTEP_VALUE_H
#define SUPERSTEP_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "superstep/error.h"
#include "superstep/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sst_value sst_value;

/** True when @p len bytes at @p s are valid UTF-8 (no overlongs, no surrogates). Allocates nothing.
 */
SST_API bool sst_utf8_valid(const char *s, size_t len);

/** The JSON type of a value. Integers and doubles are distinct types. */
typedef enum sst_type {
    SST_TYPE_NULL,
    SST_TYPE_BOOL,
    SST_TYPE_INT,    /* int64_t, exact */
    SST_TYPE_DOUBLE, /* finite double */
    SST_TYPE_STRING, /* valid UTF-8, may contain NUL */
    SST_TYPE_ARRAY,
    SST_TYPE_OBJECT
} sst_type;

/** "null", "boolean", "integer", "double", "string", "array" or "object"; never NULL. */
SST_API const char *sst_type_name(sst_type type);

/* ---- references ------------------------------------------------------- */

/** Adds a reference. @return new (the same pointer as @p v); NULL if @p v is NULL. */
SST_API sst_value *sst_value_ref(const sst_value *v);

/** Drops a reference, freeing the value with its last one. NULL is a no-op. */
SST_API void sst_value_unref(sst_value *v);

/** True when the caller's reference is the only one (an update would happen in place). */
SST_API bool sst_value_is_unique(const sst_value *v);

/* ---- scalars ---------------------------------------------------------- */

/*
 * The immortal singletons: null, true, false, "", [] and {}. They are "new"
 * references whose ref/unref are no-ops, so passing them to `_take`
 * functions and unref'ing them is always correct.
 */
SST_API sst_value *sst_null(void);
SST_API sst_value *sst_bool(bool b);
SST_API sst_value *sst_string_empty(void);
SST_API sst_value *sst_array_empty(void);
SST_API sst_value *sst_object_empty(void);

/** @return new integer; NULL on SST_ENOMEM. */
SST_NODISCARD SST_API sst_value *sst_int_new(int64_t i, sst_error *err);

/** @return new double; NULL with SST_ERANGE if @p d is NaN or infinite (JSON has neither). */
SST_NODISCARD SST_API sst_value *sst_double_new(double d, sst_error *err);

/** A string from a NUL-terminated UTF-8 text. @return new; NULL on SST_EUTF8 or SST_ENOMEM. */
SST_NODISCARD SST_API sst_value *sst_string_new(const char *s, sst_error *err);

/** A string from @p len bytes of UTF-8 (NUL allowed). @return new; NULL on SST_EUTF8/ENOMEM. */
SST_NODISCARD SST_API sst_value *sst_string_newn(const char *s, size_t len, sst_error *err);

SST_API sst_type sst_value_type(const sst_value *v);
SST_API bool sst_is_null(const sst_value *v);
SST_API bool sst_is_bool(const sst_value *v);
SST_API bool sst_is_int(const sst_value *v);
SST_API bool sst_is_double(const sst_value *v);
/** True for integers and doubles. */
SST_API bool sst_is_number(const sst_value *v);
SST_API bool sst_is_string(const sst_value *v);
SST_API bool sst_is_array(const sst_value *v);
SST_API bool sst_is_object(const sst_value *v);

/** The boolean; false for any non-boolean. */
SST_API bool sst_bool_value(const sst_value *v);
/** The integer; 0 for any non-integer (doubles are not converted). */
SST_API int64_t sst_int_value(const sst_value *v);
/** The double; 0.0 for any non-double. */
SST_API double sst_double_value(const sst_value *v);
/** An integer or double as double; 0.0 otherwise. */
SST_API double sst_number_value(const sst_value *v);
/** The NUL-terminated text (borrowed); "" for any non-string. */
SST_API const char *sst_string_cstr(const sst_value *v);
/** The length in bytes; 0 for any non-string. */
SST_API size_t sst_string_len(const sst_value *v);

/* ---- arrays ----------------------------------------------------------- */

/** Number of elements; 0 for any non-array. */
SST_API size_t sst_array_len(const sst_value *a);

/** Element @p i (borrowed), O(log32 n); NULL if out of range or not an array. */
SST_API const sst_value *sst_array_get(const sst_value *a, size_t i);

/**
 * Appends @p item. Amortised O(1); shares all but the tail with the old version.
 * @param a     takes: an array
 * @param item  takes
 * @return new: the updated array (the same pointer when @p a was unique);
 *         NULL with SST_ETYPE if @p a is not an array, SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_value *sst_array_push_take(sst_value *a, sst_value *item, sst_error *err);

/**
 * Replaces element @p i with @p item, O(log32 n).
 * @param a takes; @param item takes
 * @return new: the updated array; NULL with SST_ERANGE (i >= length), SST_ETYPE, SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_value *sst_array_set_take(sst_value *a, size_t i, sst_value *item,
                                                    sst_error *err);

/**
 * Appends every element of @p b to @p a.
 * @param a takes; @param b borrowed
 * @return new: the concatenation; NULL with SST_ETYPE (either is not an array), SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_value *sst_array_concat_take(sst_value *a, const sst_value *b,
                                                       sst_error *err);

/**
 * Sequential reader of an array, faster than repeated sst_array_get.
 * Fields are private. The array must stay alive while iterating.
 */
typedef struct sst_array_iter {
    const sst_value *array_;
    size_t next_;
    const void *leaf_;
} sst_array_iter;

SST_API void sst_array_iter_init(sst_array_iter *it, const sst_value *a);
/** The next element (borrowed), or NULL at the end. */
SST_API const sst_value *sst_array_iter_next(sst_array_iter *it);

/**
 * Derived data cached on an array (for example an index of its elements by
 * id). An attachment lives as long as the array version it was attached to
 * and is dropped by any change to the array: a new version starts without.
 */
typedef struct sst_attachment_type {
    void (*ref)(void *data);   /* adds a reference to the data */
    void (*unref)(void *data); /* drops one; frees the data with the last */
} sst_attachment_type;

/**
 * Attaches @p data (the array takes a reference through type->ref),
 * replacing an earlier attachment.
 * @param a borrowed; must be unique (the caller's reference is the only one)
 * @return SST_OK; SST_EINVAL if @p a is not a unique array.
 * Thread-safety: like an in-place update: before @p a is shared.
 */
SST_NODISCARD SST_API sst_code sst_array_attach(sst_value *a, const sst_attachment_type *type,
                                                void *data, sst_error *err);

/** The data attached to @p a with @p type (borrowed), or NULL. */
SST_API void *sst_array_attachment(const sst_value *a, const sst_attachment_type *type);

/* ---- objects ---------------------------------------------------------- */

/** Number of members; 0 for any non-object. */
SST_API size_t sst_object_len(const sst_value *o);

/** Member @p key (borrowed); NULL if absent or @p o is not an object. */
SST_API const sst_value *sst_object_get(const sst_value *o, const char *key);
SST_API const sst_value *sst_object_getn(const sst_value *o, const char *key, size_t key_len);

/** Key of member @p i in insertion order (borrowed string value); NULL if out of range. */
SST_API const sst_value *sst_object_key_at(const sst_value *o, size_t i);
/** Value of member @p i in insertion order (borrowed); NULL if out of range. */
SST_API const sst_value *sst_object_value_at(const sst_value *o, size_t i);

/**
 * Sets member @p key. An existing key keeps its position; a new key goes last.
 * @param o takes; @param key borrowed UTF-8; @param val takes
 * @return new: the updated object; NULL with SST_ETYPE, SST_EUTF8 (bad key), SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_value *sst_object_set_take(sst_value *o, const char *key, sst_value *val,
                                                     sst_error *err);
SST_NODISCARD SST_API sst_value *sst_object_setn_take(sst_value *o, const char *key, size_t key_len,
                                                      sst_value *val, sst_error *err);
/** As sst_object_set_take with the key given as a string value (borrowed, shared). */
SST_NODISCARD SST_API sst_value *sst_object_setv_take(sst_value *o, const sst_value *key,
                                                      sst_value *val, sst_error *err);

/**
 * Removes member @p key, keeping the order of the others. Absent keys are fine.
 * @param o takes
 * @return new: the updated object; NULL with SST_ETYPE or SST_ENOMEM.
 */
SST_NODISCARD SST_API sst_value *sst_object_remove_take(sst_value *o, const char *key,
                                                        sst_error *err);

/* ---- comparison ------------------------------------------------------- */

/**
 * Deep equality. Numbers compare by value (1 equals 1.0); objects compare
 * as sets of members (key order is ignored); arrays element by element.
 */
SST_API bool sst_value_equal(const sst_value *a, const sst_value *b);

/**
 * A stable 64-bit hash, the same in every process and on every platform:
 * equal values (as sst_value_equal) hash equally.
 */
SST_API uint64_t sst_value_hash(const sst_value *v);

#ifdef __cplusplus
}
#endif
#endif /* SUPERSTEP_VALUE_H */
