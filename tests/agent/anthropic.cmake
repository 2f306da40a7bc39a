# Tests of the agent layer's anthropic part (included by tests/CMakeLists.txt).
