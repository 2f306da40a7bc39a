/* SPDX-License-Identifier: MIT */
/*
 * Verified JWTs, remembered (docs/auth.md, "Cost"): a client sends the same bearer token
 * with every request, and verifying it each time (base64url, two JSON parses, an HMAC or a
 * signature check, the claims) is work whose answer cannot change before the token's exp.
 *
 * The cache is a fixed table of SRV_TOKEN_CACHE_SLOTS slots, each remembering one token by
 * the SHA-256 digest of its bytes (compared in constant time: no timing tells how much of a
 * cached token a guess matched) and the user it verified as, until the time verification
 * would refuse it (exp plus the leeway; a token without exp: SRV_TOKEN_CACHE_MAX_S at most).
 * A token's slot is picked by its digest; a new token replaces the one in its slot, so the
 * table never grows. Refusals are not remembered. One mutex guards the table; the user
 * values are immutable and shared by reference.
 */
#include <math.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <string.h>

#include "auth.h"

typedef struct slot {
    unsigned char digest[SRV_DIGEST_LEN];
    double expires_s; /* valid while now < expires_s */
    sst_value *user;  /* NULL: empty */
} slot;

struct srv_token_cache {
    pthread_mutex_t mu;
    EVP_MD *sha256; /* fetched once: a fetch per digest costs more than the digest */
    slot slots[SRV_TOKEN_CACHE_SLOTS];
};

srv_token_cache *srv_token_cache_new(void) {
    srv_token_cache *c = sst__calloc(1, sizeof *c);
    if (c == NULL) {
        return NULL;
    }
    if ((c->sha256 = EVP_MD_fetch(NULL, "SHA256", NULL)) == NULL) {
        sst__free(c);
        return NULL;
    }
    if (pthread_mutex_init(&c->mu, NULL) != 0) {
        EVP_MD_free(c->sha256);
        sst__free(c);
        return NULL;
    }
    return c;
}

void srv_token_cache_free(srv_token_cache *c) {
    if (c == NULL) {
        return;
    }
    for (size_t i = 0; i < SRV_TOKEN_CACHE_SLOTS; i++) {
        sst_value_unref(c->slots[i].user);
    }
    pthread_mutex_destroy(&c->mu);
    EVP_MD_free(c->sha256);
    sst__free(c);
}

static slot *slot_of(srv_token_cache *c, const unsigned char *d) {
    size_t h = 0;
    for (size_t i = 0; i < sizeof h; i++) {
        h = (h << 8) | d[i];
    }
    return &c->slots[h % SRV_TOKEN_CACHE_SLOTS];
}

sst_value *srv_token_cache_get(srv_token_cache *c, const char *token, int64_t now_s) {
    if (c == NULL) {
        return NULL;
    }
    unsigned char d[SRV_DIGEST_LEN];
    if (!srv_token_digest(token, c->sha256, d)) {
        return NULL;
    }
    sst_value *user = NULL, *stale = NULL;
    pthread_mutex_lock(&c->mu);
    slot *s = slot_of(c, d);
    if (s->user != NULL && CRYPTO_memcmp(s->digest, d, sizeof d) == 0) {
        if ((double)now_s < s->expires_s) {
            user = sst_value_ref(s->user);
        } else {
            stale = s->user; /* expired: forgotten */
            s->user = NULL;
        }
    }
    pthread_mutex_unlock(&c->mu);
    sst_value_unref(stale);
    return user;
}

void srv_token_cache_put(srv_token_cache *c, const char *token, const sst_value *user, double exp,
                         int64_t leeway_s, int64_t now_s) {
    if (c == NULL || user == NULL) {
        return;
    }
    double limit = (double)now_s + SRV_TOKEN_CACHE_MAX_S;
    double expires = isnan(exp) ? limit : exp + (double)leeway_s;
    if (!(expires > (double)now_s)) {
        return;
    }
    unsigned char d[SRV_DIGEST_LEN];
    if (!srv_token_digest(token, c->sha256, d)) {
        return;
    }
    pthread_mutex_lock(&c->mu);
    slot *s = slot_of(c, d);
    sst_value *old = s->user;
    memcpy(s->digest, d, sizeof d);
    s->expires_s = expires < limit ? expires : limit;
    s->user = sst_value_ref(user);
    pthread_mutex_unlock(&c->mu);
    sst_value_unref(old);
}

size_t srv_token_cache_count(srv_token_cache *c) {
    size_t n = 0;
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < SRV_TOKEN_CACHE_SLOTS; i++) {
        n += c->slots[i].user != NULL;
    }
    pthread_mutex_unlock(&c->mu);
    return n;
}
