/* SPDX-License-Identifier: MIT */
/* The `superstep agent` command (cli/cmd_agent.c). */
#ifndef SUPERSTEP_CLI_AGENT_H
#define SUPERSTEP_CLI_AGENT_H

/* Runs `superstep agent ...` (argv[1] is "agent"); returns the exit code. */
int sst_cli_agent(int argc, char **argv);

#endif
