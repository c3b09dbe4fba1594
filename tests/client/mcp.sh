#!/usr/bin/env bash
# The MCP endpoint with the official TypeScript SDK (npm @modelcontextprotocol/sdk, installed once
# into build/tools/@modelcontextprotocol/sdk) and raw protocol checks (tests/client/mcp_api.py).
#   mcp.sh CONTENTLAKE_BINARY SOURCE_DIR
set -euo pipefail
binary=$1 source=$2
. "$source/tests/client/npm-tool.sh"
npm_tool @modelcontextprotocol/sdk 1.24.3
exec /usr/bin/python3 "$source/tests/client/mcp_api.py" "$binary" "$source" "$tool_modules"
