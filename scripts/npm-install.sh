#!/usr/bin/env bash
# Installs the npm package PACKAGE@VERSION into the private folder DIR (under a lock, so that
# test processes started together install it once) unless DIR already holds FILE, a path
# relative to the package's folder; prints the path of FILE. Used by the scripts that bring
# the tests' npm tools (axe.sh, jsqr.sh, oidc-provider.sh).
#
#   ./scripts/npm-install.sh PACKAGE VERSION DIR FILE
set -euo pipefail
package="$1" version="$2" dir="$3"
file="$dir/node_modules/$package/$4"
if [[ ! -f "$file" ]]; then
    mkdir -p "$dir"
    exec 9>"$dir.lock"
    flock 9
    if [[ ! -f "$file" ]]; then
        npm install --silent --no-audit --no-fund --prefix "$dir" "$package@$version" >&2
    fi
fi
echo "$file"
