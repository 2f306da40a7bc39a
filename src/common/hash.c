/* SPDX-License-Identifier: MIT */
/*
 * The stable 64-bit hash used across layers (object indexes, value hashes,
 * task ids). No per-process seed: the same in every run and on every
 * platform (bytes are read little-endian).
 */
#include "common.h"

#define K_MUL 0x9E3779B97F4A7C15ull

static inline uint64_t rotl(uint64_t x, int r) {
    return (x << r) | (x >> (64 - r));
}

static inline uint64_t load_le64(const unsigned char *p) {
    uint64_t w = 0;
    for (int i = 0; i < 8; i++) {
        w |= (uint64_t)p[i] << (8 * i);
    }
    return w;
}

uint64_t sst__hash_mix(uint64_t h) {
    /* The finaliser of MurmurHash3 (public domain constants). */
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

uint64_t sst__hash_bytes(const void *data, size_t len, uint64_t seed) {
    const unsigned char *p = data;
    uint64_t h = seed ^ (len * K_MUL);
    while (len >= 8) {
        h = rotl(h ^ (load_le64(p) * K_MUL), 29) * 0xbf58476d1ce4e5b9ull;
        p += 8;
        len -= 8;
    }
    uint64_t tail = 0;
    for (size_t i = 0; i < len; i++) {
        tail |= (uint64_t)p[i] << (8 * i);
    }
    h = rotl(h ^ (tail * K_MUL), 29) * 0xbf58476d1ce4e5b9ull;
    return sst__hash_mix(h);
}
