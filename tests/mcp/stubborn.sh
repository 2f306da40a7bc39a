#!/bin/sh
# An MCP server that ignores the end of its stdin and SIGTERM: only SIGKILL ends it
# (and its child sleep, which shares its process group).
trap '' TERM
echo "stubborn: started" >&2
while :; do sleep 1; done
