# Tests of the agent layer's otlp part (included by tests/CMakeLists.txt): the OTLP/HTTP JSON
# trace exporter (src/agent/otlp*.c) against tests/otlp/receiver.mjs, a Node receiver on
# 127.0.0.1 that decodes each export with OpenTelemetry's own protobuf definitions
# (npm ci --prefix tests/otlp). Labelled concurrency too: four threads export at once (TSan).
find_program(SST_NODE_EXECUTABLE NAMES node nodejs)
if(NOT SST_NODE_EXECUTABLE)
  set(SST_NODE_EXECUTABLE node) # the test says so when it cannot start the receiver
endif()
sst_add_test(test_otlp SOURCES unit/test_otlp.c LABELS integration concurrency INTERNAL
             LIBS superstep_agent)
set_property(TEST test_otlp APPEND PROPERTY ENVIRONMENT
             "SST_NODE=${SST_NODE_EXECUTABLE}"
             "SST_OTLP_RECEIVER=${CMAKE_CURRENT_SOURCE_DIR}/otlp/receiver.mjs")
