/* SPDX-License-Identifier: MIT */
/*
 * The HTTP machinery the agent layer's clients share (llm_client.c for chat
 * completions, anthropic_client.c for Anthropic's messages, embeddings.c for
 * embeddings): a JSON POST to {base_url}{path}
 * over libcurl with connect and total (or stall) timeouts, a bounded reply,
 * and retries with exponential backoff on 429, 5xx and connection errors that
 * honour Retry-After. Errors name the client, the URL, the HTTP status and an
 * excerpt of the body, and never a secret (redact.h): the URL without its
 * user info (still sent, as basic auth), no request header, and the excerpt
 * with bearer and basic credentials, sk-... keys, the API key (read from an
 * environment variable) and the URL's password masked.
 */
#ifndef SUPERSTEP_AGENT_HTTP_H
#define SUPERSTEP_AGENT_HTTP_H

#include "common.h"

typedef struct sst__http_config {
    const char *what;        /* names the client in messages: "LLM", "embeddings" */
    long connect_timeout_ms; /* default 5000 */
    long timeout_ms;         /* the whole request, or a stall when stall_timeout; default 60000 */
    bool stall_timeout;      /* timeout_ms bounds a stall (no data), for streams; default false */
    unsigned max_attempts;   /* default 3; 0 counts as 1 */
    long retry_base_ms;      /* first backoff, doubled each retry; default 500 */
    long max_retry_after_ms; /* cap on a wait, the server's Retry-After included; default 30000 */
    size_t max_response;     /* bytes of a reply; default 8 MiB */
    /*
     * Asked while a request runs (a few times a second) and before a retry:
     * true stops it with SST_ETIMEOUT, not retried (a node that ran out of
     * time: sst_node_cancelled). NULL: never.
     */
    bool (*cancelled)(void *ud);
    void *cancel_ud;
} sst__http_config;

void sst__http_config_init(sst__http_config *c);

/*
 * One endpoint, as every POST to it sends it: the URL, the headers and what
 * errors may show. Any number of bodies may be posted with one request (one
 * thread at a time); its curl handle, made at the first post, keeps the
 * connection for the next.
 */
typedef struct sst__http_request {
    const sst__http_config *cfg; /* borrowed */
    char url[1024];              /* sent: keeps the user info, which curl uses for basic auth */
    char shown[1024];            /* the URL without its user info, for messages */
    struct curl_slist *headers;  /* owned */
    char *password;              /* owned copy of the URL's password, or NULL */
    const char *secrets[2];      /* the API key and the password, masked in quoted bodies */
    void *curl;                  /* owned CURL handle, or NULL before the first post */
} sst__http_request;

/*
 * Prepares @p q for POSTs to @p base_url (a trailing '/' is dropped) followed
 * by @p path ("/embeddings"), accepting @p accept ("application/json"), with
 * "Authorization: Bearer KEY" when the environment variable @p api_key_env
 * (may be NULL) holds a key. On error @p q still needs sst__http_request_free.
 * @return SST_OK; SST_EINVAL (a URL longer than the buffer), SST_ENOMEM.
 */
sst_code sst__http_request_init(sst__http_request *q, const sst__http_config *c,
                                const char *base_url, const char *path, const char *accept,
                                const char *api_key_env, sst_error *err);

/* How a request carries its key, and the other headers it sends. */
typedef struct sst__http_auth {
    const char *key_env; /* the environment variable holding the key, or NULL for none */
    /* The header the key goes in as "NAME: KEY" ("x-api-key"); NULL: "Authorization: Bearer
     * KEY". Either way the key is one of the secrets masked in messages. */
    const char *key_header;
    const char *const *headers; /* more "Name: value" lines, NULL-terminated; or NULL */
} sst__http_auth;

/*
 * sst__http_request_init with the key sent as @p auth says (NULL: no key) and
 * @p auth's extra headers.
 * @return SST_OK; SST_EINVAL (a URL longer than the buffer), SST_ENOMEM.
 */
sst_code sst__http_request_init_auth(sst__http_request *q, const sst__http_config *c,
                                     const char *base_url, const char *path, const char *accept,
                                     const sst__http_auth *auth, sst_error *err);
/* Frees @p q; its copies of the key and the password are wiped first. */
void sst__http_request_free(sst__http_request *q);

/*
 * What a POST does with the reply of each attempt. The callbacks run on the
 * calling thread.
 */
typedef struct sst__http_handler {
    void *ud;
    /* Before each attempt: resets what an earlier attempt left. May be NULL. */
    void (*begin)(void *ud);
    /*
     * The bytes of a 200 reply as they arrive (a stream). NULL: the reply is
     * collected and handed to done whole. An error stops the transfer and is
     * the attempt's error, retried only when the callback sets *transient (a
     * stream that says mid-way that the server is overloaded).
     */
    sst_code (*data)(void *ud, const char *bytes, size_t len, bool *transient, sst_error *err);
    /*
     * The end of a 200 reply: @p body (NUL-terminated, @p len bytes) is the
     * whole reply, or empty when data took it. SST_OK ends the POST; an error
     * ends the attempt, retried when the callback sets *transient.
     */
    sst_code (*done)(void *ud, const char *body, size_t len, bool *transient, sst_error *err);
    /* After each attempt, whatever its outcome. May be NULL. */
    void (*end)(void *ud);
    /*
     * The body of a reply that is not 200, as the error quotes it: appends a
     * description to @p out (Anthropic's "overloaded_error: Overloaded"), or
     * nothing to quote the body itself. Either is masked (redact.h) and cut
     * to 200 bytes. May be NULL.
     */
    void (*error_text)(void *ud, const char *body, size_t len, sst__buf *out);
} sst__http_handler;

/*
 * POSTs @p body (JSON) with @p q until an attempt succeeds, fails for good,
 * or max_attempts are spent; between attempts it waits the server's
 * Retry-After, else the backoff, capped at max_retry_after_ms. A failure
 * after several attempts that was transient throughout says "after N
 * attempts: ..." and keeps the last attempt's error.
 * @p err must not be NULL (callers use SST__ERR_LOCAL).
 * @return SST_OK; SST_ETIMEOUT, SST_EUNAVAILABLE (connection failures, 429,
 *         5xx: transient), SST_EINVAL (other HTTP statuses), SST_ERANGE (a
 *         reply larger than max_response), SST_ENOMEM, or the handler's error.
 */
sst_code sst__http_post(sst__http_request *q, const char *body, const sst__http_handler *h,
                        sst_error *err);

#endif
