/* SPDX-License-Identifier: MIT */
/*
 * The public tool set (superstep/agent.h's sst_toolset) seen from inside the
 * agent layer: other parts (MCP tools) add their tools to its list.
 */
#ifndef SUPERSTEP_AGENT_TOOLSET_H
#define SUPERSTEP_AGENT_TOOLSET_H

#include "superstep/agent.h"
#include "tools.h"

/* The tool list behind @p t (borrowed; lives as long as @p t). */
sst__tools *sst__toolset_tools(sst_toolset *t);

#endif
