/* SPDX-License-Identifier: MIT */
/*
 * LangMem's memory tools for the prebuilt agent: manage_memory (create,
 * update or delete a memory) and search_memory, over the run's long-term
 * store (sst_node_store of the tool node) under a namespace template whose
 * "{key}" labels are filled from the run's config.configurable at each call,
 * as LangMem's NamespaceTemplate does. See memory_tools.c for the choices.
 */
#ifndef SUPERSTEP_AGENT_MEMORY_TOOLS_H
#define SUPERSTEP_AGENT_MEMORY_TOOLS_H

#include "tools.h"

/* A namespace template, e.g. ("memories", "{user_id}"). */
typedef struct sst__memory_tools sst__memory_tools;

/*
 * Copies the template of @p n labels. A label is non-empty and holds no '.',
 * or is "{key}" with a non-empty key.
 * @return new template; NULL with SST_EINVAL (naming the label) or SST_ENOMEM.
 */
sst__memory_tools *sst__memory_tools_new(const char *const *labels, size_t n, sst_error *err);
void sst__memory_tools_free(sst__memory_tools *m);

/*
 * Adds manage_memory and search_memory to @p t; they borrow @p m, which must
 * outlive @p t. SST_EINVAL when @p t has a tool of either name already.
 */
sst_code sst__memory_tools_add(sst__tools *t, const sst__memory_tools *m, sst_error *err);

#endif
