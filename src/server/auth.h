/* SPDX-License-Identifier: MIT */
/*
 * Users and ownership in `superstep serve` (docs/auth.md): who a request comes from
 * (a JWT bearer token, an API key, or a Lua auth file's authenticate), and what that
 * user may see (the owner stamped on what they create, the filter on what they read).
 *
 * The pieces, each in its own file:
 * - auth_jwt.c: verifying JWTs (HS256, RS256, ES256; exp, nbf, iss, aud) with OpenSSL;
 * - auth_keys.c: an API-keys file, compared in constant time;
 * - auth_lua.c: a Lua auth file (authenticate and `on` handlers);
 * - auth.c: the configuration and the choke point the router calls for every request.
 */
#ifndef SUPERSTEP_SERVER_AUTH_H
#define SUPERSTEP_SERVER_AUTH_H

#include <openssl/types.h>
#include <stdbool.h>
#include <stdint.h>

#include "common.h"
#include "superstep/value.h"
#include "values/build.h"

/* The longest token or key accepted (a longer one is refused before it is decoded). */
#define SRV_AUTH_MAX_TOKEN 8192

/* The length of a token's or key's digest (SHA-256). */
#define SRV_DIGEST_LEN 32

/* The SHA-256 of @p token into @p out, computed with @p md (NULL: OpenSSL's SHA-256; a
 * caller digesting often passes one it fetched once, as a fetch costs more than a short
 * digest). False for a token longer than SRV_AUTH_MAX_TOKEN or when OpenSSL fails. */
bool srv_token_digest(const char *token, const EVP_MD *md, unsigned char out[SRV_DIGEST_LEN]);

/* ---- JWT (auth_jwt.c) ---------------------------------------------------------- */

typedef struct srv_jwt srv_jwt;

/*
 * A JWT verifier from langgraph.json's "auth": {"jwt": {...}} object @p spec:
 * "algorithm" ("HS256", "RS256" or "ES256"; required), the key: "secret_env" (HS256: the
 * environment variable holding the secret), "public_key" (a PEM file) or "jwks" (a JWKS
 * file), "issuer", "audience", "identity_claim" (default "sub"), "permissions_claim"
 * (default "permissions"), "leeway_s" (clock skew allowed, default 0). Files are relative
 * to @p base (a file whose folder they are in; NULL: the working directory).
 * NULL with SST_EINVAL naming the bad member, SST_EIO (a file).
 */
srv_jwt *srv_jwt_new(const sst_value *spec, const char *base, sst_error *err);
void srv_jwt_free(srv_jwt *j);
/*
 * Verifies @p token (the text after "Bearer ") at time @p now_s (seconds since the epoch):
 * its claims (new) when the signature, the algorithm and the time and issuer/audience
 * checks pass and the identity claim is a non-empty string; else NULL with SST_EINVAL and a
 * message saying what is wrong ("token expired", "algorithm 'none' is not accepted", ...).
 */
sst_value *srv_jwt_verify(const srv_jwt *j, const char *token, int64_t now_s, sst_error *err);
/* The claim naming the identity, and the one holding the permissions. */
const char *srv_jwt_identity_claim(const srv_jwt *j);
const char *srv_jwt_permissions_claim(const srv_jwt *j);
/* The clock skew allowed on exp and nbf, in seconds. */
int64_t srv_jwt_leeway_s(const srv_jwt *j);

/* ---- verified tokens, remembered (auth_cache.c) ----------------------------------------- */

/* The slots of the cache (its bound: one token each), and the longest a token is kept. */
#define SRV_TOKEN_CACHE_SLOTS 4096
#define SRV_TOKEN_CACHE_MAX_S 300

typedef struct srv_token_cache srv_token_cache;

/* An empty cache, or NULL (out of memory: the server then verifies every time). */
srv_token_cache *srv_token_cache_new(void);
void srv_token_cache_free(srv_token_cache *c);
/* The user @p token verified as (a new reference) when it is cached and its time has not
 * run out at @p now_s; else NULL. Any thread. NULL @p c: NULL. */
sst_value *srv_token_cache_get(srv_token_cache *c, const char *token, int64_t now_s);
/* Remembers that @p token verified at @p now_s as @p user (referenced), until its @p exp
 * (NAN: none) plus @p leeway_s, and SRV_TOKEN_CACHE_MAX_S at most; it replaces the token in
 * its slot. Any thread. NULL @p c: nothing. */
void srv_token_cache_put(srv_token_cache *c, const char *token, const sst_value *user, double exp,
                         int64_t leeway_s, int64_t now_s);
/* How many tokens it holds (at most SRV_TOKEN_CACHE_SLOTS). */
size_t srv_token_cache_count(srv_token_cache *c);

/* ---- API keys (auth_keys.c) ------------------------------------------------------ */

typedef struct srv_keys srv_keys;

/*
 * The API keys of the JSON file @p path: {"<key>": "<identity>"} or {"<key>":
 * {"identity": "...", "permissions": [...], ...more fields}}. NULL with SST_EIO,
 * SST_EPARSE or SST_EINVAL naming the bad entry.
 */
srv_keys *srv_keys_load(const char *path, sst_error *err);
void srv_keys_free(srv_keys *k);
/*
 * The user of @p key (new: {"identity", "permissions", ...}), or NULL when no key matches.
 * Every key is compared, each in constant time (their SHA-256 digests): the time does not
 * tell which key, or how much of one, matched.
 */
sst_value *srv_keys_find(const srv_keys *k, const char *key);

/* srv_auth and srv_auth_req are declared in server_int.h (the server and each request
 * hold one). */
#include "server_int.h"

/* ---- a Lua auth file (auth_lua.c) ------------------------------------------------- */

typedef struct srv_lua_auth srv_lua_auth;

/* Loads the Lua auth file @p path (its comment in auth_lua.c); NULL with SST_EINVAL naming
 * the file and the problem. */
srv_lua_auth *srv_lua_auth_load(const char *path, sst_error *err);
void srv_lua_auth_free(srv_lua_auth *l);
/* authenticate(request): the user (new: {"identity", "permissions", ...}), or NULL with the
 * refusal's *status and message. */
sst_value *srv_lua_auth_authenticate(srv_lua_auth *l, srv_request *r, unsigned *status, char *msg,
                                     size_t n);
typedef enum srv_lua_verdict { SRV_LUA_ALLOW, SRV_LUA_REFUSE } srv_lua_verdict;
/*
 * Runs the handler of @p resource.@p action (the most specific of "resource.action",
 * on[resource][action], on[resource], "*"; none: allowed) on the user and *value (taken and
 * replaced by the value as the handler left it). SRV_LUA_ALLOW with *filter (new; NULL: no
 * filter), or SRV_LUA_REFUSE with *status and a message.
 */
srv_lua_verdict srv_lua_auth_authorize(srv_lua_auth *l, const sst_value *user, const char *resource,
                                       const char *action, sst_value **value, sst_value **filter,
                                       unsigned *status, char *msg, size_t n);
/* True when @p metadata matches the handler filter @p filter, as LangGraph's servers match
 * one: each member equal (or {"$eq": v}), or {"$contains": v} with the member a list
 * holding v (v a list: holding each of its values). */
/* The first key of object @p spec that the NULL-ended list @p known does not name,
 * or NULL when every key is known. */
const char *srv_auth_unknown_member(const sst_value *spec, const char *const *known);

bool srv_auth_filter_matches(const sst_value *filter, const sst_value *metadata);
/* True when the request's Lua filter has a member the saver cannot apply ($contains): its
 * search must not let the saver page, and keeps what srv_auth_search_keeps keeps. */
bool srv_auth_filters_after(const srv_request *r);
/* False when @p metadata fails the request's Lua filter (always true without one). */
bool srv_auth_search_keeps(const srv_request *r, const sst_value *metadata);

/* ---- the choke point (auth.c) ------------------------------------------------------ */

void srv_auth_free(srv_auth *a);
/*
 * The router's hook: for a request matched to route @p pattern (@p open: served without
 * a user), finds the user and checks and adjusts the request for its resource.action
 * (the file comment of auth.c). Returns @p h, or a handler answering the refusal (401 for
 * no or a bad token, 404 for another user's resource, 403, 409).
 */
srv_handler srv_auth_gate(srv_request *r, const char *pattern, srv_handler h, bool open);
/* Frees the request's auth state (the request's end). */
void srv_auth_release(srv_request *r);
/* The identity every search of @p r is limited to: NULL without auth or for an admin. */
const char *srv_auth_owner(const srv_request *r);
/* The request's user ({"identity", "permissions", ...}; borrowed), or NULL. */
const sst_value *srv_auth_user(const srv_request *r);
/* True when the request's user may see a resource with @p metadata: no auth, an admin,
 * their own, or one with no owner (shared, as the graphs' own assistants are). */
bool srv_auth_sees(const srv_request *r, const sst_value *metadata);
/* @p metadata (taken) with "owner" set to the request's user (when there is one); for a
 * thread a run makes. NULL @p r: unchanged. */
sst_value *srv_auth_stamp(const srv_request *r, sst_value *metadata);

#endif
