# Tests of the agent layer's schema part (included by tests/CMakeLists.txt).
