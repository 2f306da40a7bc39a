/* SPDX-License-Identifier: MIT */
/*
 * superstep serve's built-in auth (src/server/auth_jwt.c, auth_keys.c): JWTs signed with
 * HS256, RS256 and ES256 (PEM key and JWKS) are accepted; a table of bad tokens (expired,
 * not yet valid, alg none, the wrong alg, a wrong key, wrong iss and aud, malformed
 * base64, oversized, truncated, no identity) is refused with its message, never a crash;
 * the configuration's errors name the member; the API-keys file finds its users.
 * The tokens are signed here with OpenSSL (keys made at start).
 */
#define _GNU_SOURCE
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/auth.h"
#include "superstep/json.h"
#include "test_util.h"

#define SECRET "0123456789abcdef0123456789abcdef-test-secret"
#define NOW    1800000000

static EVP_PKEY *g_rsa, *g_ec, *g_rsa2;
static char g_dir[256];

static void b64url(const unsigned char *in, size_t n, char *out) {
    static const char k[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        v |= i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0;
        v |= i + 2 < n ? in[i + 2] : 0;
        out[o++] = k[(v >> 18) & 63];
        out[o++] = k[(v >> 12) & 63];
        if (i + 1 < n) {
            out[o++] = k[(v >> 6) & 63];
        }
        if (i + 2 < n) {
            out[o++] = k[v & 63];
        }
    }
    out[o] = '\0';
}

/* A JWT of @p header and @p claims (JSON texts) signed as @p alg with @p key (HS256: the
 * secret @p secret). */
static char *sign(const char *header, const char *claims, const char *alg, EVP_PKEY *key,
                  const char *secret) {
    char *t = malloc(16384);
    b64url((const unsigned char *)header, strlen(header), t);
    size_t n = strlen(t);
    t[n++] = '.';
    b64url((const unsigned char *)claims, strlen(claims), t + n);
    n = strlen(t);
    unsigned char sig[512];
    size_t sig_len = 0;
    if (strcmp(alg, "HS256") == 0) {
        unsigned len = 0;
        HMAC(EVP_sha256(), secret, (int)strlen(secret), (unsigned char *)t, n, sig, &len);
        sig_len = len;
    } else if (strcmp(alg, "none") != 0) {
        EVP_MD_CTX *md = EVP_MD_CTX_new();
        unsigned char der[512];
        size_t der_len = sizeof der;
        assert_int_equal(EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, key), 1);
        assert_int_equal(EVP_DigestSign(md, der, &der_len, (unsigned char *)t, n), 1);
        EVP_MD_CTX_free(md);
        if (strcmp(alg, "ES256") == 0) {
            const unsigned char *p = der;
            ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &p, (long)der_len);
            BN_bn2binpad(ECDSA_SIG_get0_r(es), sig, 32);
            BN_bn2binpad(ECDSA_SIG_get0_s(es), sig + 32, 32);
            ECDSA_SIG_free(es);
            sig_len = 64;
        } else {
            memcpy(sig, der, der_len);
            sig_len = der_len;
        }
    }
    t[n++] = '.';
    b64url(sig, sig_len, t + n);
    return t;
}

static char *write_pem(EVP_PKEY *key, const char *name) {
    char *path = malloc(512);
    snprintf(path, 512, "%s/%s", g_dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(PEM_write_PUBKEY(f, key), 1);
    fclose(f);
    return path;
}

static srv_jwt *verifier(const char *json) {
    sst_value *spec = tu_json(json);
    sst_error err = {0};
    srv_jwt *j = srv_jwt_new(spec, NULL, &err);
    if (j == NULL) {
        fail_msg("srv_jwt_new(%s): %s", json, err.msg);
    }
    sst_value_unref(spec);
    return j;
}

static void expect_ok(srv_jwt *j, const char *token, const char *identity) {
    sst_error err = {0};
    sst_value *c = srv_jwt_verify(j, token, NOW, &err);
    if (c == NULL) {
        fail_msg("token refused: %s", err.msg);
    }
    assert_string_equal(sst_string_cstr(sst_object_get(c, "sub")), identity);
    sst_value_unref(c);
}

static void expect_bad(srv_jwt *j, const char *token, const char *want, const char *what) {
    sst_error err = {0};
    sst_value *c = srv_jwt_verify(j, token, NOW, &err);
    if (c != NULL) {
        fail_msg("%s: accepted", what);
    }
    assert_int_equal(err.code, SST_EINVAL);
    if (strstr(err.msg, want) == NULL) {
        fail_msg("%s: message '%s' does not say '%s'", what, err.msg, want);
    }
}

#define HS   "{\"alg\":\"HS256\",\"typ\":\"JWT\"}"
#define GOOD "{\"sub\":\"alice\",\"exp\":1800000600,\"iss\":\"me\",\"aud\":\"api\"}"

static void test_hs256(void **state) {
    (void)state;
    setenv("SST_TEST_JWT_SECRET", SECRET, 1);
    srv_jwt *j = verifier("{\"algorithm\":\"HS256\",\"secret_env\":\"SST_TEST_JWT_SECRET\","
                          "\"issuer\":\"me\",\"audience\":\"api\"}");
    char *good = sign(HS, GOOD, "HS256", NULL, SECRET);
    expect_ok(j, good, "alice");
    char *aud_list =
        sign(HS, "{\"sub\":\"bob\",\"iss\":\"me\",\"aud\":[\"x\",\"api\"]}", "HS256", NULL, SECRET);
    expect_ok(j, aud_list, "bob");

    /* The table of bad tokens: each is refused with its reason. */
    struct {
        const char *what, *header, *claims, *alg, *secret, *want;
    } bad[] = {
        {"expired", HS, "{\"sub\":\"a\",\"exp\":1799999999,\"iss\":\"me\",\"aud\":\"api\"}",
         "HS256", SECRET, "token expired"},
        {"expired at now", HS, "{\"sub\":\"a\",\"exp\":1800000000,\"iss\":\"me\",\"aud\":\"api\"}",
         "HS256", SECRET, "token expired"},
        {"exp not a number", HS, "{\"sub\":\"a\",\"exp\":\"soon\",\"iss\":\"me\",\"aud\":\"api\"}",
         "HS256", SECRET, "\"exp\" is not a number"},
        {"nbf in the future", HS,
         "{\"sub\":\"a\",\"nbf\":1800000100,\"iss\":\"me\",\"aud\":\"api\"}", "HS256", SECRET,
         "not valid yet"},
        {"alg none", "{\"alg\":\"none\"}", GOOD, "none", SECRET, "algorithm 'none'"},
        {"alg HS512", "{\"alg\":\"HS512\"}", GOOD, "HS256", SECRET, "algorithm 'HS512'"},
        {"alg RS256 on an HS256 server", "{\"alg\":\"RS256\"}", GOOD, "HS256", SECRET,
         "algorithm 'RS256'"},
        {"no alg", "{\"typ\":\"JWT\"}", GOOD, "HS256", SECRET, "algorithm '?'"},
        {"wrong secret", HS, GOOD, "HS256", "another-secret-of-32-bytes-or-more!!",
         "bad signature"},
        {"wrong issuer", HS, "{\"sub\":\"a\",\"iss\":\"you\",\"aud\":\"api\"}", "HS256", SECRET,
         "wrong issuer"},
        {"no issuer", HS, "{\"sub\":\"a\",\"aud\":\"api\"}", "HS256", SECRET, "wrong issuer"},
        {"wrong audience", HS, "{\"sub\":\"a\",\"iss\":\"me\",\"aud\":\"web\"}", "HS256", SECRET,
         "wrong audience"},
        {"audience list without ours", HS, "{\"sub\":\"a\",\"iss\":\"me\",\"aud\":[\"web\",1]}",
         "HS256", SECRET, "wrong audience"},
        {"no identity", HS, "{\"iss\":\"me\",\"aud\":\"api\"}", "HS256", SECRET,
         "no \"sub\" claim"},
        {"identity not a string", HS, "{\"sub\":7,\"iss\":\"me\",\"aud\":\"api\"}", "HS256", SECRET,
         "no \"sub\" claim"},
        {"claims not an object", HS, "[1,2]", "HS256", SECRET, "claims are not"},
        {"claims not JSON", HS, "{\"sub\":", "HS256", SECRET, "claims are not"},
        {"header not JSON", "{alg", GOOD, "HS256", SECRET, "header is not"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *t = sign(bad[i].header, bad[i].claims, bad[i].alg, NULL, bad[i].secret);
        expect_bad(j, t, bad[i].want, bad[i].what);
        free(t);
    }
    /* Malformed texts. */
    const char *malformed[][2] = {
        {"", "not a JWT"},
        {"abc", "not a JWT"},
        {"a.b", "not a JWT"},
        {"a.b.c.d", "not a JWT"},
        {"...", "not a JWT"},
        {"..", "header is not"},
        {"e30.e30.", "algorithm '?'"},
        {"eyJhbGciOiJIUzI1NiJ9.e30.!!!!", "bad signature"},
        {"eyJhbGciOiJIUzI1NiJ9.e30.a", "bad signature"},
        {"ey$$.e30.abc", "header is not"},
        {"eyJhbGciOiJIUzI1NiJ9=.e30.abc", "header is not"},
        {"e\xff\xfe.e30.abc", "header is not"},
    };
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
        expect_bad(j, malformed[i][0], malformed[i][1], malformed[i][0]);
    }
    /* A good token with a byte of its signature, claims or header changed. */
    for (size_t i = 0; i < strlen(good); i++) {
        char *t = strdup(good);
        if (t[i] == '.') {
            free(t);
            continue;
        }
        t[i] = t[i] == 'A' ? 'B' : 'A';
        sst_error err = {0};
        sst_value *c = srv_jwt_verify(j, t, NOW, &err);
        /* A changed last character of a part that changes only its unused bits is refused
         * as a non-canonical encoding; any other change breaks the signature. */
        if (c != NULL) {
            fail_msg("changed byte %zu accepted", i);
        }
        free(t);
    }
    /* Oversized: refused before decoding. */
    char *big = malloc(SRV_AUTH_MAX_TOKEN + 100);
    memset(big, 'A', SRV_AUTH_MAX_TOKEN + 99);
    big[SRV_AUTH_MAX_TOKEN + 99] = '\0';
    big[10] = '.';
    big[20] = '.';
    expect_bad(j, big, "longer than", "oversized");
    free(big);
    free(good);
    free(aud_list);
    srv_jwt_free(j);
}

static void test_rs256_es256_pem(void **state) {
    (void)state;
    char *rsa_pem = write_pem(g_rsa, "rsa.pem"), *ec_pem = write_pem(g_ec, "ec.pem");
    char spec[1024];
    snprintf(spec, sizeof spec, "{\"algorithm\":\"RS256\",\"public_key\":\"%s\"}", rsa_pem);
    srv_jwt *rs = verifier(spec);
    snprintf(spec, sizeof spec, "{\"algorithm\":\"ES256\",\"public_key\":\"%s\"}", ec_pem);
    srv_jwt *es = verifier(spec);
    const char *claims = "{\"sub\":\"carol\",\"exp\":1800000001}";
    char *t_rs = sign("{\"alg\":\"RS256\"}", claims, "RS256", g_rsa, NULL);
    char *t_es = sign("{\"alg\":\"ES256\"}", claims, "ES256", g_ec, NULL);
    char *t_rs2 = sign("{\"alg\":\"RS256\"}", claims, "RS256", g_rsa2, NULL);
    char *t_hs = sign("{\"alg\":\"HS256\"}", claims, "HS256", NULL, SECRET);
    /* HS256 signed with the public key's PEM text as the secret: the classic confusion. */
    size_t pem_len = 0;
    char *pem_text = tu_read_file(rsa_pem, &pem_len);
    char *t_conf = sign("{\"alg\":\"HS256\"}", claims, "HS256", NULL, pem_text);
    expect_ok(rs, t_rs, "carol");
    expect_ok(es, t_es, "carol");
    expect_bad(rs, t_rs2, "bad signature", "RS256 signed by another key");
    expect_bad(rs, t_es, "algorithm 'ES256'", "ES256 token on an RS256 server");
    expect_bad(es, t_rs, "algorithm 'RS256'", "RS256 token on an ES256 server");
    expect_bad(rs, t_hs, "algorithm 'HS256'", "HS256 token on an RS256 server");
    expect_bad(rs, t_conf, "algorithm 'HS256'", "HS256 keyed with the public key");
    /* An ES256 signature of the wrong length. */
    char *cut = strdup(t_es);
    cut[strlen(cut) - 4] = '\0';
    expect_bad(es, cut, "bad signature", "short ES256 signature");
    /* An RSA key for ES256 is a configuration error naming it. */
    snprintf(spec, sizeof spec, "{\"algorithm\":\"ES256\",\"public_key\":\"%s\"}", rsa_pem);
    sst_value *v = tu_json(spec);
    sst_error err = {0};
    assert_null(srv_jwt_new(v, NULL, &err));
    assert_non_null(strstr(err.msg, "not a P-256 key"));
    sst_value_unref(v);
    free(cut);
    free(t_rs);
    free(t_es);
    free(t_rs2);
    free(t_hs);
    free(t_conf);
    free(pem_text);
    free(rsa_pem);
    free(ec_pem);
    srv_jwt_free(rs);
    srv_jwt_free(es);
}

static void jwk_member(EVP_PKEY *key, const char *param, char *out) {
    BIGNUM *bn = NULL;
    assert_int_equal(EVP_PKEY_get_bn_param(key, param, &bn), 1);
    unsigned char buf[600];
    int n = BN_bn2bin(bn, buf);
    b64url(buf, (size_t)n, out);
    BN_free(bn);
}

static void test_jwks(void **state) {
    (void)state;
    char n[800], e[16], x[64], y[64];
    jwk_member(g_rsa, OSSL_PKEY_PARAM_RSA_N, n);
    jwk_member(g_rsa, OSSL_PKEY_PARAM_RSA_E, e);
    unsigned char pub[65];
    size_t pub_len = 0;
    assert_int_equal(
        EVP_PKEY_get_octet_string_param(g_ec, OSSL_PKEY_PARAM_PUB_KEY, pub, sizeof pub, &pub_len),
        1);
    b64url(pub + 1, 32, x);
    b64url(pub + 33, 32, y);
    char jwks[2048], path[300];
    snprintf(jwks, sizeof jwks,
             "{\"keys\":[{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"%s\",\"y\":\"%s\","
             "\"kid\":\"ec1\"},{\"kty\":\"RSA\",\"n\":\"%s\",\"e\":\"%s\",\"kid\":\"r1\","
             "\"use\":\"sig\"},{\"kty\":\"oct\",\"k\":\"AAAA\"}]}",
             x, y, n, e);
    snprintf(path, sizeof path, "%s/jwks.json", g_dir);
    FILE *f = fopen(path, "w");
    fputs(jwks, f);
    fclose(f);
    char spec[512];
    snprintf(spec, sizeof spec, "{\"algorithm\":\"RS256\",\"jwks\":\"%s\"}", path);
    srv_jwt *rs = verifier(spec);
    snprintf(spec, sizeof spec, "{\"algorithm\":\"ES256\",\"jwks\":\"%s\"}", path);
    srv_jwt *es = verifier(spec);
    char *t1 =
        sign("{\"alg\":\"RS256\",\"kid\":\"r1\"}", "{\"sub\":\"dan\"}", "RS256", g_rsa, NULL);
    char *t2 = sign("{\"alg\":\"RS256\"}", "{\"sub\":\"dan\"}", "RS256", g_rsa, NULL);
    char *t3 =
        sign("{\"alg\":\"RS256\",\"kid\":\"other\"}", "{\"sub\":\"dan\"}", "RS256", g_rsa, NULL);
    char *t4 =
        sign("{\"alg\":\"ES256\",\"kid\":\"ec1\"}", "{\"sub\":\"dan\"}", "ES256", g_ec, NULL);
    expect_ok(rs, t1, "dan");
    expect_ok(rs, t2, "dan");
    expect_bad(rs, t3, "bad signature", "unknown kid");
    expect_ok(es, t4, "dan");
    free(t1);
    free(t2);
    free(t3);
    free(t4);
    srv_jwt_free(rs);
    srv_jwt_free(es);
}

static void config_fails(const char *json, const char *want) {
    sst_value *v = tu_json(json);
    sst_error err = {0};
    srv_jwt *j = srv_jwt_new(v, NULL, &err);
    if (j != NULL) {
        fail_msg("accepted: %s", json);
    }
    if (strstr(err.msg, want) == NULL) {
        fail_msg("%s: message '%s' does not say '%s'", json, err.msg, want);
    }
    sst_value_unref(v);
}

static void test_config_errors(void **state) {
    (void)state;
    setenv("SST_TEST_SHORT", "short", 1);
    unsetenv("SST_TEST_UNSET");
    config_fails("[]", "must be an object");
    config_fails("{}", "\"algorithm\" must be");
    config_fails("{\"algorithm\":\"none\"}", "\"algorithm\" must be");
    config_fails("{\"algorithm\":\"HS256\"}", "\"secret_env\"");
    config_fails("{\"algorithm\":\"HS256\",\"secret_env\":\"SST_TEST_UNSET\"}", "not set");
    config_fails("{\"algorithm\":\"HS256\",\"secret_env\":\"SST_TEST_SHORT\"}", "shorter than 32");
    config_fails("{\"algorithm\":\"RS256\"}", "\"public_key\" or \"jwks\"");
    config_fails("{\"algorithm\":\"RS256\",\"public_key\":\"/nonexistent.pem\"}", "cannot read");
    config_fails("{\"algorithm\":\"HS256\",\"secrt\":1}", "unknown jwt member \"secrt\"");
    config_fails("{\"algorithm\":\"HS256\",\"issuer\":5}", "\"issuer\" must be");
    config_fails("{\"algorithm\":\"HS256\",\"leeway_s\":-1}", "leeway_s");
}

static void test_leeway(void **state) {
    (void)state;
    setenv("SST_TEST_JWT_SECRET", SECRET, 1);
    srv_jwt *j = verifier(
        "{\"algorithm\":\"HS256\",\"secret_env\":\"SST_TEST_JWT_SECRET\",\"leeway_s\":60}");
    char *t =
        sign(HS, "{\"sub\":\"eve\",\"exp\":1799999970,\"nbf\":1800000030}", "HS256", NULL, SECRET);
    expect_ok(j, t, "eve");
    free(t);
    t = sign(HS, "{\"sub\":\"eve\",\"exp\":1799999900}", "HS256", NULL, SECRET);
    expect_bad(j, t, "token expired", "expired past the leeway");
    free(t);
    srv_jwt_free(j);
}

static void test_api_keys(void **state) {
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/keys.json", g_dir);
    FILE *f = fopen(path, "w");
    fputs("{\"key-of-alice-0123456789\": \"alice\", \"key-of-admin-0123456789\": "
          "{\"identity\": \"root\", \"permissions\": [\"admin\"], \"team\": \"ops\"}}",
          f);
    fclose(f);
    sst_error err = {0};
    srv_keys *k = srv_keys_load(path, &err);
    assert_non_null(k);
    sst_value *u = srv_keys_find(k, "key-of-alice-0123456789");
    assert_json_eq(u, "{\"identity\":\"alice\",\"permissions\":[]}");
    sst_value_unref(u);
    u = srv_keys_find(k, "key-of-admin-0123456789");
    assert_json_eq(u, "{\"identity\":\"root\",\"permissions\":[\"admin\"],\"team\":\"ops\"}");
    sst_value_unref(u);
    assert_null(srv_keys_find(k, "key-of-alice-012345678"));
    assert_null(srv_keys_find(k, "key-of-alice-01234567890"));
    assert_null(srv_keys_find(k, ""));
    srv_keys_free(k);
    /* Bad files name the problem. */
    const char *bad[][2] = {
        {"[]", "must be an object"},
        {"{\"short\": \"x\"}", "shorter than 16"},
        /* A key only its first 16 characters of which a client could send. */
        {"{\"key-of-x-0123456789\\u0000tail\": \"x\"}", "holds a NUL character"},
        {"{\"key-of-x-0123456789\": 5}", "entry 1 must be"},
        {"{\"key-of-x-0123456789\": {\"identity\": \"\"}}", "entry 1 must be"},
        {"{\"key-of-x-0123456789\": {\"identity\": \"x\", \"permissions\": [1]}}",
         "entry 1 must be"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        f = fopen(path, "w");
        fputs(bad[i][0], f);
        fclose(f);
        err = (sst_error){0};
        assert_null(srv_keys_load(path, &err));
        if (strstr(err.msg, bad[i][1]) == NULL) {
            fail_msg("%s: '%s' does not say '%s'", bad[i][0], err.msg, bad[i][1]);
        }
    }
}

int main(void) {
    assert_int_equal(tu_temp_dir("sst_auth", g_dir, sizeof g_dir), 0);
    g_rsa = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
    g_rsa2 = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
    g_ec = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    assert_non_null(g_rsa);
    assert_non_null(g_ec);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hs256),  cmocka_unit_test(test_rs256_es256_pem),
        cmocka_unit_test(test_jwks),   cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_leeway), cmocka_unit_test(test_api_keys),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    EVP_PKEY_free(g_rsa);
    EVP_PKEY_free(g_rsa2);
    EVP_PKEY_free(g_ec);
    tu_rm_rf(g_dir);
    return rc;
}
