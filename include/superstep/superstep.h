/* SPDX-License-Identifier: MIT */
/* The umbrella header: includes every public layer header of superstep. */
#ifndef SUPERSTEP_SUPERSTEP_H
#define SUPERSTEP_SUPERSTEP_H

#include "superstep/cache.h"
#include "superstep/checkpoint.h"
#include "superstep/error.h"
#include "superstep/functional.h"
#include "superstep/graph.h"
#include "superstep/id.h"
#include "superstep/json.h"
#include "superstep/postgres.h"
#include "superstep/pregel.h"
#include "superstep/reducer.h"
#include "superstep/retry.h"
#include "superstep/sqlite.h"
#include "superstep/store.h"
#include "superstep/value.h"
#include "superstep/version.h"

#endif /* SUPERSTEP_SUPERSTEP_H */
