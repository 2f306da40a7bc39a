/* SPDX-License-Identifier: MIT */
/*
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of
 * every stored checkpoint record. The SSE4.2 crc32 instruction when the CPU
 * has it (chosen once, at the first call), else slicing-by-8 tables built
 * here at first use. Both give the same values as iSCSI/ext4's CRC-32C.
 */
#include <pthread.h>

#include "common.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SST_CRC_HW 1
#include <nmmintrin.h>
#endif

static uint32_t g_table[8][256];
static bool g_hw;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) {
            c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        }
        g_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++) {
        for (int t = 1; t < 8; t++) {
            uint32_t prev = g_table[t - 1][i];
            g_table[t][i] = (prev >> 8) ^ g_table[0][prev & 0xff];
        }
    }
#ifdef SST_CRC_HW
    __builtin_cpu_init();
    g_hw = __builtin_cpu_supports("sse4.2");
#endif
}

static uint32_t crc_soft(uint32_t c, const unsigned char *p, size_t n) {
    while (n >= 8) {
        uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                           (uint32_t)p[3] << 24);
        c = g_table[7][lo & 0xff] ^ g_table[6][(lo >> 8) & 0xff] ^ g_table[5][(lo >> 16) & 0xff] ^
            g_table[4][lo >> 24] ^ g_table[3][p[4]] ^ g_table[2][p[5]] ^ g_table[1][p[6]] ^
            g_table[0][p[7]];
        p += 8;
        n -= 8;
    }
    while (n-- > 0) {
        c = (c >> 8) ^ g_table[0][(c ^ *p++) & 0xff];
    }
    return c;
}

#ifdef SST_CRC_HW
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t c, const unsigned char *p,
                                                         size_t n) {
    uint64_t c64 = c;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c64 = _mm_crc32_u64(c64, w);
        p += 8;
        n -= 8;
    }
    c = (uint32_t)c64;
    while (n-- > 0) {
        c = _mm_crc32_u8(c, *p++);
    }
    return c;
}
#endif

uint32_t sst__crc32c(uint32_t crc, const void *data, size_t len) {
    pthread_once(&g_once, crc_init);
    uint32_t c = ~crc;
    const unsigned char *p = data;
    if (len == 0) {
        return crc;
    }
#ifdef SST_CRC_HW
    if (g_hw) {
        return ~crc_hw(c, p, len);
    }
#endif
    return ~crc_soft(c, p, len);
}

uint32_t sst__crc32c_soft(uint32_t crc, const void *data, size_t len) {
    pthread_once(&g_once, crc_init);
    return len == 0 ? crc : ~crc_soft(~crc, data, len);
}
