# Tests of the agent layer's mcp part (included by tests/CMakeLists.txt).
