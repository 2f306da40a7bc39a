/* SPDX-License-Identifier: MIT */
/* The public MCP client API (superstep/mcp.h) over the internal client (mcp.h). */
#include "mcp.h"
#include "toolset.h"

void sst_mcp_opts_init(sst_mcp_opts *o) {
    memset(o, 0, sizeof *o);
    o->timeout_ms = 60000;
    o->connect_timeout_ms = 30000;
    o->close_timeout_ms = 2000;
    o->max_message_bytes = (size_t)16 << 20;
}

void sst_mcp_call_opts_init(sst_mcp_call_opts *o) {
    memset(o, 0, sizeof *o);
}

sst_mcp_client *sst_mcp_connect_stdio(const char *const *argv, const sst_mcp_opts *o,
                                      sst_error *err) {
    SST__ERR_LOCAL(err);
    return sst__mcp_connect_stdio(argv, o, err);
}

sst_mcp_client *sst_mcp_connect_http(const char *url, const sst_mcp_opts *o, sst_error *err) {
    SST__ERR_LOCAL(err);
    return sst__mcp_connect_http(url, o, err);
}

void sst_mcp_close(sst_mcp_client *c) {
    sst__mcp_close(c);
}

const sst_value *sst_mcp_server_info(const sst_mcp_client *c) {
    return sst__mcp_server_info(c);
}

sst_value *sst_mcp_list_tools(sst_mcp_client *c, sst_error *err) {
    SST__ERR_LOCAL(err);
    return sst__mcp_list_tools(c, NULL, err);
}

sst_value *sst_mcp_call_tool(sst_mcp_client *c, const char *name, const sst_value *args,
                             sst_error *err) {
    SST__ERR_LOCAL(err);
    return sst__mcp_call_tool(c, name, args, NULL, err);
}

sst_value *sst_mcp_call_tool_opts(sst_mcp_client *c, const char *name, const sst_value *args,
                                  const sst_mcp_call_opts *o, sst_error *err) {
    SST__ERR_LOCAL(err);
    return sst__mcp_call_tool(c, name, args, o, err);
}

sst_code sst_toolset_add_mcp(sst_toolset *t, sst_mcp_client *c, const char *prefix,
                             sst_error *err) {
    SST__ERR_LOCAL(err);
    if (t == NULL || c == NULL) {
        return sst__error(err, SST_EINVAL, "MCP tools: a tool set and a client are needed");
    }
    return sst__mcp_tools_add(sst__toolset_tools(t), c, prefix, err);
}

size_t sst_mcp_stderr(const sst_mcp_client *c, char *buf, size_t size) {
    return sst__mcp_stderr(c, buf, size);
}
