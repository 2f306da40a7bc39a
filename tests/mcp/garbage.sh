#!/bin/sh
# An MCP server that is not one: it answers everything with lines that are not
# JSON-RPC, and stays alive until its stdin ends.
while IFS= read -r line; do
  echo "Welcome to my shell!"
  echo '{"jsonrpc": "2.0", "broken'
done
