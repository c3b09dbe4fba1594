#!/usr/bin/env bash
# What travels equals what is enforced (tests/client/rights_travel.py), checked with independent
# tools from npm installed once under build/tools/rights-travel: jsonld and the ODRL context
# (@digitalbazaar/odrl-context, offline), rdf-validate-shacl with n3 and @rdfjs/dataset,
# structured-headers, ajv.
#   rights_travel.sh CONTENTLAKE_BINARY SOURCE_DIR
set -euo pipefail
binary=$1 source=$2
. "$source/tests/client/npm-tool.sh"
npm_bundle rights-travel jsonld@9.0.0 @digitalbazaar/odrl-context@1.0.0 rdf-validate-shacl@0.6.5 n3@2.13.12 \
  @rdfjs/dataset@2.0.3 structured-headers@2.1.0 ajv@8.20.0
exec /usr/bin/python3 "$source/tests/client/rights_travel.py" "$binary" "$source" "$tool_modules"
