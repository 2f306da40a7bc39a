/* SPDX-License-Identifier: MIT */
/*
 * The node cache contract (the checkpoint layer, below graph): LangGraph's
 * BaseCache. A node with a cache policy (sst_node_opts.cache_policy) looks
 * its writes up by a key made from its input before it runs; a hit skips
 * the node and replays the writes it made the first time.
 *
 * A cache maps (namespace, key) to a value, with an optional time to live.
 * The engine's namespaces are "writes|<graph name>|<node>" and its keys are
 * hashes of the node's input or what the node's key function returns; a
 * backend treats both as opaque strings. Values are sst_values; a backend
 * may keep them (memory) or their JSON text (SQLite).
 *
 * A cache is an optimisation: the engine treats a failing lookup as a miss
 * and a failing store as nothing stored, so a broken cache never fails a run.
 *
 * Thread-safety: tasks on several worker threads use one cache at once; the
 * provided caches take their own mutex. Lifetime: reference counted, as
 * sst_checkpointer; a compiled graph holds a reference to its cache.
 */
#ifndef SUPERSTEP_CACHE_H
#define SUPERSTEP_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "superstep/error.h"
#include "superstep/export.h"
#include "superstep/value.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The version of sst_cache_ops this header describes. */
#define SST_CACHE_OPS_VERSION 1

/**
 * A cache backend. Fill by field name; every operation returns SST_OK or an
 * error code with @p err filled (a storage failure is SST_EIO).
 */
typedef struct sst_cache_ops {
    unsigned version; /* SST_CACHE_OPS_VERSION as the implementation was built */
    /* Frees the implementation; called once, when the last reference goes. */
    void (*destroy)(void *self);
    /*
     * Looks up (@p ns, @p key): *out is a new reference to the value, or NULL
     * when there is none or it expired (an expired entry may be dropped).
     */
    sst_code (*get)(void *self, const char *ns, const char *key, sst_value **out, sst_error *err);
    /*
     * Stores @p value (borrowed; keep a reference or a copy) under (@p ns,
     * @p key), replacing any entry, expiring @p ttl_s seconds from now
     * (0: never).
     */
    sst_code (*set)(void *self, const char *ns, const char *key, const sst_value *value,
                    double ttl_s, sst_error *err);
    /* Removes every entry of namespace @p ns, or every entry when @p ns is NULL. */
    sst_code (*clear)(void *self, const char *ns, sst_error *err);
} sst_cache_ops;

typedef struct sst_cache sst_cache;

/**
 * Wraps an implementation (@p ops copied). @return new cache holding one
 * reference; NULL with SST_EINVAL (a newer or zero version, a missing
 * operation: all are required), SST_ENOMEM. On failure @p self is not
 * destroyed.
 */
SST_NODISCARD SST_API sst_cache *sst_cache_new(const sst_cache_ops *ops, void *self,
                                               sst_error *err);
/** Adds a reference; returns @p c. */
SST_API sst_cache *sst_cache_ref(sst_cache *c);
/** Drops a reference; the last one destroys the implementation. NULL is a no-op. */
SST_API void sst_cache_free(sst_cache *c);

/** As the ops, checking the arguments (NULL cache, namespace or key: SST_EINVAL). */
SST_NODISCARD SST_API sst_code sst_cache_get(sst_cache *c, const char *ns, const char *key,
                                             sst_value **out, sst_error *err);
SST_NODISCARD SST_API sst_code sst_cache_set(sst_cache *c, const char *ns, const char *key,
                                             const sst_value *value, double ttl_s, sst_error *err);
SST_NODISCARD SST_API sst_code sst_cache_clear(sst_cache *c, const char *ns, sst_error *err);

/** LangGraph's InMemoryCache: entries live as long as the cache. */
SST_NODISCARD SST_API sst_cache *sst_memory_cache_new(sst_error *err);

/**
 * LangGraph's SqliteCache: entries in table `sst_cache` of the SQLite file
 * @p path (created if needed; the checkpointer's file may be shared), kept
 * across processes. SST_EIO names the file when it cannot be opened.
 */
SST_NODISCARD SST_API sst_cache *sst_sqlite_cache_open(const char *path, sst_error *err);

#ifdef __cplusplus
}
#endif
#endif /* SUPERSTEP_CACHE_H */
