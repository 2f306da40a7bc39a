/* SPDX-License-Identifier: MIT */
/* The HTTP helper of the server tests (libcurl); see tu_http_json in test_util.h. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "superstep/json.h"
#include "test_util.h"

typedef struct reply {
    char *text; /* malloc'd, grown as the body comes */
    size_t len, cap;
} reply;

static size_t collect(char *p, size_t size, size_t n, void *ud) {
    reply *r = ud;
    size_t len = size * n;
    if (r->len + len + 1 > r->cap) {
        size_t cap = (r->len + len + 1) * 2;
        char *grown = realloc(r->text, cap);
        assert_non_null(grown);
        r->text = grown;
        r->cap = cap;
    }
    memcpy(r->text + r->len, p, len);
    r->len += len;
    r->text[r->len] = '\0';
    return len;
}

sst_value *tu_http_json(unsigned port, const char *method, const char *path, const char *body,
                        long *status) {
    char url[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%u%s", port, path);
    CURL *h = curl_easy_init();
    assert_non_null(h);
    reply r = {0};
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &r);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, (long)(60 * tu_time_scale()));
    if (body != NULL) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    }
    CURLcode rc = curl_easy_perform(h);
    if (rc != CURLE_OK) {
        print_error("%s %s: %s\n", method, path, curl_easy_strerror(rc));
    }
    assert_int_equal(rc, CURLE_OK);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    sst_value *v = NULL;
    if (r.len > 0) {
        sst_error err = {0};
        v = sst_json_read(r.text, r.len, NULL, &err);
        if (v == NULL) {
            print_error("%s %s: the reply is not JSON (%s): %s\n", method, path, err.msg, r.text);
        }
        assert_non_null(v);
    }
    free(r.text);
    return v;
}
