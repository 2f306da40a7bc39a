/* SPDX-License-Identifier: MIT */
/*
 * The node cache handle (include/superstep/cache.h): the reference count,
 * the ops version check, and the argument checks every call goes through.
 * The backends are cache_memory.c and cache_sqlite.c.
 */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "common.h"
#include "superstep/cache.h"

struct sst_cache {
    sst_cache_ops ops; /* the implementation's, zero past what its version has */
    void *self;        /* the implementation, handed to every op and to destroy */
    atomic_size_t refs;
};

/* The bytes of sst_cache_ops that an implementation of @p version fills. */
static size_t ops_size(unsigned version) {
    switch (version) {
        case 1:
            return offsetof(sst_cache_ops, clear) + sizeof(((sst_cache_ops *)0)->clear);
        default:
            return 0;
    }
}

sst_cache *sst_cache_new(const sst_cache_ops *ops, void *self, sst_error *err) {
    if (ops == NULL) {
        sst__error(err, SST_EINVAL, "cache: NULL ops");
        return NULL;
    }
    if (ops->version == 0 || ops->version > SST_CACHE_OPS_VERSION) {
        sst__error(err, SST_EINVAL,
                   "cache: ops version %u is not supported (this build knows versions 1 to %d)",
                   ops->version, SST_CACHE_OPS_VERSION);
        return NULL;
    }
    if (ops->destroy == NULL || ops->get == NULL || ops->set == NULL || ops->clear == NULL) {
        sst__error(err, SST_EINVAL, "cache: destroy, get, set and clear are all required");
        return NULL;
    }
    sst_cache *c = sst__calloc(1, sizeof *c);
    if (c == NULL) {
        sst__enomem(err);
        return NULL;
    }
    /* An older implementation's struct may be smaller: copy only what its version has. */
    memcpy(&c->ops, ops, ops_size(ops->version));
    c->self = self;
    atomic_init(&c->refs, 1);
    return c;
}

sst_cache *sst_cache_ref(sst_cache *c) {
    if (c != NULL) {
        atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
    }
    return c;
}

void sst_cache_free(sst_cache *c) {
    if (c == NULL || atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1) {
        return;
    }
    c->ops.destroy(c->self);
    sst__free(c);
}

/* SST_EINVAL unless the cache, namespace and key are all given. */
static sst_code need_args(const sst_cache *c, const char *ns, const char *key, const char *what,
                          sst_error *err) {
    if (c == NULL) {
        return sst__error(err, SST_EINVAL, "cache %s: NULL cache", what);
    }
    if (ns == NULL || key == NULL) {
        return sst__error(err, SST_EINVAL, "cache %s: NULL %s", what,
                          ns == NULL ? "namespace" : "key");
    }
    return SST_OK;
}

sst_code sst_cache_get(sst_cache *c, const char *ns, const char *key, sst_value **out,
                       sst_error *err) {
    if (out == NULL) {
        return sst__error(err, SST_EINVAL, "cache get: NULL out");
    }
    *out = NULL;
    sst_code rc = need_args(c, ns, key, "get", err);
    rc = rc == SST_OK ? c->ops.get(c->self, ns, key, out, err) : rc;
    if (rc != SST_OK && *out != NULL) { /* a backend that failed after all must not leak */
        sst_value_unref(*out);
        *out = NULL;
    }
    return rc;
}

sst_code sst_cache_set(sst_cache *c, const char *ns, const char *key, const sst_value *value,
                       double ttl_s, sst_error *err) {
    sst_code rc = need_args(c, ns, key, "set", err);
    if (rc != SST_OK) {
        return rc;
    }
    if (value == NULL) {
        return sst__error(err, SST_EINVAL, "cache set: NULL value for key '%s' in namespace '%s'",
                          key, ns);
    }
    if (!isfinite(ttl_s) || ttl_s < 0) {
        return sst__error(err, SST_EINVAL,
                          "cache set: ttl %g s for key '%s' must be a finite number >= 0 "
                          "(0: never expires)",
                          ttl_s, key);
    }
    return c->ops.set(c->self, ns, key, value, ttl_s, err);
}

sst_code sst_cache_clear(sst_cache *c, const char *ns, sst_error *err) {
    if (c == NULL) {
        return sst__error(err, SST_EINVAL, "cache clear: NULL cache");
    }
    return c->ops.clear(c->self, ns, err);
}
