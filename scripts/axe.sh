#!/usr/bin/env bash
# Installs axe-core (npm) into a private folder and prints the path of `axe.min.js`, which the
# browser tests inject into each page state. Reuses the installed copy on later runs.
set -euo pipefail
VERSION="4.10.3"
exec "$(dirname "$0")/npm-install.sh" axe-core "$VERSION" \
    "${AXE_DIR:-$HOME/.cache/hosted-checkout/axe-core-$VERSION}" axe.min.js
