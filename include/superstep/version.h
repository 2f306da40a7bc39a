/* SPDX-License-Identifier: MIT */
/* Library version: compile-time macros and the run-time sst_version(). */
#ifndef SUPERSTEP_VERSION_H
#define SUPERSTEP_VERSION_H

#include "superstep/export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SST_VERSION_MAJOR 0
#define SST_VERSION_MINOR 1
#define SST_VERSION_PATCH 0
/** 0xMMmmpp: compare with `#if SST_VERSION_HEX >= 0x000100`. */
#define SST_VERSION_HEX ((SST_VERSION_MAJOR << 16) | (SST_VERSION_MINOR << 8) | SST_VERSION_PATCH)

/**
 * The version of the library actually linked, as "MAJOR.MINOR.PATCH".
 * @return a static string, never NULL.
 */
SST_API const char *sst_version(void);

/** The linked library's SST_VERSION_HEX. */
SST_API unsigned sst_version_hex(void);

#ifdef __cplusplus
}
#endif
#endif /* SUPERSTEP_VERSION_H */
