/* SPDX-License-Identifier: MIT */
/*
 * Arrays as persistent vectors: a 32-way trie holding all but the last 1..32
 * elements, plus a tail leaf for those (the Clojure design). Versions share
 * nodes; every node has its own reference count.
 *
 * Updates first make the array header unique (copying it when shared), then
 * walk the path with node_mut(): a node whose count is 1, reached through
 * nodes that are all unique, belongs to this version alone and is changed in
 * place; any other node is copied (its children gain a reference). A holder
 * of the only reference therefore pushes in O(1) amortised without copying,
 * and an update of a shared version copies O(log32 n) nodes.
 *
 * On allocation failure the structure is always left consistent, so the
 * consumed array can simply be released.
 */
#include <string.h>

#include "values_int.h"

static inline size_t tailoff(size_t count) {
    return count < SST__PV_WIDTH ? 0 : ((count - 1) >> SST__PV_BITS) << SST__PV_BITS;
}

/* A node with @p cap empty slots, refcount 1; NULL on OOM. */
static sst__pvnode *node_new_cap(size_t cap) {
    sst__pvnode *n = sst__malloc(sizeof *n + cap * sizeof(void *));
    if (n != NULL) {
        atomic_init(&n->rc, 1);
        n->cap = cap;
        memset(n->slot, 0, cap * sizeof(void *));
    }
    return n;
}

static sst__pvnode *node_new(void) {
    return node_new_cap(SST__PV_WIDTH);
}

/* Drops a reference to a node at @p level; dying values go on @p dead. */
static void node_unref(sst__pvnode *n, unsigned level, sst_value **dead) {
    if (n == NULL || atomic_fetch_sub_explicit(&n->rc, 1, memory_order_acq_rel) != 1) {
        return;
    }
    for (size_t i = 0; i < n->cap; i++) {
        if (n->slot[i] == NULL) {
            continue;
        }
        if (level == 0) {
            sst__unref_into(n->slot[i], dead);
        } else {
            node_unref(n->slot[i], level - SST__PV_BITS, dead);
        }
    }
    sst__free(n);
}

static void node_unref_now(sst__pvnode *n, unsigned level) {
    sst_value *dead = NULL;
    node_unref(n, level, &dead);
    while (dead != NULL) {
        sst_value *next = dead->u.next_dead;
        sst__value_destroy(dead);
        dead = next;
    }
}

/*
 * Makes *slotp exclusively ours: returns it when its count is 1 (the caller
 * guarantees the path to it is exclusive), otherwise replaces it with a copy.
 * NULL on out of memory, leaving *slotp unchanged.
 */
static sst__pvnode *node_mut_cap(sst__pvnode **slotp, unsigned level, size_t cap);

static sst__pvnode *node_mut(sst__pvnode **slotp, unsigned level) {
    return node_mut_cap(slotp, level, (*slotp)->cap);
}

/*
 * As node_mut, and makes the node at least @p cap slots wide (tails grow by
 * doubling): a unique node is reallocated, a shared one copied wider.
 */
static sst__pvnode *node_mut_cap(sst__pvnode **slotp, unsigned level, size_t cap) {
    sst__pvnode *n = *slotp;
    if (cap < n->cap) {
        cap = n->cap;
    }
    if (atomic_load_explicit(&n->rc, memory_order_acquire) == 1) {
        if (cap == n->cap) {
            return n;
        }
        sst__pvnode *w = sst__realloc(n, sizeof *n + cap * sizeof(void *));
        if (w == NULL) {
            return NULL;
        }
        memset(w->slot + w->cap, 0, (cap - w->cap) * sizeof(void *));
        w->cap = cap;
        *slotp = w;
        return w;
    }
    sst__pvnode *c = node_new_cap(cap);
    if (c == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < n->cap; i++) {
        c->slot[i] = n->slot[i];
        if (c->slot[i] == NULL) {
            continue;
        }
        if (level == 0) {
            sst_value_ref(c->slot[i]);
        } else {
            atomic_fetch_add_explicit(&((sst__pvnode *)c->slot[i])->rc, 1, memory_order_relaxed);
        }
    }
    *slotp = c;
    node_unref_now(n, level); /* our path's reference; the other holders keep it alive */
    return c;
}

/* Drops the attachment: the array is about to change. */
static void drop_attachment(sst__array *a) {
    if (a->att_type != NULL) {
        a->att_type->unref(a->att);
        a->att_type = NULL;
        a->att = NULL;
    }
}

void sst__array_release(sst__array *a, sst_value **dead) {
    drop_attachment(a);
    node_unref(a->root, a->shift, dead);
    node_unref(a->tail, 0, dead);
}

sst_code sst_array_attach(sst_value *v, const sst_attachment_type *type, void *data,
                          sst_error *err) {
    if (!sst_is_array(v) || !sst_value_is_unique(v) || type == NULL) {
        return sst__error(err, SST_EINVAL, "array attach: needs a unique array and a type");
    }
    sst__array *a = (sst__array *)v;
    type->ref(data);
    drop_attachment(a);
    a->att_type = type;
    a->att = data;
    return SST_OK;
}

void *sst_array_attachment(const sst_value *v, const sst_attachment_type *type) {
    if (!sst_is_array(v)) {
        return NULL;
    }
    const sst__array *a = (const sst__array *)v;
    return a->att_type == type ? a->att : NULL;
}

/* Returns a header only the caller references; consumes @p v. NULL on OOM (v released). */
static sst__array *array_unique(sst_value *v) {
    if (sst_value_is_unique(v)) {
        drop_attachment((sst__array *)v); /* it is about to change */
        return (sst__array *)v;
    }
    const sst__array *a = (const sst__array *)v;
    sst__array *c = sst__value_alloc(sizeof *c, SST_TYPE_ARRAY);
    if (c == NULL) {
        sst_value_unref(v);
        return NULL;
    }
    c->att_type = NULL;
    c->att = NULL;
    c->count = a->count;
    c->shift = a->shift;
    c->root = a->root;
    c->tail = a->tail;
    if (c->root != NULL) {
        atomic_fetch_add_explicit(&c->root->rc, 1, memory_order_relaxed);
    }
    if (c->tail != NULL) {
        atomic_fetch_add_explicit(&c->tail->rc, 1, memory_order_relaxed);
    }
    sst_value_unref(v);
    return c;
}

size_t sst_array_len(const sst_value *v) {
    return sst_is_array(v) ? ((const sst__array *)v)->count : 0;
}

/* The leaf holding element @p i (i < count). */
static const sst__pvnode *leaf_for(const sst__array *a, size_t i) {
    if (i >= tailoff(a->count)) {
        return a->tail;
    }
    const sst__pvnode *n = a->root;
    for (unsigned level = a->shift; level > 0; level -= SST__PV_BITS) {
        n = n->slot[(i >> level) & SST__PV_MASK];
    }
    return n;
}

const sst_value *sst_array_get(const sst_value *v, size_t i) {
    if (!sst_is_array(v)) {
        return NULL;
    }
    const sst__array *a = (const sst__array *)v;
    if (i >= a->count) {
        return NULL;
    }
    return leaf_for(a, i)->slot[i & SST__PV_MASK];
}

void sst_array_iter_init(sst_array_iter *it, const sst_value *a) {
    it->array_ = sst_is_array(a) ? a : NULL;
    it->next_ = 0;
    it->leaf_ = NULL;
}

const sst_value *sst_array_iter_next(sst_array_iter *it) {
    const sst__array *a = (const sst__array *)it->array_;
    if (a == NULL || it->next_ >= a->count) {
        return NULL;
    }
    size_t i = it->next_++;
    if ((i & SST__PV_MASK) == 0 || it->leaf_ == NULL) {
        it->leaf_ = leaf_for(a, i);
    }
    return ((const sst__pvnode *)it->leaf_)->slot[i & SST__PV_MASK];
}

/* A chain of new nodes from @p level down to @p leaf; NULL on OOM (leaf untouched). */
static sst__pvnode *new_path(unsigned level, sst__pvnode *leaf) {
    sst__pvnode *nodes[16]; /* 64-bit counts need at most 13 levels */
    size_t k = level / SST__PV_BITS;
    for (size_t j = 0; j < k; j++) {
        nodes[j] = node_new();
        if (nodes[j] == NULL) {
            while (j-- > 0) {
                sst__free(nodes[j]);
            }
            return NULL;
        }
    }
    sst__pvnode *child = leaf;
    for (size_t j = k; j-- > 0;) {
        nodes[j]->slot[0] = child;
        child = nodes[j];
    }
    return child;
}

/*
 * Inserts the full leaf @p leaf as the element block ending at count - 1
 * below the exclusive node @p n at @p level. false on OOM (nothing linked).
 */
static bool push_tail(sst__pvnode *n, unsigned level, size_t count, sst__pvnode *leaf) {
    size_t sub = ((count - 1) >> level) & SST__PV_MASK;
    if (level == SST__PV_BITS) {
        n->slot[sub] = leaf;
        return true;
    }
    if (n->slot[sub] == NULL) {
        sst__pvnode *path = new_path(level - SST__PV_BITS, leaf);
        if (path == NULL) {
            return false;
        }
        n->slot[sub] = path;
        return true;
    }
    sst__pvnode *child = node_mut((sst__pvnode **)&n->slot[sub], level - SST__PV_BITS);
    return child != NULL && push_tail(child, level - SST__PV_BITS, count, leaf);
}

/* Moves the full tail into the trie. false on OOM (array unchanged). */
static bool tail_into_trie(sst__array *a) {
    sst__pvnode *leaf = a->tail;
    size_t count = a->count; /* the tail is full: count is a multiple of 32 */
    if ((count >> SST__PV_BITS) > ((size_t)1 << a->shift)) {
        /* The trie is full at this height: grow a new root. */
        sst__pvnode *root = node_new();
        if (root == NULL) {
            return false;
        }
        sst__pvnode *path = new_path(a->shift, leaf);
        if (path == NULL) {
            sst__free(root);
            return false;
        }
        root->slot[0] = a->root;
        root->slot[1] = path;
        a->root = root;
        a->shift += SST__PV_BITS;
        return true;
    }
    if (a->root == NULL) {
        a->root = node_new();
        if (a->root == NULL) {
            return false;
        }
    }
    sst__pvnode *root = node_mut(&a->root, a->shift);
    return root != NULL && push_tail(root, a->shift, count, leaf);
}

/* Push onto an exclusive header. On failure the array is unchanged and item not consumed. */
static bool push_unique(sst__array *a, sst_value *item) {
    size_t in_tail = a->count - tailoff(a->count);
    if (a->tail != NULL && in_tail < SST__PV_WIDTH) {
        size_t cap = a->tail->cap;
        while (cap <= in_tail) {
            cap *= 2;
        }
        sst__pvnode *t = node_mut_cap(&a->tail, 0, cap);
        if (t == NULL) {
            return false;
        }
        t->slot[in_tail] = item;
        a->count++;
        return true;
    }
    /* A new tail: small at first, for the many short arrays. */
    sst__pvnode *t = node_new_cap(a->tail == NULL ? 4 : SST__PV_WIDTH);
    if (t == NULL) {
        return false;
    }
    if (a->tail != NULL && !tail_into_trie(a)) {
        sst__free(t);
        return false;
    }
    t->slot[0] = item;
    a->tail = t;
    a->count++;
    return true;
}

sst_value *sst_array_push_take(sst_value *v, sst_value *item, sst_error *err) {
    if (!sst_is_array(v)) {
        sst__error(err, SST_ETYPE, "array push: expected array, got %s",
                   v == NULL ? "NULL" : sst_type_name(sst_value_type(v)));
        sst_value_unref(v);
        sst_value_unref(item);
        return NULL;
    }
    if (item == NULL) {
        sst__error(err, SST_EINVAL, "array push: NULL item");
        sst_value_unref(v);
        return NULL;
    }
    sst__array *a = array_unique(v);
    if (a == NULL || !push_unique(a, item)) {
        sst_value_unref(a != NULL ? &a->h : NULL);
        sst_value_unref(item);
        sst__enomem(err);
        return NULL;
    }
    return &a->h;
}

static sst__pvnode *leaf_mut(sst__array *a, size_t i) {
    if (i >= tailoff(a->count)) {
        return node_mut(&a->tail, 0);
    }
    sst__pvnode *n = node_mut(&a->root, a->shift);
    for (unsigned level = a->shift; n != NULL && level > 0; level -= SST__PV_BITS) {
        n = node_mut((sst__pvnode **)&n->slot[(i >> level) & SST__PV_MASK], level - SST__PV_BITS);
    }
    return n;
}

sst_value *sst_array_set_take(sst_value *v, size_t i, sst_value *item, sst_error *err) {
    sst_code code = SST_OK;
    if (!sst_is_array(v)) {
        code = sst__error(err, SST_ETYPE, "array set: expected array, got %s",
                          v == NULL ? "NULL" : sst_type_name(sst_value_type(v)));
    } else if (item == NULL) {
        code = sst__error(err, SST_EINVAL, "array set: NULL item");
    } else if (i >= ((const sst__array *)v)->count) {
        code = sst__error(err, SST_ERANGE, "array set: index %zu out of range (length %zu)", i,
                          ((const sst__array *)v)->count);
    }
    if (code != SST_OK) {
        sst_value_unref(v);
        sst_value_unref(item);
        return NULL;
    }
    sst__array *a = array_unique(v);
    sst__pvnode *leaf = a != NULL ? leaf_mut(a, i) : NULL;
    if (leaf == NULL) {
        sst_value_unref(a != NULL ? &a->h : NULL);
        sst_value_unref(item);
        sst__enomem(err);
        return NULL;
    }
    sst_value *old = leaf->slot[i & SST__PV_MASK];
    leaf->slot[i & SST__PV_MASK] = item;
    sst_value_unref(old);
    return &a->h;
}

sst_value *sst_array_concat_take(sst_value *v, const sst_value *b, sst_error *err) {
    if (!sst_is_array(v) || !sst_is_array(b)) {
        sst__error(err, SST_ETYPE, "array concat: expected two arrays, got %s and %s",
                   v == NULL ? "NULL" : sst_type_name(sst_value_type(v)),
                   b == NULL ? "NULL" : sst_type_name(sst_value_type(b)));
        sst_value_unref(v);
        return NULL;
    }
    if (sst_array_len(b) == 0) {
        return v;
    }
    if (sst_array_len(v) == 0) {
        sst_value_unref(v);
        return sst_value_ref(b);
    }
    if (v == b) {
        sst_value_ref(v); /* b is borrowed from v itself: keep it unchanged while reading */
    }
    sst__array *a = array_unique(v);
    if (a == NULL) {
        if (v == b) {
            sst_value_unref(v);
        }
        sst__enomem(err);
        return NULL;
    }
    sst_array_iter it;
    sst_array_iter_init(&it, b);
    const sst_value *e;
    while ((e = sst_array_iter_next(&it)) != NULL) {
        if (!push_unique(a, sst_value_ref(e))) {
            sst_value_unref((sst_value *)e);
            sst_value_unref(&a->h);
            if (v == b) {
                sst_value_unref(v);
            }
            sst__enomem(err);
            return NULL;
        }
    }
    if (v == b) {
        sst_value_unref(v);
    }
    return &a->h;
}

sst_value *sst__array_from(sst__arena *arena, sst_value **items, size_t n) {
    if (n == 0) {
        return sst_array_empty();
    }
    /* Count the nodes first and allocate them all, so that a failure never
     * leaves half-filled nodes holding items. */
    size_t toff = tailoff(n);
    size_t leaves = toff / SST__PV_WIDTH;
    size_t total = leaves + 1; /* + the tail */
    size_t level_count = leaves;
    unsigned shift = SST__PV_BITS;
    while (level_count > SST__PV_WIDTH) {
        level_count = (level_count + SST__PV_WIDTH - 1) / SST__PV_WIDTH;
        total += level_count;
        shift += SST__PV_BITS;
    }
    total += leaves > 0; /* the root */
    sst__pvnode **nodes = sst__malloc(total * sizeof *nodes);
    sst__array *a = sst__arena_value(arena, sizeof *a, SST_TYPE_ARRAY);
    size_t made = 0;
    /* nodes[0 .. total-1): trie nodes; the last one: the tail, exactly as wide as needed. */
    while (nodes != NULL && a != NULL && made < total &&
           (nodes[made] = node_new_cap(made + 1 < total ? SST__PV_WIDTH : n - toff)) != NULL) {
        made++;
    }
    if (made < total) {
        for (size_t i = 0; i < made; i++) {
            sst__free(nodes[i]);
        }
        sst__free(nodes);
        if (a != NULL) {
            sst__value_free_block(&a->h);
        }
        for (size_t i = 0; i < n; i++) {
            sst_value_unref(items[i]);
        }
        return NULL;
    }
    /* Leaves, then each level of parents over the previous level. */
    size_t next = 0;
    for (size_t l = 0; l < leaves; l++) {
        memcpy(nodes[next + l]->slot, items + l * SST__PV_WIDTH, SST__PV_WIDTH * sizeof(void *));
    }
    size_t level_start = next;
    level_count = leaves;
    next += leaves;
    while (level_count > SST__PV_WIDTH) {
        size_t parents = (level_count + SST__PV_WIDTH - 1) / SST__PV_WIDTH;
        for (size_t c = 0; c < level_count; c++) {
            nodes[next + c / SST__PV_WIDTH]->slot[c % SST__PV_WIDTH] = nodes[level_start + c];
        }
        level_start = next;
        level_count = parents;
        next += parents;
    }
    a->root = NULL;
    if (leaves > 0) {
        a->root = nodes[next++];
        for (size_t c = 0; c < level_count; c++) {
            a->root->slot[c] = nodes[level_start + c];
        }
    }
    a->tail = nodes[next++];
    a->att_type = NULL;
    a->att = NULL;
    memcpy(a->tail->slot, items + toff, (n - toff) * sizeof *items);
    a->count = n;
    a->shift = shift;
    sst__free(nodes);
    return &a->h;
}
