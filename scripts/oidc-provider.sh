#!/usr/bin/env bash
# Installs the npm `oidc-provider` package (a certified OpenID Connect provider) into a private
# folder and prints that folder (the one holding `node_modules`): the identity tests run
# `scripts/oidc-provider.mjs` with it as OIDC_PROVIDER_DIR. Reuses the installed copy on later
# runs; the tests run this script themselves when OIDC_PROVIDER_DIR is not set.
set -euo pipefail
VERSION="9.13.3"
DIR="${OIDC_PROVIDER_DIR:-$HOME/.cache/hosted-checkout/oidc-provider-$VERSION}"
"$(dirname "$0")/npm-install.sh" oidc-provider "$VERSION" "$DIR" package.json >/dev/null
echo "$DIR"
