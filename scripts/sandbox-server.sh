# Sourced by scripts that need a live sandbox (fuzz-api.sh, generated-clients.sh): builds the
# server, starts `checkout serve` on a free port with a private data folder and a random
# sandbox client secret, and stops it and removes the folder on exit.
#
# After `start_sandbox [VAR=value ...]` (extra settings for the server): `$work` is the
# private folder, `$secret` the sandbox client secret, `$base` the server's base URL.

start_sandbox() {
    cargo build --quiet -p checkout-server --bin checkout
    work="$(mktemp -d /tmp/hc-sandbox.XXXXXX)"
    secret="sandbox-$RANDOM$RANDOM"
    server_pid=""
    trap stop_sandbox EXIT
    chmod 755 "$work"
    # No balancer to wait for: no grace period after SIGTERM (unless a caller sets one).
    env CHECKOUT__SERVER__PORT=0 CHECKOUT__DATA_DIR="$work/data" CHECKOUT__SERVER__SHUTDOWN_GRACE_MS=0 \
        CHECKOUT__SANDBOX__CLIENT_SECRET="$secret" RUST_LOG=warn "$@" \
        "$CARGO_TARGET_DIR/debug/checkout" serve >"$work/out.log" 2>"$work/err.log" &
    server_pid=$!
    for _ in $(seq 1 150); do
        if grep -q "listening on http://" "$work/out.log" 2>/dev/null; then break; fi
        sleep 0.2
    done
    base=$(grep -o "listening on http://[0-9.:]*" "$work/out.log" | sed 's/listening on //')
    if [[ -z "$base" ]]; then
        echo "the server did not start:" >&2
        cat "$work/err.log" >&2
        exit 1
    fi
}

stop_sandbox() {
    if [[ -n "$server_pid" ]]; then
        kill -TERM "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
