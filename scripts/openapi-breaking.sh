#!/usr/bin/env bash
# Compares the served OpenAPI document with the last released one (docs/openapi-released.json)
# using Optic's breaking-change rules (npm @useoptic/optic, `optic diff --check`), and fails on
# a change it reports as breaking unless CHANGELOG.md's [Unreleased] section records it: an
# entry (a list item) marked **BREAKING** that names the operation as `METHOD /path` and what
# changed (the field Optic names) in backticks.
# docs/compatibility.md says what is breaking and how such a change is introduced.
#
#   ./scripts/openapi-breaking.sh              starts a sandbox (scripts/sandbox-server.sh),
#                                              reads its /openapi.json, checks it, then shows
#                                              that the check fails on a deliberately removed
#                                              answer field (the self-test)
#   ./scripts/openapi-breaking.sh served.json  checks that document instead (no self-test)
#
# Optic is installed once into $HOME/.cache/hosted-checkout/openapi-diff-node, pinned, with
# ajv pinned too (its Spectral dependency otherwise resolves an ajv that ajv-errors cannot
# compile with).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/hosted-checkout/target}"
released="docs/openapi-released.json"

optic_bin() {
    local dir="${OPENAPI_DIFF_NODE_DIR:-$HOME/.cache/hosted-checkout/openapi-diff-node}"
    local packages='@useoptic/optic@1.0.9 ajv@8.17.1'
    mkdir -p "$dir"
    exec 8>"$dir.lock"
    flock 8
    if [[ "$(cat "$dir/.installed" 2>/dev/null)" != "$packages" ]]; then
        echo "installing $packages into $dir" >&2
        cat >"$dir/package.json" <<'JSON'
{"name": "hc-openapi-diff", "private": true, "overrides": {"ajv": "8.17.1"}}
JSON
        rm -rf "$dir/node_modules" "$dir/package-lock.json"
        (cd "$dir" && npm install --no-audit --no-fund --silent --save-exact $packages >&2)
        echo "$packages" >"$dir/.installed"
    fi
    flock -u 8
    echo "$dir/node_modules/.bin/optic"
}

# check SERVED: 0 when Optic reports nothing breaking, or only operations the changelog
# records as breaking; 1 otherwise (each unrecorded operation is printed).
check() {
    local served="$1" out status=0
    out="$(OPTIC_TELEMETRY_LEVEL=off "$optic" diff "$released" "$served" --check 2>&1)" || status=$?
    if [[ $status -eq 0 ]]; then
        echo "no breaking change against $released"
        return 0
    fi
    echo "$out" | grep -E '^x |\[.*\].*breaking|This is a breaking change' || echo "$out"
    python3 - "$out" <<'PY'
import re, sys
report = sys.argv[1]
# Optic marks a failing operation "x METHOD /path:" at the start of a line, then each of its
# breaking findings on an indented "x [rule] ..." line naming what changed.
findings, op = {}, None
for line in report.splitlines():
    m = re.match(r"^x ((?:GET|PUT|POST|PATCH|DELETE|HEAD|OPTIONS) \S+):", line)
    if m:
        op = m.group(1)
        findings.setdefault(op, set())
    elif op and re.match(r"^\s+x \[", line):
        # What changed: the names in quotes, else the last segment of a schema path
        # ("oneOf/1/refundId: required property was removed").
        names = re.findall(r"'([^']+)'", line) or re.findall(r"/([A-Za-z_][\w-]*): ", line)
        findings[op].update(names)
if not findings:
    print("the detector failed without naming an operation (a document-level break, or it did not run)", file=sys.stderr)
    sys.exit(1)
text = open("CHANGELOG.md", encoding="utf-8").read()
unreleased = re.search(r"^## \[Unreleased\]\s*$(.*?)(?=^## \[|\Z)", text, re.M | re.S)
section = unreleased.group(1) if unreleased else ""
# Entries are list items: a line starting with "- " and the indented lines that follow it.
entries = [" ".join(e.split()) for e in re.split(r"^- ", section, flags=re.M)[1:]]
breaking = [e for e in entries if "**BREAKING**" in e]
missing = []
for op, names in sorted(findings.items()):
    # Recorded: one BREAKING entry names the operation and, in backticks, what changed.
    ok = any(f"`{op}`" in e and all(f"`{n}`" in e for n in names) for e in breaking)
    what = ", ".join(sorted(names)) or "?"
    print(f"  {op} ({what}): {'recorded in CHANGELOG.md [Unreleased] as BREAKING' if ok else 'NOT recorded'}")
    if not ok:
        missing.append(op)
if missing:
    print("breaking changes not recorded in CHANGELOG.md's [Unreleased] section (add an entry "
          "marked **BREAKING** naming the operation as `METHOD /path` and what changed in "
          "backticks): " + ", ".join(missing), file=sys.stderr)
    sys.exit(1)
PY
}

optic="$(optic_bin)"
if [[ $# -ge 1 ]]; then
    check "$1"
    exit
fi

source scripts/sandbox-server.sh
start_sandbox
curl -sf "$base/openapi.json" -o "$work/served.json"
echo "== the served document against $released"
check "$work/served.json"

echo "== self-test: the check fails on a deliberately removed answer field"
python3 - "$work/served.json" "$work/removed.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
schema = doc["components"]["schemas"]["PaymentStatusResponse"]
field = schema["required"][0]
del schema["properties"][field]
schema["required"].remove(field)
json.dump(doc, open(sys.argv[2], "w"))
print(f"removed PaymentStatusResponse.{field}")
PY
if check "$work/removed.json"; then
    echo "the check passed a removed field: it detects nothing" >&2
    exit 1
fi
echo "== the breaking-change check passes the served document and fails on a removed field"
