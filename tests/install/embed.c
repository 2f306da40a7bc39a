/* SPDX-License-Identifier: MIT */
/*
 * Built by test_install.sh against an installed superstep: calls into each
 * library (the core and its SQLite saver, the agent layer, the Lua layer)
 * prove the three are installed and link with their dependencies.
 */
#include <stdio.h>

#include <superstep/agent.h>
#include <superstep/lua.h>
#include <superstep/superstep.h>

int main(void) {
    sst_error err;
    sst_checkpointer *cp = sst_sqlite_saver_open(":memory:", NULL, &err);
    if (cp == NULL) {
        fprintf(stderr, "sst_sqlite_saver_open: %s\n", err.msg);
        return 1;
    }
    sst_checkpointer_free(cp);
    sst_toolset *tools = sst_toolset_new(&err);
    if (tools == NULL) {
        fprintf(stderr, "sst_toolset_new: %s\n", err.msg);
        return 1;
    }
    sst_toolset_free(tools);
    sst_lua_script *s = sst_lua_script_load("/nonexistent/superstep-install-test.lua", &err);
    if (s != NULL || err.code != SST_EIO) {
        fprintf(stderr, "sst_lua_script_load of a missing file: expected SST_EIO\n");
        sst_lua_script_free(s);
        return 1;
    }
    printf("embed: superstep %s, agent and lua linked (%s)\n", sst_version(),
           sst_code_name(err.code));
    return 0;
}
