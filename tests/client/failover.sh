#!/usr/bin/env bash
# The service through the replicated database's faults (issue 68): tests/client/failover.py.
# s3rver and eventsource come from npm (installed once into build/tools/); haproxy, patroni, etcd and
# PostgreSQL from scripts/install-deps --with-test-tools.
#   failover.sh CONTENTLAKE_BINARY SOURCE_DIR
set -euo pipefail
binary=$1 source=$2
. "$source/tests/client/npm-tool.sh"
npm_tool s3rver 3.7.1
s3rver=$(dirname "$tool_modules")
npm_tool eventsource 2.0.2
exec /usr/bin/python3 "$source/tests/client/failover.py" "$binary" "$source" "$s3rver" "$tool_modules"
