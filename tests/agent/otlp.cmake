# Tests of the agent layer's otlp part (included by tests/CMakeLists.txt).
