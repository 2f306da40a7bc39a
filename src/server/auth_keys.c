/* SPDX-License-Identifier: MIT */
/*
 * An API-keys file: {"<key>": "<identity>"} or {"<key>": {"identity": "...",
 * "permissions": [...], ...}}. Keys are kept as their SHA-256 digests; a lookup digests
 * the given key and compares it with every digest in constant time, so neither which
 * key matched nor how much of a key was right shows in the time taken.
 */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <string.h>

#include "auth.h"
#include "superstep/json.h"

typedef struct key_entry {
    unsigned char digest[SRV_DIGEST_LEN];
    sst_value *user; /* {"identity", "permissions", ...} */
} key_entry;

struct srv_keys {
    key_entry *keys;
    size_t n;
};

bool srv_token_digest(const char *token, const EVP_MD *md, unsigned char out[SRV_DIGEST_LEN]) {
    size_t n = strnlen(token, SRV_AUTH_MAX_TOKEN + 1);
    unsigned len = 0;
    return n <= SRV_AUTH_MAX_TOKEN &&
           EVP_Digest(token, n, out, &len, md != NULL ? md : EVP_sha256(), NULL) == 1 &&
           len == SRV_DIGEST_LEN;
}

void srv_keys_free(srv_keys *k) {
    if (k == NULL) {
        return;
    }
    for (size_t i = 0; i < k->n; i++) {
        sst_value_unref(k->keys[i].user);
    }
    sst__free(k->keys);
    sst__free(k);
}

/* The user of one entry (new), or NULL after an error naming it. */
static sst_value *entry_user(const char *path, size_t i, const sst_value *v, sst_error *err) {
    sst_error e = {0};
    if (sst_is_string(v) && sst_string_len(v) > 0) {
        sst_value *u = sst__set_take(sst_object_empty(), "identity", sst_value_ref(v), &e);
        return sst__set_take(u, "permissions", sst_array_empty(), &e);
    }
    const sst_value *id = sst_object_get(v, "identity");
    const sst_value *perms = sst_object_get(v, "permissions");
    bool perms_ok = perms == NULL || sst_is_array(perms);
    for (size_t k = 0; perms_ok && perms != NULL && k < sst_array_len(perms); k++) {
        perms_ok = sst_is_string(sst_array_get(perms, k));
    }
    if (!sst_is_object(v) || !sst_is_string(id) || sst_string_len(id) == 0 || !perms_ok) {
        sst__error(err, SST_EINVAL,
                   "auth: %s: entry %zu must be an identity string or {\"identity\": \"...\", "
                   "\"permissions\": [\"...\"]}",
                   path, i + 1);
        return NULL;
    }
    sst_value *u = sst_value_ref(v);
    return perms == NULL ? sst__set_take(u, "permissions", sst_array_empty(), &e) : u;
}

srv_keys *srv_keys_load(const char *path, sst_error *err) {
    SST__ERR_LOCAL(err);
    sst_value *doc = sst_json_read_file(path, NULL, err);
    if (doc == NULL) {
        return NULL;
    }
    srv_keys *k = sst__calloc(1, sizeof *k);
    sst_code rc = k != NULL ? SST_OK : sst__enomem(err);
    if (rc == SST_OK && (!sst_is_object(doc) || sst_object_len(doc) == 0)) {
        rc = sst__error(err, SST_EINVAL, "auth: %s must be an object {\"<key>\": \"<identity>\"}",
                        path);
    }
    if (rc == SST_OK && (k->keys = sst__calloc(sst_object_len(doc), sizeof *k->keys)) == NULL) {
        rc = sst__enomem(err);
    }
    for (size_t i = 0; rc == SST_OK && i < sst_object_len(doc); i++) {
        const sst_value *key = sst_object_key_at(doc, i);
        if (sst_string_len(key) < 16 || sst_string_len(key) > SRV_AUTH_MAX_TOKEN) {
            rc = sst__error(err, SST_EINVAL, "auth: %s: key %zu is shorter than 16 characters",
                            path, i + 1);
            break;
        }
        if (strlen(sst_string_cstr(key)) != sst_string_len(key)) {
            rc =
                sst__error(err, SST_EINVAL, "auth: %s: key %zu holds a NUL character", path, i + 1);
            break;
        }
        sst_value *user = entry_user(path, i, sst_object_value_at(doc, i), err);
        if (user == NULL) {
            rc = sst__code(err);
            break;
        }
        k->keys[k->n].user = user;
        if (!srv_token_digest(sst_string_cstr(key), NULL, k->keys[k->n++].digest)) {
            rc = sst__error(err, SST_EIO, "auth: SHA-256 failed");
        }
    }
    sst_value_unref(doc);
    if (rc != SST_OK) {
        srv_keys_free(k);
        return NULL;
    }
    return k;
}

sst_value *srv_keys_find(const srv_keys *k, const char *key) {
    unsigned char d[SRV_DIGEST_LEN];
    if (!srv_token_digest(key, NULL, d)) {
        return NULL;
    }
    const sst_value *found = NULL;
    for (size_t i = 0; i < k->n; i++) {
        /* Every entry is compared; the branch depends only on a whole match. */
        if (CRYPTO_memcmp(d, k->keys[i].digest, sizeof d) == 0) {
            found = k->keys[i].user;
        }
    }
    return found != NULL ? sst_value_ref(found) : NULL;
}
