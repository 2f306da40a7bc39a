/* SPDX-License-Identifier: MIT */
/* Random UUIDs (RFC 9562 version 4) for message ids. */
#include <string.h>

#include "common.h"

sst_code sst__uuid4(char out[37], sst_error *err) {
    unsigned char b[16];
    sst_code rc = sst__random_bytes(b, sizeof b, err);
    if (rc != SST_OK) {
        return rc;
    }
    b[6] = (unsigned char)((b[6] & 0x0F) | 0x40); /* version 4 */
    b[8] = (unsigned char)((b[8] & 0x3F) | 0x80); /* RFC variant */
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
    return SST_OK;
}
