#!/usr/bin/env bash
# Coverage-guided fuzzing (cargo-fuzz, libFuzzer) of the request parsers and the amount,
# currency and card-number validators; every target asserts properties (fuzz/src/lib.rs).
#
#   ./scripts/fuzz.sh                          every target, 60 s each
#   FUZZ_SECONDS=600 ./scripts/fuzz.sh amount  one target, 10 minutes
#
# Targets: start_payment_body payment_link_body amount currency card_number.
# Stable Rust is enough: RUSTC_BOOTSTRAP=1 lets it take cargo-fuzz's nightly flags.
# FUZZ_SANITIZER (default none: the service's crates forbid unsafe code; `address` is about
# twice as slow), FUZZ_TARGET_DIR (default $HOME/.cache/hosted-checkout/target-fuzz).
# The corpus grows in fuzz/corpus/<target> from the committed seeds in fuzz/seeds/<target>;
# a crash is saved in fuzz/artifacts/<target>/ and makes the script exit 1.
# Replay one: `RUSTC_BOOTSTRAP=1 cargo fuzz run <target> fuzz/artifacts/<target>/crash-...`.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
seconds="${FUZZ_SECONDS:-60}"
sanitizer="${FUZZ_SANITIZER:-none}"
target_dir="${FUZZ_TARGET_DIR:-$HOME/.cache/hosted-checkout/target-fuzz}"
export RUSTC_BOOTSTRAP=1
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
    targets=(start_payment_body payment_link_body amount currency card_number)
fi

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "== installing cargo-fuzz" >&2
    CARGO_TARGET_DIR="$HOME/.cache/hosted-checkout/target-cargo-fuzz-install" \
        nice -n 10 cargo install cargo-fuzz --locked >&2
fi

# Release with debug assertions (overflow checks), as `cargo fuzz run` builds by default.
flags=(--debug-assertions --sanitizer "$sanitizer" --target-dir "$target_dir")
echo "== building ${#targets[@]} targets (sanitizer: $sanitizer)" >&2
nice -n 10 cargo fuzz build "${flags[@]}" >&2

mkdir -p fuzz/artifacts/logs
printf '%-20s %12s %10s %8s  %s\n' target executions exec/s seconds result
status=0
for t in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
    args=(-max_total_time="$seconds" -timeout=10 -print_final_stats=1)
    if [[ $t == *_body ]]; then
        args+=(-dict="$root/fuzz/json.dict")
    fi
    log="fuzz/artifacts/logs/$t.log"
    start=$(date +%s)
    set +e
    nice -n 10 cargo fuzz run "${flags[@]}" "$t" "fuzz/corpus/$t" "fuzz/seeds/$t" -- "${args[@]}" \
        >"$log" 2>&1
    rc=$?
    set -e
    elapsed=$(($(date +%s) - start))
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    if [[ -z $runs ]]; then # no final stats after a crash: the last status line
        runs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
    fi
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    if [[ $rc -eq 0 ]]; then
        result=ok
    else
        status=1
        artifact=$(grep -oE 'fuzz/artifacts/[^ ]+/(crash|timeout|oom|leak)-[0-9a-f]+' "$log" | tail -1)
        result="FAILED (exit $rc) ${artifact:-see $log}"
    fi
    printf '%-20s %12s %10s %8s  %s\n' "$t" "${runs:-?}" "${rate:-?}" "$elapsed" "$result"
done
exit "$status"
