/* SPDX-License-Identifier: MIT */
/*
 * The legacy "messages" stream mode, as LangGraph.js's server makes it
 * (@langchain/langgraph-api, dist/stream.mjs, streamState):
 *
 * - every stream chunk of the run whose payload is an object with a
 *   "messages" member (a list, or one message) sends, in one
 *   messages/complete event, the list of those of its messages whose id was
 *   not sent complete before in this run;
 * - every token of a model's reply (a chunk of messages-tuple) with an id
 *   sends messages/metadata {id: {"metadata": ...}} the first time that id
 *   is seen, then messages/partial [the message so far]: the chunks
 *   concatenated as LangChain's AIMessageChunk.concat does (the "content"
 *   strings joined, lists such as "tool_call_chunks" appended, the other
 *   members as the first chunk had them).
 *
 * The worker (worker.c) publishes what these calls return. Its stream
 * callback can be called from a subgraph's thread while the root's nodes
 * stream too, so the state has its own lock.
 */
#include <string.h>

#include "server_int.h"

struct srv_msgs {
    pthread_mutex_t mu;
    sst_value *done;    /* owned object: id -> true, the ids sent in messages/complete */
    sst_value *partial; /* owned object: id -> the message its tokens make so far */
};

srv_msgs *srv_msgs_new(void) {
    srv_msgs *m = sst__calloc(1, sizeof *m);
    if (m == NULL) {
        return NULL;
    }
    pthread_mutex_init(&m->mu, NULL);
    m->done = sst_object_empty();
    m->partial = sst_object_empty();
    return m;
}

void srv_msgs_free(srv_msgs *m) {
    if (m == NULL) {
        return;
    }
    sst_value_unref(m->done);
    sst_value_unref(m->partial);
    pthread_mutex_destroy(&m->mu);
    sst__free(m);
}

/* The id of message @p msg when it has one LangGraph counts (a non-empty string), else NULL. */
static const sst_value *id_of(const sst_value *msg) {
    const sst_value *id = sst_object_get(msg, "id");
    return sst_is_string(id) && sst_string_len(id) > 0 ? id : NULL;
}

/* Member @p key of @p o, the key given as a string value. */
static const sst_value *get_v(const sst_value *o, const sst_value *key) {
    return sst_object_getn(o, sst_string_cstr(key), sst_string_len(key));
}

sst_value *srv_msgs_complete(srv_msgs *m, const sst_value *payload, sst_error *err) {
    const sst_value *msgs = sst_object_get(payload, "messages");
    if (msgs == NULL) {
        return NULL;
    }
    size_t n = sst_is_array(msgs) ? sst_array_len(msgs) : 1;
    sst_value *out = NULL;
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < n; i++) {
        const sst_value *msg = sst_is_array(msgs) ? sst_array_get(msgs, i) : msgs;
        const sst_value *id = id_of(msg);
        if (id == NULL || get_v(m->done, id) != NULL) {
            continue;
        }
        m->done = sst__setv_take(m->done, id, sst_bool(true), err);
        if (m->done == NULL) {
            m->done = sst_object_empty(); /* out of memory: an id may be sent again */
        }
        out = sst__push_take(out != NULL ? out : sst_array_empty(), sst_value_ref(msg), err);
    }
    pthread_mutex_unlock(&m->mu);
    return out;
}

/* Two strings joined (new). */
static sst_value *joined(const sst_value *a, const sst_value *b, sst_error *err) {
    size_t la = sst_string_len(a), lb = sst_string_len(b);
    char *text = sst__malloc(la + lb + 1);
    if (text == NULL) {
        sst__enomem(err);
        return NULL;
    }
    memcpy(text, sst_string_cstr(a), la);
    memcpy(text + la, sst_string_cstr(b), lb);
    text[la + lb] = '\0';
    sst_value *s = sst_string_newn(text, la + lb, err);
    sst__free(text);
    return s;
}

/* The items of @p b after those of @p a (new). */
static sst_value *appended(const sst_value *a, const sst_value *b, sst_error *err) {
    sst_value *out = sst_value_ref(a);
    for (size_t i = 0; i < sst_array_len(b) && out != NULL; i++) {
        out = sst__push_take(out, sst_value_ref(sst_array_get(b, i)), err);
    }
    return out;
}

/* The message so far @p acc with chunk @p chunk added (new). */
static sst_value *concat(const sst_value *acc, const sst_value *chunk, sst_error *err) {
    sst_value *out = sst_value_ref(acc);
    for (size_t i = 0; i < sst_object_len(chunk) && out != NULL; i++) {
        const sst_value *key = sst_object_key_at(chunk, i);
        const sst_value *v = sst_object_value_at(chunk, i);
        const sst_value *old = get_v(acc, key);
        if (old == NULL || sst_is_null(old)) {
            out = sst__setv_take(out, key, sst_value_ref(v), err);
        } else if (strcmp(sst_string_cstr(key), "content") == 0 && sst_is_string(old) &&
                   sst_is_string(v)) {
            out = sst__setv_take(out, key, joined(old, v, err), err);
        } else if (sst_is_array(old) && sst_is_array(v)) {
            out = sst__setv_take(out, key, appended(old, v, err), err);
        }
    }
    return out;
}

sst_value *srv_msgs_partial(srv_msgs *m, const sst_value *chunk, const sst_value *metadata,
                            sst_value **first, sst_error *err) {
    *first = NULL;
    const sst_value *id = id_of(chunk);
    if (id == NULL) {
        return NULL;
    }
    pthread_mutex_lock(&m->mu);
    const sst_value *prev = get_v(m->partial, id);
    sst_value *acc;
    if (prev == NULL) {
        acc = sst_value_ref(chunk);
        sst_value *meta =
            sst__set_take(sst_object_empty(), "metadata",
                          sst_value_ref(metadata != NULL ? metadata : sst_object_empty()), err);
        *first = sst__setv_take(sst_object_empty(), id, meta, err);
    } else {
        acc = concat(prev, chunk, err);
    }
    if (acc != NULL) {
        m->partial = sst__setv_take(m->partial, id, sst_value_ref(acc), err);
        if (m->partial == NULL) {
            m->partial = sst_object_empty(); /* out of memory: the message starts again */
        }
    }
    pthread_mutex_unlock(&m->mu);
    return sst__push_take(sst_array_empty(), acc, err);
}
