/* SPDX-License-Identifier: MIT */
/*
 * The in-memory node cache (LangGraph's InMemoryCache, include/superstep/cache.h):
 * a chained hash table of (namespace, key) -> a reference to the value and its
 * deadline, under one mutex. Values are immutable, so an entry shares the
 * caller's value and a hit hands out another reference to it.
 *
 * Lock order: only m->mu. Nothing is freed and no value is released while it
 * is held: entries taken out of the table go on a local list freed after the
 * unlock, so a large value's release never stalls the other workers.
 */
#include <pthread.h>
#include <time.h>

#include "common.h"
#include "superstep/cache.h"

typedef struct entry {
    struct entry *next; /* the bucket's chain, or the list of entries to free */
    uint64_t hash;      /* of the namespace and the key */
    double expires;     /* monotonic seconds (now_s); 0: never */
    sst_value *value;   /* owned reference */
    size_t key_at;      /* text + key_at is the key */
    char text[];        /* the namespace, NUL, the key, NUL */
} entry;

typedef struct memory_cache {
    pthread_mutex_t mu;
    entry **buckets;  /* protected by mu; n_buckets chains */
    size_t n_buckets; /* protected by mu; a power of two */
    size_t count;     /* protected by mu; entries in the table, expired ones too */
} memory_cache;

#define FIRST_BUCKETS 16

/* Monotonic seconds: deadlines in this process are immune to wall-clock steps. */
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t hash_of(const char *ns, const char *key) {
    uint64_t h = sst__hash_bytes(ns, strlen(ns) + 1, 0x53535443); /* the NUL keeps ns|key apart */
    return sst__hash_bytes(key, strlen(key), h);
}

static bool is_expired(const entry *e, double now) {
    return e->expires != 0 && e->expires <= now;
}

/* The link that points at the entry of (ns, key), or at the NULL ending its chain. */
static entry **find(memory_cache *m, uint64_t hash, const char *ns, const char *key) {
    entry **link = &m->buckets[hash & (m->n_buckets - 1)];
    for (; *link != NULL; link = &(*link)->next) {
        entry *e = *link;
        if (e->hash == hash && strcmp(e->text, ns) == 0 && strcmp(e->text + e->key_at, key) == 0) {
            break;
        }
    }
    return link;
}

/* Moves the entry at *link onto *dead (freed by the caller after the unlock). */
static void unlink_to(memory_cache *m, entry **link, entry **dead) {
    entry *e = *link;
    *link = e->next;
    e->next = *dead;
    *dead = e;
    m->count--;
}

static void free_entries(entry *e) {
    while (e != NULL) {
        entry *next = e->next;
        sst_value_unref(e->value);
        sst__free(e);
        e = next;
    }
}

/*
 * Moves every entry of namespace @p ns (NULL: all), or every expired one when
 * @p expired_only, onto *dead. Requires m->mu.
 */
static void sweep(memory_cache *m, const char *ns, bool expired_only, entry **dead) {
    double now = expired_only ? now_s() : 0;
    for (size_t b = 0; b < m->n_buckets; b++) {
        entry **link = &m->buckets[b];
        while (*link != NULL) {
            entry *e = *link;
            bool drop = expired_only ? is_expired(e, now) : ns == NULL || strcmp(e->text, ns) == 0;
            if (drop) {
                unlink_to(m, link, dead);
            } else {
                link = &e->next;
            }
        }
    }
}

/*
 * Makes room before an insertion: first drops the expired entries, then
 * doubles the buckets when the table is still full. Out of memory leaves the
 * table as it was (chains just grow longer). Requires m->mu.
 */
static void make_room(memory_cache *m, entry **dead) {
    if (m->count < m->n_buckets) {
        return;
    }
    sweep(m, NULL, true, dead);
    if (m->count < m->n_buckets / 2 || m->n_buckets > SIZE_MAX / 2 / sizeof(entry *)) {
        return;
    }
    size_t n = m->n_buckets * 2;
    entry **buckets = sst__calloc(n, sizeof *buckets);
    if (buckets == NULL) {
        return;
    }
    for (size_t b = 0; b < m->n_buckets; b++) {
        for (entry *e = m->buckets[b], *next; e != NULL; e = next) {
            next = e->next;
            e->next = buckets[e->hash & (n - 1)];
            buckets[e->hash & (n - 1)] = e;
        }
    }
    sst__free(m->buckets);
    m->buckets = buckets;
    m->n_buckets = n;
}

static sst_code mem_get(void *self, const char *ns, const char *key, sst_value **out,
                        sst_error *err) {
    SST_UNUSED(err);
    memory_cache *m = self;
    uint64_t h = hash_of(ns, key);
    entry *dead = NULL;
    pthread_mutex_lock(&m->mu);
    entry **link = find(m, h, ns, key);
    if (*link != NULL && is_expired(*link, now_s())) {
        unlink_to(m, link, &dead);
    } else if (*link != NULL) {
        *out = sst_value_ref((*link)->value);
    }
    pthread_mutex_unlock(&m->mu);
    free_entries(dead);
    return SST_OK;
}

static sst_code mem_set(void *self, const char *ns, const char *key, const sst_value *value,
                        double ttl_s, sst_error *err) {
    memory_cache *m = self;
    size_t ns_len = strlen(ns), key_len = strlen(key);
    entry *e = sst__malloc(sizeof *e + ns_len + key_len + 2);
    if (e == NULL) {
        return sst__error(err, SST_ENOMEM, "memory cache: out of memory storing key '%.60s'", key);
    }
    memcpy(e->text, ns, ns_len + 1);
    memcpy(e->text + ns_len + 1, key, key_len + 1);
    e->key_at = ns_len + 1;
    e->hash = hash_of(ns, key);
    e->expires = ttl_s > 0 ? now_s() + ttl_s : 0;
    e->value = sst_value_ref(value);
    entry *dead = NULL;
    pthread_mutex_lock(&m->mu);
    entry **link = find(m, e->hash, ns, key);
    if (*link != NULL) { /* replace it in place in its chain */
        e->next = (*link)->next;
        (*link)->next = dead;
        dead = *link;
        *link = e;
    } else {
        make_room(m, &dead);
        entry **head = &m->buckets[e->hash & (m->n_buckets - 1)];
        e->next = *head;
        *head = e;
        m->count++;
    }
    pthread_mutex_unlock(&m->mu);
    free_entries(dead);
    return SST_OK;
}

static sst_code mem_clear(void *self, const char *ns, sst_error *err) {
    SST_UNUSED(err);
    memory_cache *m = self;
    entry *dead = NULL;
    pthread_mutex_lock(&m->mu);
    sweep(m, ns, false, &dead);
    pthread_mutex_unlock(&m->mu);
    free_entries(dead);
    return SST_OK;
}

static void mem_destroy(void *self) {
    memory_cache *m = self;
    if (m == NULL) {
        return;
    }
    for (size_t b = 0; m->buckets != NULL && b < m->n_buckets; b++) {
        free_entries(m->buckets[b]);
    }
    sst__free(m->buckets);
    pthread_mutex_destroy(&m->mu);
    sst__free(m);
}

sst_cache *sst_memory_cache_new(sst_error *err) {
    memory_cache *m = sst__calloc(1, sizeof *m);
    if (m == NULL || (m->buckets = sst__calloc(FIRST_BUCKETS, sizeof *m->buckets)) == NULL) {
        sst__free(m);
        sst__enomem(err);
        return NULL;
    }
    m->n_buckets = FIRST_BUCKETS;
    pthread_mutex_init(&m->mu, NULL);
    static const sst_cache_ops ops = {
        .version = SST_CACHE_OPS_VERSION,
        .destroy = mem_destroy,
        .get = mem_get,
        .set = mem_set,
        .clear = mem_clear,
    };
    sst_cache *c = sst_cache_new(&ops, m, err);
    if (c == NULL) {
        mem_destroy(m);
    }
    return c;
}
