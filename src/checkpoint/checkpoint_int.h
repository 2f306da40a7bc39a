/* SPDX-License-Identifier: MIT */
/* The checkpointer wrapper and helpers shared by the savers. */
#ifndef SUPERSTEP_CHECKPOINT_INT_H
#define SUPERSTEP_CHECKPOINT_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "common.h"
#include "superstep/checkpoint.h"
#include "superstep/json.h"

struct sst_checkpointer {
    sst_checkpointer_ops ops; /* the implementation's, zero past its size */
    void *self;
    atomic_size_t refs;
    pthread_mutex_t mu; /* guards ext */
    /* Data a higher layer keeps per checkpointer (the graph's state cache),
     * made on first use and freed with the checkpointer. */
    void *ext;
    void (*ext_free)(void *ext);
};

/*
 * The data a higher layer keeps with @p cp: made by @p make on first use
 * (under the checkpointer's mutex), freed by @p free_fn with the checkpointer.
 * NULL with err filled when @p make fails.
 */
void *sst__checkpointer_ext(sst_checkpointer *cp, void *(*make)(sst_error *err),
                            void (*free_fn)(void *ext), sst_error *err);

/*
 * True when @p metadata (an object, or NULL) has every member of @p filter
 * with an equal value; members "source" and "step" missing from @p metadata
 * compare with @p source and @p step instead. NULL @p filter: true.
 */
bool sst__metadata_matches(const sst_value *metadata, const sst_value *filter, const char *source,
                           int64_t step);
/* For savers that filter in the process: whether a record's metadata payload matches
 * @p filter (sst_checkpoint_query.filter; NULL: true). */
bool sst__record_matches(const sst_checkpoint *r, const sst_value *filter);
/* The largest payload of a record (body, next, metadata or a blob's content), in bytes:
 * what a saver's size limit applies to. */
size_t sst__record_largest(const sst_checkpoint *r);
/* Whether a thread passes @p q's status and metadata conditions. */
bool sst__thread_matches(const sst_thread_info *t, const sst_thread_query *q);
/* A query's conditions, offset and limit applied in the process to the threads a saver
 * lists in the query's order: start it as {.q = q} (.skipped = the threads the saver's
 * own query skipped already) and give it every thread listed. */
typedef struct sst__thread_pager {
    const sst_thread_query *q;
    size_t skipped, sent;
} sst__thread_pager;
/* Gives @p t to @p each when it matches and is past the offset. @return whether the
 * listing goes on (false once the limit is reached or @p each said stop). */
bool sst__thread_page(sst__thread_pager *p, const sst_thread_info *t, sst_thread_fn each,
                      void *user_data);

/* A payload's value (new reference), parsing its bytes as JSON; NULL for an empty payload. */
sst_value *sst__payload_parse(const sst_payload *p, size_t max_bytes, sst_error *err);

/* True when @p p holds nothing. */
static inline bool sst__payload_empty(const sst_payload *p) {
    return p == NULL || (p->data == NULL && p->value == NULL);
}

#endif /* SUPERSTEP_CHECKPOINT_INT_H */
