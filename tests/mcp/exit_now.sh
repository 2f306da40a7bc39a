#!/bin/sh
# An MCP server that cannot start: it says why on stderr and exits with status 3.
echo "fake server: cannot read /nonexistent/config.json" >&2
exit 3
