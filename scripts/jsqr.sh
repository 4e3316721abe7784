#!/usr/bin/env bash
# Installs jsqr (npm) into a private folder and prints the path of `dist/jsQR.js`, which the
# browser tests inject into a blank page to decode the payment links' QR codes (SVG and PNG)
# back to the link. Reuses the installed copy on later runs.
set -euo pipefail
VERSION="1.4.0"
exec "$(dirname "$0")/npm-install.sh" jsqr "$VERSION" \
    "${JSQR_DIR:-$HOME/.cache/hosted-checkout/jsqr-$VERSION}" dist/jsQR.js
