/* SPDX-License-Identifier: MIT */
/*
 * LangGraph-parity features of the graph layer (issue 14), through the C API.
 */
#include <stdio.h>
#include <string.h>

#include "superstep/superstep.h"
#include "test_util.h"

static void test_placeholder(void **state) {
    (void)state;
    sst_graph *g = sst_graph_new(NULL);
    assert_non_null(g);
    sst_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_placeholder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
