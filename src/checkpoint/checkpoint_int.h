/* SPDX-License-Identifier: MIT */
/* Private helpers shared by the savers. */
#ifndef SUPERSTEP_CHECKPOINT_INT_H
#define SUPERSTEP_CHECKPOINT_INT_H

#include "common.h"
#include "superstep/checkpoint.h"
#include "superstep/json.h"

/* True when @p metadata has every member of @p filter with an equal value (NULL: true). */
bool sst__metadata_matches(const sst_value *metadata, const sst_value *filter);

/* A record without its "body", "next" and "writes" (new), as list returns them. */
sst_value *sst__record_header(const sst_value *record, sst_error *err);

#endif /* SUPERSTEP_CHECKPOINT_INT_H */
