# Sourced by the client tests that use an npm package: `npm_tool NAME VERSION` installs it once into
# build/tools/NAME (checked by its package.json version) and sets `tool_modules` to its
# node_modules; where npm is absent it exits 77 (ctest: skipped), or 1 under CI=true (a skip there
# is a failure: the test command installs npm). Needs `source` (the source dir).
npm_tool() {
  local name=$1 version=$2
  local tools="$source/build/tools/$name"
  if ! command -v npm >/dev/null 2>&1; then
    echo "SKIPPED: npm is not installed, so $name cannot be; scripts/install-deps --with-test-tools installs it" >&2
    if [ "${CI:-}" = "true" ]; then echo "FAILED: a skip is a failure under CI=true" >&2; exit 1; fi
    exit 77
  fi
  if ! grep -qs "\"version\": \"$version\"" "$tools/node_modules/$name/package.json"; then
    mkdir -p "$tools"
    npm install --prefix "$tools" --no-audit --no-fund --silent "$name@$version" >/dev/null
  fi
  tool_modules="$tools/node_modules"
}

# `npm_bundle NAME PKG@VERSION...` installs several packages together into build/tools/NAME (one
# node_modules, so ES modules import one another) once per list, and sets `tool_modules`.
npm_bundle() {
  local name=$1
  shift
  local tools="$source/build/tools/$name" wanted="$*"
  if ! command -v npm >/dev/null 2>&1; then
    echo "SKIPPED: npm is not installed, so $name cannot be; scripts/install-deps --with-test-tools installs it" >&2
    if [ "${CI:-}" = "true" ]; then echo "FAILED: a skip is a failure under CI=true" >&2; exit 1; fi
    exit 77
  fi
  if [ "$(cat "$tools/.bundle" 2>/dev/null)" != "$wanted" ]; then
    mkdir -p "$tools"
    echo '{"private":true}' >"$tools/package.json"
    npm install --prefix "$tools" --no-audit --no-fund --silent "$@" >/dev/null
    echo "$wanted" >"$tools/.bundle"
  fi
  tool_modules="$tools/node_modules"
}
