# Tests of the functional API through the superstep tool (included by tests/CMakeLists.txt).

# examples/lua/essay.lua: an entrypoint with parallel tasks, a human review (interrupt),
# resume in a second process without running the finished tasks again, and kill -9.
add_test(NAME example_essay COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_essay.sh
                                 $<TARGET_FILE:superstep_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(example_essay PROPERTIES LABELS "example" TIMEOUT 180)

# The Lua snippets of docs/functional.md run and print what the page says they print.
add_test(NAME test_doc_functional
         COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/docs/check_snippets.py
                 $<TARGET_FILE:superstep_cli> ${PROJECT_SOURCE_DIR}/docs/functional.md)
set_tests_properties(test_doc_functional PROPERTIES LABELS "integration" TIMEOUT 120)
