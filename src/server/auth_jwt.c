/* SPDX-License-Identifier: MIT */
/*
 * JWT bearer tokens (RFC 7519, JWS compact form), verified with OpenSSL: HS256 with a
 * secret from the environment, RS256 and ES256 with a PEM public key or a JWKS file.
 * The algorithm is the configured one, never the token's choice ("none" and every other
 * alg are refused before any key is used); then the signature, exp and nbf (with the
 * leeway), iss and aud, and the identity claim. Every failure is an SST_EINVAL with a
 * message for the 401's detail; no input aborts.
 */
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "superstep/json.h"

enum { ALG_HS256, ALG_RS256, ALG_ES256 };
static const char *const k_algs[] = {"HS256", "RS256", "ES256"};

typedef struct jwt_key {
    char *kid;     /* the JWKS "kid", or NULL */
    EVP_PKEY *key; /* owned */
} jwt_key;

struct srv_jwt {
    int alg;
    unsigned char *secret; /* HS256 */
    size_t secret_len;
    jwt_key *keys; /* RS256/ES256 */
    size_t n_keys;
    char *issuer, *audience, *identity_claim, *permissions_claim;
    int64_t leeway_s;
};

/* ---- base64url ------------------------------------------------------------------ */

static int b64_digit(unsigned char c) {
    if (c >= 'A' && c <= 'Z') {
        return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
        return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
        return c - '0' + 52;
    }
    return c == '-' ? 62 : c == '_' ? 63 : -1;
}

/* Decodes @p n base64url characters (no padding) into a new buffer; NULL when malformed. */
static unsigned char *b64url_decode(const char *s, size_t n, size_t *out_len) {
    if (n % 4 == 1) {
        return NULL;
    }
    unsigned char *out = sst__malloc(n * 3 / 4 + 3);
    if (out == NULL) {
        return NULL;
    }
    size_t o = 0;
    uint32_t acc = 0;
    unsigned bits = 0;
    for (size_t i = 0; i < n; i++) {
        int d = b64_digit((unsigned char)s[i]);
        if (d < 0) {
            sst__free(out);
            return NULL;
        }
        acc = (acc << 6) | (uint32_t)d;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
        }
    }
    /* The leftover bits must be zero (a canonical encoding). */
    if ((acc & ((1u << bits) - 1)) != 0) {
        sst__free(out);
        return NULL;
    }
    *out_len = o;
    out[o] = '\0';
    return out;
}

/* ---- keys ------------------------------------------------------------------------- */

static char *beside(const char *base, const char *rel) {
    const char *slash = base != NULL ? strrchr(base, '/') : NULL;
    sst__buf b;
    sst__buf_init(&b);
    if (rel[0] != '/' && slash != NULL) {
        sst__buf_append(&b, base, (size_t)(slash - base) + 1);
    }
    sst__buf_printf(&b, "%s", rel);
    return sst__buf_detach(&b, NULL);
}

static sst_code add_key(srv_jwt *j, EVP_PKEY *key, const char *kid, sst_error *err) {
    jwt_key *grown = sst__realloc(j->keys, (j->n_keys + 1) * sizeof *grown);
    if (grown == NULL) {
        EVP_PKEY_free(key);
        return sst__enomem(err);
    }
    j->keys = grown;
    grown[j->n_keys].key = key;
    grown[j->n_keys].kid = kid != NULL ? sst__strndup(kid, strlen(kid)) : NULL;
    j->n_keys++;
    return SST_OK;
}

/* True when @p key is of the kind @p alg needs (RSA for RS256, P-256 for ES256). */
static bool key_fits(int alg, EVP_PKEY *key) {
    if (alg == ALG_RS256) {
        return EVP_PKEY_is_a(key, "RSA");
    }
    char group[32] = "";
    size_t n = 0;
    return EVP_PKEY_is_a(key, "EC") &&
           EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group,
                                          &n) == 1 &&
           (strcmp(group, "prime256v1") == 0 || strcmp(group, "P-256") == 0);
}

static sst_code load_pem(srv_jwt *j, const char *path, sst_error *err) {
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return sst__error(err, SST_EIO, "auth: cannot read the public key %s", path);
    }
    EVP_PKEY *key = PEM_read_PUBKEY(f, NULL, NULL, NULL);
    fclose(f);
    if (key == NULL) {
        return sst__error(err, SST_EINVAL, "auth: %s holds no PEM public key", path);
    }
    if (!key_fits(j->alg, key)) {
        EVP_PKEY_free(key);
        return sst__error(err, SST_EINVAL, "auth: the key in %s is not %s", path,
                          j->alg == ALG_RS256 ? "an RSA key (RS256)" : "a P-256 key (ES256)");
    }
    return add_key(j, key, NULL, err);
}

/* A big-endian number of a JWK member (base64url), or NULL. */
static unsigned char *jwk_bytes(const sst_value *jwk, const char *name, size_t *len) {
    const sst_value *v = sst_object_get(jwk, name);
    return sst_is_string(v) ? b64url_decode(sst_string_cstr(v), sst_string_len(v), len) : NULL;
}

/* An RSA or EC (P-256) public key from a JWK; NULL when it is not one. */
static EVP_PKEY *jwk_key(const sst_value *jwk, int alg) {
    const char *kty = sst_string_cstr(sst_object_get(jwk, "kty"));
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    EVP_PKEY *key = NULL;
    unsigned char *a = NULL, *b = NULL, *pub = NULL;
    BIGNUM *n = NULL, *e = NULL;
    size_t la = 0, lb = 0;
    const char *type = NULL;
    bool ok = bld != NULL;
    if (ok && alg == ALG_RS256 && kty != NULL && strcmp(kty, "RSA") == 0) {
        type = "RSA";
        a = jwk_bytes(jwk, "n", &la);
        b = jwk_bytes(jwk, "e", &lb);
        ok = a != NULL && b != NULL && (n = BN_bin2bn(a, (int)la, NULL)) != NULL &&
             (e = BN_bin2bn(b, (int)lb, NULL)) != NULL &&
             OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n) == 1 &&
             OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e) == 1;
    } else if (ok && alg == ALG_ES256 && kty != NULL && strcmp(kty, "EC") == 0 &&
               sst_is_string(sst_object_get(jwk, "crv")) &&
               strcmp(sst_string_cstr(sst_object_get(jwk, "crv")), "P-256") == 0) {
        type = "EC";
        a = jwk_bytes(jwk, "x", &la);
        b = jwk_bytes(jwk, "y", &lb);
        ok = a != NULL && b != NULL && la == 32 && lb == 32 && (pub = sst__malloc(65)) != NULL;
        if (ok) {
            pub[0] = 4; /* uncompressed point */
            memcpy(pub + 1, a, 32);
            memcpy(pub + 33, b, 32);
            ok = OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1",
                                                 0) == 1 &&
                 OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, pub, 65) == 1;
        }
    } else {
        ok = false;
    }
    OSSL_PARAM *params = ok ? OSSL_PARAM_BLD_to_param(bld) : NULL;
    EVP_PKEY_CTX *ctx = params != NULL ? EVP_PKEY_CTX_new_from_name(NULL, type, NULL) : NULL;
    if (ctx != NULL && EVP_PKEY_fromdata_init(ctx) == 1) {
        if (EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_PUBLIC_KEY, params) != 1) {
            key = NULL;
        }
    }
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    BN_free(n);
    BN_free(e);
    sst__free(a);
    sst__free(b);
    sst__free(pub);
    return key;
}

static sst_code load_jwks(srv_jwt *j, const char *path, sst_error *err) {
    sst_value *doc = sst_json_read_file(path, NULL, err);
    if (doc == NULL) {
        return sst__code(err);
    }
    const sst_value *keys = sst_object_get(doc, "keys");
    sst_code rc = sst_is_array(keys)
                      ? SST_OK
                      : sst__error(err, SST_EINVAL, "auth: %s: a JWKS needs \"keys\": [...]", path);
    for (size_t i = 0; rc == SST_OK && i < sst_array_len(keys); i++) {
        const sst_value *jwk = sst_array_get(keys, i);
        const sst_value *use = sst_object_get(jwk, "use");
        const sst_value *alg = sst_object_get(jwk, "alg");
        if ((sst_is_string(use) && strcmp(sst_string_cstr(use), "sig") != 0) ||
            (sst_is_string(alg) && strcmp(sst_string_cstr(alg), k_algs[j->alg]) != 0)) {
            continue; /* a key for something else */
        }
        EVP_PKEY *key = jwk_key(jwk, j->alg);
        if (key != NULL) {
            rc = add_key(j, key, sst_string_cstr(sst_object_get(jwk, "kid")), err);
        }
    }
    if (rc == SST_OK && j->n_keys == 0) {
        rc = sst__error(err, SST_EINVAL, "auth: %s has no %s key", path, k_algs[j->alg]);
    }
    sst_value_unref(doc);
    return rc;
}

/* ---- configuration ---------------------------------------------------------------- */

static sst_code opt_string(const sst_value *spec, const char *name, const char *def, char **out,
                           sst_error *err) {
    const sst_value *v = sst_object_get(spec, name);
    if (v != NULL && !sst_is_null(v) && (!sst_is_string(v) || sst_string_len(v) == 0)) {
        return sst__error(err, SST_EINVAL, "auth: jwt \"%s\" must be a non-empty string", name);
    }
    const char *s = v != NULL && !sst_is_null(v) ? sst_string_cstr(v) : def;
    *out = s != NULL ? sst__strndup(s, strlen(s)) : NULL;
    return s != NULL && *out == NULL ? sst__enomem(err) : SST_OK;
}

static sst_code configure(srv_jwt *j, const sst_value *spec, const char *base, sst_error *err) {
    static const char *const known[] = {
        "algorithm", "secret_env",     "public_key",        "jwks",     "issuer",
        "audience",  "identity_claim", "permissions_claim", "leeway_s", NULL};
    if (!sst_is_object(spec)) {
        return sst__error(err, SST_EINVAL, "auth: \"jwt\" must be an object");
    }
    const char *unknown = srv_auth_unknown_member(spec, known);
    if (unknown != NULL) {
        return sst__error(err, SST_EINVAL, "auth: unknown jwt member \"%s\"", unknown);
    }
    const char *alg = sst_string_cstr(sst_object_get(spec, "algorithm"));
    j->alg = -1;
    for (int i = 0; alg != NULL && i < 3; i++) {
        j->alg = strcmp(alg, k_algs[i]) == 0 ? i : j->alg;
    }
    if (j->alg < 0) {
        return sst__error(err, SST_EINVAL,
                          "auth: jwt \"algorithm\" must be \"HS256\", \"RS256\" or \"ES256\"");
    }
    const sst_value *leeway = sst_object_get(spec, "leeway_s");
    if (leeway != NULL &&
        (!sst_is_int(leeway) || sst_int_value(leeway) < 0 || sst_int_value(leeway) > 86400)) {
        return sst__error(err, SST_EINVAL, "auth: jwt \"leeway_s\" must be 0..86400 seconds");
    }
    j->leeway_s = leeway != NULL ? sst_int_value(leeway) : 0;
    char *secret_env = NULL, *pem = NULL, *jwks = NULL;
    sst_code rc = opt_string(spec, "issuer", NULL, &j->issuer, err);
    rc = rc == SST_OK ? opt_string(spec, "audience", NULL, &j->audience, err) : rc;
    rc = rc == SST_OK ? opt_string(spec, "identity_claim", "sub", &j->identity_claim, err) : rc;
    rc = rc == SST_OK
             ? opt_string(spec, "permissions_claim", "permissions", &j->permissions_claim, err)
             : rc;
    rc = rc == SST_OK ? opt_string(spec, "secret_env", NULL, &secret_env, err) : rc;
    rc = rc == SST_OK ? opt_string(spec, "public_key", NULL, &pem, err) : rc;
    rc = rc == SST_OK ? opt_string(spec, "jwks", NULL, &jwks, err) : rc;
    if (rc == SST_OK && j->alg == ALG_HS256) {
        const char *secret = secret_env != NULL ? getenv(secret_env) : NULL;
        if (secret_env == NULL || pem != NULL || jwks != NULL) {
            rc = sst__error(err, SST_EINVAL, "auth: HS256 takes its secret from \"secret_env\"");
        } else if (secret == NULL || strlen(secret) < 32) {
            rc = sst__error(err, SST_EINVAL,
                            "auth: the HS256 secret (environment variable %s) is %s", secret_env,
                            secret == NULL ? "not set" : "shorter than 32 bytes");
        } else {
            j->secret_len = strlen(secret);
            j->secret = (unsigned char *)sst__strndup(secret, j->secret_len);
            rc = j->secret != NULL ? SST_OK : sst__enomem(err);
        }
    } else if (rc == SST_OK) {
        if ((pem == NULL) == (jwks == NULL)) {
            rc = sst__error(err, SST_EINVAL, "auth: %s needs one of \"public_key\" or \"jwks\"",
                            k_algs[j->alg]);
        } else {
            char *path = beside(base, pem != NULL ? pem : jwks);
            rc = path == NULL  ? sst__enomem(err)
                 : pem != NULL ? load_pem(j, path, err)
                               : load_jwks(j, path, err);
            sst__free(path);
        }
    }
    sst__free(secret_env);
    sst__free(pem);
    sst__free(jwks);
    return rc;
}

srv_jwt *srv_jwt_new(const sst_value *spec, const char *base, sst_error *err) {
    SST__ERR_LOCAL(err);
    srv_jwt *j = sst__calloc(1, sizeof *j);
    if (j == NULL) {
        sst__enomem(err);
        return NULL;
    }
    if (configure(j, spec, base, err) != SST_OK) {
        srv_jwt_free(j);
        return NULL;
    }
    return j;
}

void srv_jwt_free(srv_jwt *j) {
    if (j == NULL) {
        return;
    }
    if (j->secret != NULL) {
        OPENSSL_cleanse(j->secret, j->secret_len);
    }
    sst__free(j->secret);
    for (size_t i = 0; i < j->n_keys; i++) {
        EVP_PKEY_free(j->keys[i].key);
        sst__free(j->keys[i].kid);
    }
    sst__free(j->keys);
    sst__free(j->issuer);
    sst__free(j->audience);
    sst__free(j->identity_claim);
    sst__free(j->permissions_claim);
    sst__free(j);
}

const char *srv_jwt_identity_claim(const srv_jwt *j) {
    return j->identity_claim;
}

const char *srv_jwt_permissions_claim(const srv_jwt *j) {
    return j->permissions_claim;
}

int64_t srv_jwt_leeway_s(const srv_jwt *j) {
    return j->leeway_s;
}

/* ---- verifying ---------------------------------------------------------------------- */

static bool verify_hmac(const srv_jwt *j, const char *input, size_t n, const unsigned char *sig,
                        size_t sig_len) {
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned mac_len = 0;
    if (HMAC(EVP_sha256(), j->secret, (int)j->secret_len, (const unsigned char *)input, n, mac,
             &mac_len) == NULL) {
        return false;
    }
    return sig_len == mac_len && CRYPTO_memcmp(mac, sig, mac_len) == 0;
}

/* ES256's signature is r || s (32 bytes each); OpenSSL verifies its DER form. */
static unsigned char *es256_der(const unsigned char *sig, size_t sig_len, size_t *der_len) {
    if (sig_len != 64) {
        return NULL;
    }
    ECDSA_SIG *es = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(sig, 32, NULL), *s = BN_bin2bn(sig + 32, 32, NULL);
    unsigned char *der = NULL;
    if (es != NULL && r != NULL && s != NULL && ECDSA_SIG_set0(es, r, s) == 1) {
        r = s = NULL; /* owned by es now */
        int n = i2d_ECDSA_SIG(es, &der);
        *der_len = n > 0 ? (size_t)n : 0;
    }
    BN_free(r);
    BN_free(s);
    ECDSA_SIG_free(es);
    return der;
}

static bool verify_key(EVP_PKEY *key, int alg, const char *input, size_t n,
                       const unsigned char *sig, size_t sig_len) {
    unsigned char *der = NULL;
    size_t der_len = 0;
    if (alg == ALG_ES256) {
        der = es256_der(sig, sig_len, &der_len);
        if (der == NULL) {
            return false;
        }
        sig = der;
        sig_len = der_len;
    }
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    bool ok = md != NULL && EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, key) == 1 &&
              EVP_DigestVerify(md, sig, sig_len, (const unsigned char *)input, n) == 1;
    EVP_MD_CTX_free(md);
    OPENSSL_free(der);
    return ok;
}

static bool verify_sig(const srv_jwt *j, const char *kid, const char *input, size_t n,
                       const unsigned char *sig, size_t sig_len) {
    if (j->alg == ALG_HS256) {
        return verify_hmac(j, input, n, sig, sig_len);
    }
    for (size_t i = 0; i < j->n_keys; i++) {
        if (kid != NULL && j->keys[i].kid != NULL && strcmp(kid, j->keys[i].kid) != 0) {
            continue;
        }
        if (verify_key(j->keys[i].key, j->alg, input, n, sig, sig_len)) {
            return true;
        }
    }
    return false;
}

/* A JSON object from the base64url part @p s of @p n characters, or NULL. */
static sst_value *json_part(const char *s, size_t n) {
    size_t len = 0;
    unsigned char *raw = b64url_decode(s, n, &len);
    sst_value *v = raw != NULL ? sst_json_read((const char *)raw, len, NULL, NULL) : NULL;
    sst__free(raw);
    if (v != NULL && !sst_is_object(v)) {
        sst_value_unref(v);
        v = NULL;
    }
    return v;
}

/* Checks the time, issuer and audience claims; SST_OK or SST_EINVAL with the reason. */
static sst_code check_claims(const srv_jwt *j, const sst_value *c, int64_t now, sst_error *err) {
    const sst_value *exp = sst_object_get(c, "exp"), *nbf = sst_object_get(c, "nbf");
    if (exp != NULL && !sst_is_number(exp)) {
        return sst__error(err, SST_EINVAL, "invalid token: \"exp\" is not a number");
    }
    if (exp != NULL && (double)now >= sst_number_value(exp) + (double)j->leeway_s) {
        return sst__error(err, SST_EINVAL, "token expired");
    }
    if (nbf != NULL && !sst_is_number(nbf)) {
        return sst__error(err, SST_EINVAL, "invalid token: \"nbf\" is not a number");
    }
    if (nbf != NULL && (double)now + (double)j->leeway_s < sst_number_value(nbf)) {
        return sst__error(err, SST_EINVAL, "token not valid yet (nbf)");
    }
    const sst_value *iss = sst_object_get(c, "iss");
    if (j->issuer != NULL && (!sst_is_string(iss) || strcmp(sst_string_cstr(iss), j->issuer))) {
        return sst__error(err, SST_EINVAL, "invalid token: wrong issuer (iss)");
    }
    if (j->audience != NULL) {
        const sst_value *aud = sst_object_get(c, "aud");
        bool ok = sst_is_string(aud) && strcmp(sst_string_cstr(aud), j->audience) == 0;
        for (size_t i = 0; !ok && sst_is_array(aud) && i < sst_array_len(aud); i++) {
            const sst_value *a = sst_array_get(aud, i);
            ok = sst_is_string(a) && strcmp(sst_string_cstr(a), j->audience) == 0;
        }
        if (!ok) {
            return sst__error(err, SST_EINVAL, "invalid token: wrong audience (aud)");
        }
    }
    const sst_value *id = sst_object_get(c, j->identity_claim);
    if (!sst_is_string(id) || sst_string_len(id) == 0) {
        return sst__error(err, SST_EINVAL, "invalid token: no \"%s\" claim naming the user",
                          j->identity_claim);
    }
    return SST_OK;
}

sst_value *srv_jwt_verify(const srv_jwt *j, const char *token, int64_t now_s, sst_error *err) {
    SST__ERR_LOCAL(err);
    size_t n = strnlen(token, SRV_AUTH_MAX_TOKEN + 1);
    if (n > SRV_AUTH_MAX_TOKEN) {
        sst__error(err, SST_EINVAL, "invalid token: longer than %d bytes", SRV_AUTH_MAX_TOKEN);
        return NULL;
    }
    const char *dot1 = memchr(token, '.', n);
    const char *dot2 = dot1 != NULL ? memchr(dot1 + 1, '.', n - (size_t)(dot1 + 1 - token)) : NULL;
    if (dot1 == NULL || dot2 == NULL || memchr(dot2 + 1, '.', n - (size_t)(dot2 + 1 - token))) {
        sst__error(err, SST_EINVAL, "invalid token: not a JWT (three base64url parts)");
        return NULL;
    }
    sst_value *header = json_part(token, (size_t)(dot1 - token));
    if (header == NULL) {
        sst__error(err, SST_EINVAL, "invalid token: its header is not base64url JSON");
        return NULL;
    }
    const sst_value *alg = sst_object_get(header, "alg");
    if (!sst_is_string(alg) || strcmp(sst_string_cstr(alg), k_algs[j->alg]) != 0) {
        sst__error(err, SST_EINVAL, "invalid token: algorithm '%s' is not accepted (want %s)",
                   sst_is_string(alg) ? sst_string_cstr(alg) : "?", k_algs[j->alg]);
        sst_value_unref(header);
        return NULL;
    }
    size_t sig_len = 0;
    unsigned char *sig = b64url_decode(dot2 + 1, n - (size_t)(dot2 + 1 - token), &sig_len);
    const sst_value *kid = sst_object_get(header, "kid");
    bool good = sig != NULL && verify_sig(j, sst_is_string(kid) ? sst_string_cstr(kid) : NULL,
                                          token, (size_t)(dot2 - token), sig, sig_len);
    sst_value_unref(header);
    sst__free(sig);
    if (!good) {
        sst__error(err, SST_EINVAL, "invalid token: bad signature");
        return NULL;
    }
    sst_value *claims = json_part(dot1 + 1, (size_t)(dot2 - dot1 - 1));
    if (claims == NULL) {
        sst__error(err, SST_EINVAL, "invalid token: its claims are not base64url JSON");
        return NULL;
    }
    if (check_claims(j, claims, now_s, err) != SST_OK) {
        sst_value_unref(claims);
        return NULL;
    }
    return claims;
}
