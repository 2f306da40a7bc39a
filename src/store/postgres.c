/* SPDX-License-Identifier: MIT */
/*
 * The PostgreSQL store (LangGraph's PostgresStore): opening it on a pool of
 * connections (include/superstep/postgres.h), its tables and their
 * migrations, and the helpers its operations share (postgres_int.h).
 *
 * Opening creates or migrates the tables (sst__pg_schema: a build meeting
 * tables of a newer schema version refuses them, SST_ENOTSUP, and changes
 * nothing), then checks that the vectors already stored have the size the
 * index asks for (one row is read: a store holds one size).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "postgres_int.h"

/*
 * Schema steps: k_steps[i] takes the store tables from version i to i + 1.
 * Append a step for a change; never edit a published one.
 *
 * Vectors are bytea because Debian 12 ships no pgvector: see
 * postgres_search.c for what ranking in C costs and where pgvector would go.
 * STORAGE EXTERNAL: float32 noise does not compress, so TOAST should not try.
 */
static const char *const k_steps[] = {
    "CREATE SEQUENCE sst_store_seq;"
    "CREATE TABLE sst_store_items("
    " ns text[] COLLATE \"C\" NOT NULL,"
    " key text COLLATE \"C\" NOT NULL,"
    " value bytea NOT NULL,"
    " created_us bigint NOT NULL,"
    " updated_us bigint NOT NULL,"
    " expires_us bigint,"
    " ttl_minutes double precision,"
    " seq bigint NOT NULL,"
    " PRIMARY KEY (ns, key));"
    "CREATE INDEX sst_store_items_seq ON sst_store_items(seq);"
    "CREATE INDEX sst_store_items_expires ON sst_store_items(expires_us) WHERE expires_us IS NOT "
    "NULL;"
    "CREATE TABLE sst_store_vectors("
    " ns text[] COLLATE \"C\" NOT NULL,"
    " key text COLLATE \"C\" NOT NULL,"
    " n integer NOT NULL,"
    " vector bytea NOT NULL,"
    " PRIMARY KEY (ns, key, n),"
    " FOREIGN KEY (ns, key) REFERENCES sst_store_items ON DELETE CASCADE);"
    "ALTER TABLE sst_store_vectors ALTER vector SET STORAGE EXTERNAL;",
};
_Static_assert(SST_ARRAY_LEN(k_steps) == SST_STORE_POSTGRES_SCHEMA_VERSION,
               "one schema step per version");

/* ---- helpers ---- */

sst_code sst__pgs_error(const pgstore *s, sst_error *err, sst_code code, const char *fmt, ...) {
    char what[SST_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return sst__error(err, code, "store (PostgreSQL %s): %s", sst_pg_name(s->pg), what);
}

char **sst__pgs_split(const char *joined, size_t len, size_t *n) {
    size_t labels = 1;
    for (size_t i = 0; i < len; i++) {
        labels += joined[i] == '.';
    }
    char **out = sst__malloc((labels + 1) * sizeof *out + len + 1);
    if (out == NULL) {
        return NULL;
    }
    char *text = (char *)(out + labels + 1);
    memcpy(text, joined, len);
    text[len] = '\0';
    size_t k = 0;
    out[k++] = text;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '.') {
            text[i] = '\0';
            out[k++] = text + i + 1;
        }
    }
    out[k] = NULL;
    *n = k;
    return out;
}

static bool big_endian(void) {
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 0;
}

/* Reverses the bytes of each of the @p n floats at @p p. */
static void swap_floats(unsigned char *p, size_t n) {
    for (size_t i = 0; i < n; i++, p += 4) {
        unsigned char t0 = p[0], t1 = p[1];
        p[0] = p[3];
        p[1] = p[2];
        p[2] = t1;
        p[3] = t0;
    }
}

void sst__pgs_floats_in(float *dst, const void *src, size_t n) {
    memcpy(dst, src, n * sizeof(float));
    if (big_endian()) {
        swap_floats((unsigned char *)dst, n);
    }
}

void *sst__pgs_floats_out(const float *src, size_t n) {
    void *out = sst__malloc(n > 0 ? n * sizeof(float) : 1);
    if (out != NULL) {
        memcpy(out, src, n * sizeof(float));
        if (big_endian()) {
            swap_floats(out, n);
        }
    }
    return out;
}

void sst__pgs_array_add(sst__buf *b, const char *s) {
    /* Inside double quotes only '"' and '\' need a backslash (array_in). */
    sst__buf_putc(b, '"');
    for (const char *p = s; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\') {
            sst__buf_putc(b, '\\');
        }
        sst__buf_putc(b, *p);
    }
    sst__buf_putc(b, '"');
}

void sst__pgs_float8(unsigned char out[8], double v) {
    /* float8's binary format (locale-proof, exact): the IEEE 754 bits, big-endian. */
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    for (int i = 0; i < 8; i++) {
        out[i] = (unsigned char)(bits >> (56 - 8 * i));
    }
}

double sst__pgs_double_at(const PGresult *r, int row, int col) {
    if (PQgetisnull(r, row, col) || PQgetlength(r, row, col) != 8) {
        return 0;
    }
    /* float8's binary format: the IEEE 754 bits, most significant byte first. */
    const unsigned char *v = (const unsigned char *)PQgetvalue(r, row, col);
    uint64_t bits = 0;
    for (int i = 0; i < 8; i++) {
        bits = bits << 8 | v[i];
    }
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* ---- opening ---- */

/* The size of one stored vector (any: a store holds one size), or 0 when none is stored. */
static sst_code stored_vector_bytes(sst__pg_conn *c, void *user, sst_error *err) {
    int64_t *bytes = user;
    PGresult *r = sst__pg_exec(c, "sst_store_vector_size",
                               "SELECT octet_length(vector)::bigint FROM sst_store_vectors LIMIT 1",
                               NULL, "store open: reading a vector's size", err);
    if (r == NULL) {
        return sst__code(err);
    }
    *bytes = PQntuples(r) > 0 ? sst__pg_int(r, 0, 0) : 0;
    PQclear(r);
    return SST_OK;
}

void sst__pgs_destroy(void *self) {
    pgstore *s = self;
    sst_pg_release(s->pg);
    sst__free(s);
}

sst_store *sst_postgres_store_new_pg(sst_pg *pg, const sst_store_opts *o, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (pg == NULL) {
        sst__error(err, SST_EINVAL, "postgres store: NULL pool");
        return NULL;
    }
    sst_store_opts defaults;
    sst_store_opts_init(&defaults);
    o = o != NULL ? o : &defaults;
    if (sst__store_check_opts(o, err) != SST_OK) {
        return NULL;
    }
    pgstore *s = sst__calloc(1, sizeof *s);
    if (s == NULL) {
        sst__enomem(err);
        return NULL;
    }
    s->pg = sst_pg_ref(pg);
    s->dims = o->index.dims;
    s->threads = sst__store_threads(o->search_threads);
    int64_t bytes = 0;
    sst_code rc = sst__pg_schema(pg, "store", k_steps, (int)SST_ARRAY_LEN(k_steps), err);
    if (rc == SST_OK && s->dims > 0) {
        rc = sst__pg_read(pg, stored_vector_bytes, &bytes, err);
    }
    if (rc == SST_OK && bytes > 0 && (uint64_t)bytes != s->dims * sizeof(float)) {
        rc = sst__pgs_error(s, err, SST_EIO,
                            "it holds %lld-dim vectors; the store was opened with index dims %zu",
                            (long long)bytes / (long long)sizeof(float), s->dims);
    }
    if (rc != SST_OK) {
        sst__pgs_destroy(s);
        return NULL;
    }
    return sst__store_wrap(&sst__pgs_ops, s, o, err);
}

sst_store *sst_postgres_store_new(const char *url, const sst_store_opts *o, sst_error *err) {
    SST__ERR_LOCAL(err);
    sst_pg *pg = sst_pg_open(url, NULL, err);
    if (pg == NULL) {
        return NULL;
    }
    sst_store *st = sst_postgres_store_new_pg(pg, o, err);
    sst_pg_release(pg); /* the store holds its own reference */
    return st;
}
