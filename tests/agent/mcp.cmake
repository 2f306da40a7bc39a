# Tests of the agent layer's mcp part (included by tests/CMakeLists.txt): the MCP client
# (src/agent/mcp_*.c) against the official reference server @modelcontextprotocol/server-everything,
# pinned in tests/mcp/package-lock.json (npm ci --prefix tests/mcp), over stdio and over
# Streamable HTTP (tests/mcp/http_server.mjs: 127.0.0.1, a port the system picks), plus the small
# fake servers of tests/mcp for what the reference server cannot show. Labelled concurrency too:
# four threads share one client (TSan).
find_program(SST_NODE_EXECUTABLE NAMES node nodejs)
if(NOT SST_NODE_EXECUTABLE)
  set(SST_NODE_EXECUTABLE node) # the test says so when it cannot start a server
endif()
sst_add_test(test_mcp SOURCES unit/test_mcp.c LABELS integration concurrency INTERNAL
             LIBS superstep_agent)
set_property(TEST test_mcp APPEND PROPERTY ENVIRONMENT
             "SST_NODE=${SST_NODE_EXECUTABLE}"
             "SST_MCP_DIR=${CMAKE_CURRENT_SOURCE_DIR}/mcp")

# The Lua layer's MCP cases (tests/lua/test_agent.lua) use the same server.
set_property(TEST test_lua APPEND PROPERTY ENVIRONMENT "SST_NODE=${SST_NODE_EXECUTABLE}"
             "SST_MCP_DIR=${CMAKE_CURRENT_SOURCE_DIR}/mcp")
