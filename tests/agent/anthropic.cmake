# Tests of the agent layer's anthropic part (included by tests/CMakeLists.txt).

# Anthropic's Messages API as a provider, and usage accounting (src/agent/anthropic*.c,
# usage.c): conversions without a server, and the client against replayed recordings
# (tests/agent/replay_server.py serving tests/data/llm) on 127.0.0.1.
sst_add_test(test_anthropic SOURCES unit/test_anthropic.c unit/replay_client.c LABELS integration INTERNAL
             LIBS superstep_agent)
set_property(TEST test_anthropic APPEND PROPERTY ENVIRONMENT
             "SST_REPLAY_SERVER=${CMAKE_CURRENT_SOURCE_DIR}/agent/replay_server.py")
