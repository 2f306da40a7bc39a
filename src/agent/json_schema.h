/* SPDX-License-Identifier: MIT */
/*
 * A JSON Schema validator for a documented subset of draft 2020-12
 * (docs/json-schema.md): a model's structured answer and tool-call arguments
 * are checked with it. A schema is compiled once (checking the schema itself)
 * into an immutable tree of checks; validating an instance lists every
 * failure with its JSON-Pointer location, in words a model can act on.
 */
#ifndef SUPERSTEP_AGENT_JSON_SCHEMA_H
#define SUPERSTEP_AGENT_JSON_SCHEMA_H

#include "common.h"
#include "superstep/value.h"

/* A compiled schema. Immutable once compiled. */
typedef struct sst__json_schema sst__json_schema;

/* Failures listed in a report when the caller does not say (sst__json_schema_validate). */
#define SST__JSON_SCHEMA_MAX_FAILURES 8
/* Instance nesting that validation descends into (properties, items, ...). */
#define SST__JSON_SCHEMA_MAX_DEPTH 64
/* Subschemas applied in a row to one instance location ($ref, allOf, anyOf, not, if, ...). */
#define SST__JSON_SCHEMA_MAX_CHAIN 64
/* Subschema nesting inside the schema document (compile). */
#define SST__JSON_SCHEMA_MAX_NESTING 128
/*
 * Work of one validation (schema evaluations and pattern steps): a bound on
 * what a hostile schema or value can cause. The budget grows by 64 steps per
 * value of the instance when reached, so large values are checked in full.
 */
#define SST__JSON_SCHEMA_MAX_STEPS 20000000

/*
 * Compiles @p schema (borrowed; the compiled schema keeps a reference).
 * Checks the schema itself: a keyword of the wrong type, an unresolvable or
 * remote "$ref", a "pattern" that is not a regular expression or uses an
 * ECMA-262 feature we do not translate, and the keywords we do not implement
 * ("$dynamicRef", "unevaluatedProperties", ...) fail with SST_EINVAL and a
 * message naming the schema location ("schema at /properties/age: 'minimum'
 * must be a number"). A schema nested deeper than
 * SST__JSON_SCHEMA_MAX_NESTING, or whose "$ref"/"allOf"/... chain at one
 * instance location is longer than SST__JSON_SCHEMA_MAX_CHAIN or loops, fails
 * with SST_ELIMIT or SST_EINVAL (a cycle). SST_ENOMEM when out of memory.
 * @return new compiled schema (free with sst__json_schema_free); NULL on failure.
 */
SST_NODISCARD sst__json_schema *sst__json_schema_compile(const sst_value *schema, sst_error *err);

/* Frees @p s; NULL is a no-op. */
void sst__json_schema_free(sst__json_schema *s);

/* The schema @p s was compiled from (borrowed). */
const sst_value *sst__json_schema_source(const sst__json_schema *s);

/*
 * Validates @p instance (borrowed) against @p s.
 * @return SST_OK; SST_EINVAL with up to SST__JSON_SCHEMA_MAX_FAILURES
 *         failures in err->msg, as many as fit, separated by "; " and each
 *         "LOCATION: what is wrong" ("/items/2/name: expected string, got
 *         integer; /: missing required property 'age'; and 3 more");
 *         SST_ELIMIT when validation stopped at a limit (a value nested deeper
 *         than SST__JSON_SCHEMA_MAX_DEPTH, more work than
 *         SST__JSON_SCHEMA_MAX_STEPS allows); SST_ENOMEM.
 * Thread-safety: any number of threads may validate with one compiled schema.
 */
SST_NODISCARD sst_code sst__json_schema_validate(const sst__json_schema *s,
                                                 const sst_value *instance, sst_error *err);

/*
 * sst__json_schema_validate with the whole report, which err->msg
 * (SST_ERROR_MSG_MAX bytes) may be too short for.
 * @param where        NULL or "": locations are JSON Pointers with "/" for the
 *                     instance itself; else they start with @p where
 *                     ("arguments", "arguments/tags/0").
 * @param max_failures failures described (0: SST__JSON_SCHEMA_MAX_FAILURES);
 *                     more are counted ("; and 3 more").
 * @param report       OUT (may be NULL): on SST_EINVAL or SST_ELIMIT, the whole
 *                     text (new, sst__free); else NULL.
 * Thread-safety: as sst__json_schema_validate.
 */
SST_NODISCARD sst_code sst__json_schema_validate_report(const sst__json_schema *s,
                                                        const sst_value *instance,
                                                        const char *where, size_t max_failures,
                                                        char **report, sst_error *err);

#endif
