#!/usr/bin/env bash
# The MCP endpoint with the official TypeScript SDK (npm @modelcontextprotocol/sdk) and the MCP
# Inspector's CLI mode (npm @modelcontextprotocol/inspector-cli), the MCP conformance suite (npm
# @modelcontextprotocol/conformance; 0.1.13 is its newest release that runs on Node.js 20: later ones
# import fs.globSync, Node 22), each installed once under build/tools/, and raw protocol checks
# (tests/client/mcp_api.py).
#   mcp.sh CONTENTLAKE_BINARY SOURCE_DIR
set -euo pipefail
binary=$1 source=$2
. "$source/tests/client/npm-tool.sh"
npm_tool @modelcontextprotocol/inspector-cli 0.16.8
inspector_modules=$tool_modules
npm_tool @modelcontextprotocol/conformance 0.1.13
conformance_modules=$tool_modules
npm_tool @modelcontextprotocol/sdk 1.24.3
exec /usr/bin/python3 "$source/tests/client/mcp_api.py" "$binary" "$source" "$tool_modules" "$inspector_modules" "$conformance_modules"
