#!/usr/bin/env bash
# Installs jsqr (npm) into a private folder and prints the path of `dist/jsQR.js`, which the
# browser tests inject into a blank page to decode the payment links' QR codes (SVG and PNG)
# back to the link. Reuses the installed copy on later runs.
set -euo pipefail
VERSION="1.4.0"
DIR="${JSQR_DIR:-$HOME/.cache/hosted-checkout/jsqr-$VERSION}"
FILE="$DIR/node_modules/jsqr/dist/jsQR.js"
if [[ ! -f "$FILE" ]]; then
    mkdir -p "$DIR"
    exec 9>"$DIR.lock"
    flock 9
    if [[ ! -f "$FILE" ]]; then
        npm install --silent --no-audit --no-fund --prefix "$DIR" "jsqr@$VERSION" >&2
    fi
fi
echo "$FILE"
