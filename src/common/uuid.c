/* SPDX-License-Identifier: MIT */
/*
 * UUIDs (RFC 9562): random ones (version 4) for message and thread ids, and
 * time-ordered ones (version 7) for checkpoint ids, whose text sorts in the
 * order they were made. The public wrappers are declared in superstep/id.h.
 */
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "common.h"
#include "common/hex.h"
#include "superstep/id.h"

/* The 36 characters of the UUID in @p b, and a NUL. */
static void format(const unsigned char b[16], char out[37]) {
    static const char hex[] = "0123456789abcdef";
    size_t k = 0;
    for (size_t i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) {
            out[k++] = '-';
        }
        out[k++] = hex[b[i] >> 4];
        out[k++] = hex[b[i] & 15];
    }
    out[k] = '\0';
}

sst_code sst__uuid4(char out[37], sst_error *err) {
    unsigned char b[16];
    sst_code rc = sst__random_bytes(b, sizeof b, err);
    if (rc != SST_OK) {
        return rc;
    }
    b[6] = (unsigned char)((b[6] & 0x0F) | 0x40); /* version 4 */
    b[8] = (unsigned char)((b[8] & 0x3F) | 0x80); /* RFC variant */
    format(b, out);
    return SST_OK;
}

/*
 * The clock of the id after one whose clock was @p prev, made at @p ms
 * milliseconds since the epoch. A clock is the milliseconds shifted left by
 * 16, plus a counter in the low bits: ms << 16 when the time has moved on,
 * else prev + 1, so clocks strictly increase even if the wall clock steps
 * back. Only 12 bits of the counter reach the text (the version takes the
 * other 4), so a counter past 0x0fff borrows the next millisecond instead:
 * past 4096 ids in one millisecond the text would otherwise go backwards.
 */
static uint64_t next_clock(uint64_t prev, uint64_t ms) {
    uint64_t clock = ms << 16;
    if (clock <= prev) {
        clock = prev + 1;
        if ((clock & 0xffff) > 0x0fff) {
            clock = ((clock >> 16) + 1) << 16;
        }
    }
    return clock;
}

/* The id of @p clock: 48-bit milliseconds, version 7, the 12-bit counter, variant, random. */
static void format7(uint64_t clock, const struct timespec *ts, char out[37]) {
    unsigned char rnd[8] = {0};
    if (sst__random_bytes(rnd, sizeof rnd, NULL) != SST_OK) {
        uint64_t t = (uint64_t)ts->tv_nsec ^ clock;
        memcpy(rnd, &t, sizeof rnd);
    }
    unsigned char b[16];
    for (int i = 0; i < 8; i++) {
        b[i] = (unsigned char)(clock >> (56 - 8 * i));
    }
    b[6] = (unsigned char)(0x70 | (b[6] & 0x0f));
    memcpy(b + 8, rnd, 8);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    format(b, out);
}

static uint64_t now_ms(struct timespec *ts) {
    clock_gettime(CLOCK_REALTIME, ts);
    return (uint64_t)ts->tv_sec * 1000u + (uint64_t)ts->tv_nsec / 1000000u;
}

/*
 * The clock of every id of the process (sst_uuid7's and the threads' own): the one piece
 * of global state besides the allocator, and it needs no init. A compare-and-swap loop
 * takes the next clock, so two ids never get the same one, and ids made for different
 * threads and namespaces (a subgraph's beside its parent's) sort in creation order.
 * Relaxed order: the ids need only the atomicity of the swap.
 */
static _Atomic uint64_t g_clock;

void sst__uuid7(uint64_t *clock, char out[37]) {
    struct timespec ts;
    uint64_t ms = now_ms(&ts);
    uint64_t seen = atomic_load_explicit(&g_clock, memory_order_relaxed), next;
    do {
        next = next_clock(*clock > seen ? *clock : seen, ms);
    } while (!atomic_compare_exchange_weak_explicit(&g_clock, &seen, next, memory_order_relaxed,
                                                    memory_order_relaxed));
    *clock = next;
    format7(*clock, &ts, out);
}

uint64_t sst__uuid7_clock(const char *id) {
    if (id == NULL || strlen(id) != 36 || id[8] != '-' || id[13] != '-' || id[14] != '7') {
        return 0;
    }
    uint64_t clock = 0;
    int digits = 0;
    for (const char *p = id; digits < 16; p++) {
        if (*p == '-') {
            continue;
        }
        int d = *p >= 'A' && *p <= 'F' ? -1 : sst__hex_digit(*p); /* lowercase, as written */
        if (d < 0) {
            return 0;
        }
        clock = clock << 4 | (uint64_t)d;
        digits++;
    }
    return clock & ~(uint64_t)0xf000; /* the version nibble is not part of the counter */
}

sst_code sst_uuid4(char out[37], sst_error *err) {
    return sst__uuid4(out, err);
}

void sst_uuid7(char out[37]) {
    struct timespec ts;
    uint64_t ms = now_ms(&ts);
    uint64_t prev = atomic_load_explicit(&g_clock, memory_order_relaxed);
    uint64_t clock;
    do {
        clock = next_clock(prev, ms);
    } while (!atomic_compare_exchange_weak_explicit(&g_clock, &prev, clock, memory_order_relaxed,
                                                    memory_order_relaxed));
    format7(clock, &ts, out);
}

sst_code sst_uuid5(const char *ns, const char *name, char out[37], sst_error *err) {
    unsigned char bytes[16];
    size_t n = 0;
    for (const char *p = ns; p != NULL && *p != '\0' && n < 32; p++) {
        if (*p == '-' && (p - ns == 8 || p - ns == 13 || p - ns == 18 || p - ns == 23)) {
            continue;
        }
        int d = sst__hex_digit(*p);
        if (d < 0) {
            break;
        }
        bytes[n / 2] = (unsigned char)(n % 2 == 0 ? d << 4 : bytes[n / 2] | d);
        n++;
    }
    if (ns == NULL || name == NULL || n != 32 || strlen(ns) != 36) {
        return sst__error(err, SST_EINVAL, "uuid5: namespace '%s' is not a UUID",
                          ns != NULL ? ns : "(null)");
    }
    size_t len = strlen(name);
    unsigned char *buf = sst__malloc(16 + len);
    if (buf == NULL) {
        return sst__enomem(err);
    }
    memcpy(buf, bytes, 16);
    memcpy(buf + 16, name, len);
    unsigned char h[20];
    sst__sha1(buf, 16 + len, h);
    sst__free(buf);
    h[6] = (unsigned char)((h[6] & 0x0f) | 0x50);
    h[8] = (unsigned char)((h[8] & 0x3f) | 0x80);
    static const char hex[] = "0123456789abcdef";
    char *o = out;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) {
            *o++ = '-';
        }
        *o++ = hex[h[i] >> 4];
        *o++ = hex[h[i] & 15];
    }
    *o = '\0';
    return SST_OK;
}
