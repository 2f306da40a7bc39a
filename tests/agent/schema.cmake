# Tests of the agent layer's schema part (included by tests/CMakeLists.txt).
sst_add_test(test_json_schema SOURCES unit/test_json_schema.c LABELS unit INTERNAL LIBS superstep_agent)
