#!/usr/bin/env bash
# Runs a client suite through HAProxy against two nodes on one PostgreSQL and s3rver (issue 42):
# its `Service` becomes harness.ClusterService. The suite's own command follows.
#   through_cluster.sh SOURCE_DIR COMMAND [ARGS...]
set -euo pipefail
source=$1
shift
. "$source/tests/client/npm-tool.sh"
npm_tool s3rver 3.7.1
export CL_TEST_CLUSTER
CL_TEST_CLUSTER=$(dirname "$tool_modules")
exec "$@"
