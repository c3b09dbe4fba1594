#!/usr/bin/env bash
# Several nodes behind HAProxy on one PostgreSQL and s3rver (issue 42): tests/client/cluster.py.
# s3rver comes from npm (installed once into build/tools/s3rver); haproxy and PostgreSQL from
# scripts/install-deps --with-test-tools.
#   cluster.sh CONTENTLAKE_BINARY SOURCE_DIR
set -euo pipefail
binary=$1 source=$2
. "$source/tests/client/npm-tool.sh"
npm_tool s3rver 3.7.1
exec /usr/bin/python3 "$source/tests/client/cluster.py" "$binary" "$source" "$(dirname "$tool_modules")"
