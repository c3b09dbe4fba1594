#!/usr/bin/env bash
# Several nodes behind HAProxy on PostgreSQL and s3rver: tests/client/cluster.py (issue 42), or the
# script named third (tests/client/failover.py: the replicated database's faults, issue 68).
# s3rver and eventsource come from npm (installed once into build/tools/); haproxy, PostgreSQL,
# Patroni and etcd from scripts/install-deps --with-test-tools.
#   cluster.sh CONTENTLAKE_BINARY SOURCE_DIR [SCRIPT]
set -euo pipefail
binary=$1 source=$2 script=${3:-cluster.py}
. "$source/tests/client/npm-tool.sh"
npm_tool s3rver 3.7.1
s3rver=$(dirname "$tool_modules")
npm_tool eventsource 2.0.2
exec /usr/bin/python3 "$source/tests/client/$script" "$binary" "$source" "$s3rver" "$tool_modules"
