#!/usr/bin/env bash
# Checks that docs/architecture.md and docs/decisions/*.md name only things that exist, and
# that docs/architecture.md stays under 30,000 characters (bytes, as `wc -c` counts them).
#
# Every span in backticks that looks like a repository path or a Rust path is checked:
#
# - a path (it has a `/`, or is a file name with a known extension): it must exist from the
#   repository root or from the document's folder, or, in a section whose heading names
#   `crates/<crate>`, under that crate (`crates/<crate>/src/<path>` or `crates/<crate>/<path>`),
#   or under `crates/`, or under exactly one crate's `src/` or folder (a name two crates have
#   is ambiguous and fails). A trailing `/` means a directory. Routes (`/pay/...`), URLs and
#   media types are not paths.
# - a migration name (`2026-11-24-000002_events`): `migrations/<name>` must exist.
# - a Rust path `a::b::c`:
#   - `checkout_x::m::item`: the modules must be files of `crates/checkout-x/src` (`m.rs` or
#     `m/mod.rs`); what follows them is one item, or a type and its item (`Type::item`), and
#     each must occur as a word in the last module's file (or, for `lib.rs` and `mod.rs`, in
#     that module's folder);
#   - `m::n::item` (lower case first): the same, in the section's crate or else in exactly
#     one crate where it resolves;
#   - `Type::item`: `Type` must be declared (struct, enum, trait, type) in some crate's
#     `src/`, and `item` must occur as a word in that crate's `src/`;
#   - a path whose first segment is an external crate (a dependency name) is not checked.
#
# Relative Markdown links (`[text](target)`) are checked as paths from the document's folder.
#
# It prints every name it checked with the file it found, and fails listing every missing
# one; it also fails when it finds nothing to check in docs/architecture.md (a broken
# extraction must not pass).
# Needs only bash, grep, sed and coreutils.
set -euo pipefail
cd "$(dirname "$0")/.."

readonly MAX_CHARS=30000
readonly EXTENSIONS='rs|md|sh|py|sql|html|js|mjs|css|toml|json|svg|lua|yml|yaml|in|txt|lock'

docs=(docs/architecture.md)
for f in docs/decisions/*.md; do
  [[ -e "$f" ]] && docs+=("$f")
done

crates=()
for d in crates/*/; do
  crates+=("$(basename "$d")")
done

# External crates: every name in a dependencies table of a manifest, as Rust writes it.
externals=" std core alloc "
for manifest in Cargo.toml crates/*/Cargo.toml; do
  section=""
  while IFS= read -r text || [[ -n "$text" ]]; do
    if [[ "$text" =~ ^\[(.*)\] ]]; then
      section=${BASH_REMATCH[1]}
    elif [[ "$section" == *dependencies* && "$text" =~ ^([A-Za-z0-9_-]+)[[:space:]]*= ]]; then
      externals+="${BASH_REMATCH[1]//-/_} "
    fi
  done <"$manifest"
done

failures=()
checked=0
architecture_names=0
verbose=${VERBOSE:-0}

ok() { # kind token where
  checked=$((checked + 1))
  if [[ "$verbose" == 1 ]]; then
    printf '  ok %-6s %s -> %s\n' "$1" "$2" "$3"
  fi
}

fail() { # file line token why
  checked=$((checked + 1))
  failures+=("$1:$2: \`$3\`: $4")
}

exists() { # path (a trailing / means a directory)
  if [[ "$1" == */ ]]; then [[ -d "$1" ]]; else [[ -e "$1" ]]; fi
}

# resolve_path PATH CONTEXT DOC_DIR: prints where PATH is; returns 1 (missing) or 2
# (ambiguous).
resolve_path() {
  local path=$1 ctx=$2 dir=$3 found=() c
  if exists "$path"; then echo "$path"; return 0; fi
  if exists "$dir/$path"; then echo "$dir/$path"; return 0; fi
  if [[ -n "$ctx" ]]; then
    for c in "crates/$ctx/src/$path" "crates/$ctx/$path"; do
      if exists "$c"; then echo "$c"; return 0; fi
    done
  fi
  if exists "crates/$path"; then echo "crates/$path"; return 0; fi
  for c in "${crates[@]}"; do
    if exists "crates/$c/src/$path"; then
      found+=("crates/$c/src/$path")
    elif exists "crates/$c/$path"; then
      found+=("crates/$c/$path")
    fi
  done
  case ${#found[@]} in
    1) echo "${found[0]}"; return 0 ;;
    0) return 1 ;;
    *) echo "${found[*]}"; return 2 ;;
  esac
}

# module_file CRATE_DIR SEGMENTS...: walks the module segments from src/lib.rs (or
# src/main.rs); prints "<file> <number of segments consumed>".
module_file() {
  local dir="$1/src" file used=0 seg
  shift
  if [[ -f "$dir/lib.rs" ]]; then file="$dir/lib.rs"; else file="$dir/main.rs"; fi
  for seg in "$@"; do
    if [[ -f "$dir/$seg.rs" ]]; then
      file="$dir/$seg.rs"
    elif [[ -f "$dir/$seg/mod.rs" ]]; then
      file="$dir/$seg/mod.rs"
    else
      break
    fi
    dir="$dir/$seg"
    used=$((used + 1))
  done
  echo "$file $used"
}

# items_in FILE ITEMS...: every item occurs as a word in FILE (or, for lib.rs and mod.rs, in
# the files of its folder).
items_in() {
  local file=$1 scope item
  shift
  scope=$file
  case "$file" in */lib.rs | */main.rs | */mod.rs) scope=$(dirname "$file") ;; esac
  for item in "$@"; do
    grep -rqw --include='*.rs' -- "$item" "$scope" || return 1
  done
}

# resolve_module CRATE SEGMENTS...: the module path within CRATE; prints the file.
resolve_module() {
  local crate=$1 file used
  shift
  read -r file used < <(module_file "crates/$crate" "$@")
  local segs=("$@")
  local items=("${segs[@]:used}")
  # Of several items left, the first must be a type (`Type::item`): a lower-case one would be
  # a module, and it is not a file of this crate.
  if [[ ${#items[@]} -gt 1 && ! "${items[0]}" =~ ^[A-Z] ]]; then
    return 1
  fi
  if [[ ${#items[@]} -gt 0 ]]; then
    items_in "$file" "${items[@]}" || return 1
  fi
  echo "$file"
}

check_rust() { # file line token context
  local file=$1 line=$2 token=$3 ctx=$4 path first crate where c found=()
  path=${token%!}
  path=$(sed 's/([^()]*)$//' <<<"$path")
  IFS=':' read -r -a raw <<<"${path//::/:}"
  local segs=("${raw[@]}")
  first=${segs[0]}
  if [[ "$first" == checkout_* ]]; then
    crate=${first//_/-}
    if [[ ! -d "crates/$crate" ]]; then
      fail "$file" "$line" "$token" "no crate crates/$crate"
      return
    fi
    if where=$(resolve_module "$crate" "${segs[@]:1}"); then
      ok rust "$token" "$where"
    else
      fail "$file" "$line" "$token" "not found in crates/$crate/src"
    fi
    return
  fi
  if [[ "$externals" == *" $first "* ]]; then
    return # another crate's path: not ours to check
  fi
  if [[ "$first" =~ ^[A-Z] ]]; then
    local decl pattern
    pattern="^\s*(pub(\([a-z]+\))? )?(struct|enum|trait|type|union) $first\b"
    decl=$(grep -rlE --include='*.rs' "$pattern" crates/*/src 2>/dev/null || true)
    if [[ -z "$decl" ]]; then
      fail "$file" "$line" "$token" "no type $first is declared"
      return
    fi
    local crates_of item ok_in=""
    crates_of=$(sed 's#^\(crates/[^/]*/src\)/.*#\1#' <<<"$decl" | sort -u)
    for c in $crates_of; do
      local all=1
      for item in "${segs[@]:1}"; do
        grep -rqw --include='*.rs' -- "$item" "$c" || all=0
      done
      if [[ $all == 1 ]]; then ok_in=$c; break; fi
    done
    if [[ -n "$ok_in" ]]; then
      ok rust "$token" "$ok_in"
    else
      fail "$file" "$line" "$token" "$first is declared, but not ${segs[*]:1} beside it"
    fi
    return
  fi
  # A module path without its crate: the section's crate, else exactly one crate.
  if [[ -n "$ctx" ]] && where=$(resolve_module "$ctx" "${segs[@]}"); then
    ok rust "$token" "$where"
    return
  fi
  for c in "${crates[@]}"; do
    if where=$(resolve_module "$c" "${segs[@]}"); then
      found+=("$where")
    fi
  done
  case ${#found[@]} in
    1) ok rust "$token" "${found[0]}" ;;
    0) fail "$file" "$line" "$token" "no crate has this module path" ;;
    *) fail "$file" "$line" "$token" "ambiguous: ${found[*]}" ;;
  esac
}

check_token() { # file line token context
  local file=$1 line=$2 token=$3 ctx=$4 where rc
  # Rust paths.
  if [[ "$token" =~ ^[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)+(!|\([^()]*\))?$ ]]; then
    check_rust "$file" "$line" "$token" "$ctx"
    return
  fi
  # Migration names.
  if [[ "$token" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}-[0-9]{6}_[a-z0-9_]+$ ]]; then
    if [[ -d "migrations/$token" ]]; then
      ok migr "$token" "migrations/$token"
    else
      fail "$file" "$line" "$token" "no migrations/$token"
    fi
    return
  fi
  # Not paths: routes, URLs, media types, anything with spaces or placeholders.
  case "$token" in
    /* | *://* | *' '* | *'<'* | *'>'* | *'*'* | *'{'* | *'='* | *'+'* | *','* | *"'"*) return ;;
    application/* | text/* | image/* | multipart/*) return ;;
  esac
  [[ "$token" =~ ^[A-Za-z0-9_.][A-Za-z0-9_./-]*$ ]] || return 0
  if [[ "$token" != */* && ! "$token" =~ \.($EXTENSIONS)$ ]]; then
    return # a plain word
  fi
  rc=0
  where=$(resolve_path "$token" "$ctx" "$(dirname "$file")") || rc=$?
  case $rc in
    0) ok path "$token" "$where" ;;
    1) fail "$file" "$line" "$token" "no such file or directory" ;;
    2) fail "$file" "$line" "$token" "ambiguous, give its crate: $where" ;;
  esac
}

for doc in "${docs[@]}"; do
  before=$checked
  ctx=""
  fence=0
  n=0
  while IFS= read -r text || [[ -n "$text" ]]; do
    n=$((n + 1))
    if [[ "$text" =~ ^\`\`\` ]]; then
      fence=$((1 - fence))
      continue
    fi
    [[ $fence == 1 ]] && continue
    if [[ "$text" =~ ^# ]]; then
      ctx=""
      if [[ "$text" =~ crates/(checkout-[a-z-]+) ]]; then
        ctx=${BASH_REMATCH[1]}
      fi
    fi
    # Every `span` of the line (inline code never spans lines in these documents).
    rest=$text
    while [[ "$rest" =~ \`([^\`]+)\` ]]; do
      token=${BASH_REMATCH[1]}
      rest=${rest#*\`"$token"\`}
      check_token "$doc" "$n" "$token" "$ctx"
    done
    # Every relative [link](target) of the line.
    rest=$text
    while [[ "$rest" =~ \]\(([^()[:space:]]+)\) ]]; do
      target=${BASH_REMATCH[1]}
      rest=${rest#*\]\("$target"\)}
      target=${target%%#*}
      case "$target" in '' | *://* | mailto:*) continue ;; esac
      if [[ -e "$(dirname "$doc")/$target" ]]; then
        ok link "$target" "$(dirname "$doc")/$target"
      else
        fail "$doc" "$n" "$target" "no such file or directory (a link)"
      fi
    done
  done <"$doc"
  echo "check-doc-paths: $doc: $((checked - before)) names checked"
  if [[ "$doc" == docs/architecture.md ]]; then
    architecture_names=$((checked - before))
  fi
done

chars=$(wc -c <docs/architecture.md)
echo "check-doc-paths: docs/architecture.md: $chars characters (limit: under $MAX_CHARS)"

status=0
if [[ $architecture_names -eq 0 ]]; then
  echo "check-doc-paths: no name found in docs/architecture.md: the extraction is broken" >&2
  status=1
fi
if [[ ${#failures[@]} -gt 0 ]]; then
  echo "check-doc-paths: ${#failures[@]} of $checked names do not exist:" >&2
  printf '  %s\n' "${failures[@]}" >&2
  status=1
fi
if [[ $chars -ge $MAX_CHARS ]]; then
  echo "check-doc-paths: docs/architecture.md has $chars characters; keep it under $MAX_CHARS" >&2
  status=1
fi
if [[ $status == 0 ]]; then
  echo "check-doc-paths: all $checked names exist"
fi
exit $status
