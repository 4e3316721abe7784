#!/usr/bin/env bash
# A database failover under load, measured: three PostgreSQL 15 nodes managed by Patroni
# (deploy/ha/patroni.yml.in) with one etcd, on loopback, synchronous replication; the checkout
# sandbox on a multi-host URL (target_session_attrs=read-write) under steady start-payments and
# card payments (bench/ha_load.py); the primary's machine killed with SIGKILL (Patroni and
# PostgreSQL at once) once the load runs. Prints, per run: acknowledged sessions lost (must be
# 0), acknowledged payments whose state went backwards (must be 0), how long requests failed,
# and the time to the first success after the kill.
#
#   ./scripts/ha-failover.sh            # 5 runs
#   HA_RUNS=1 ./scripts/ha-failover.sh  # one run (about a minute)
#
# Installs patroni and etcd-server from Debian when missing. Settings: HA_RUNS (5),
# HA_LOAD_SECONDS (35: load length; the kill comes HA_KILL_AFTER = 10 s into it),
# HA_WORKERS (4), CHECKOUT_BIN (a prebuilt binary), HA_BASE_PORT (first port, 25400).
# Exit status: 0 when every run lost nothing and moved no payment backwards.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
RUNS="${HA_RUNS:-5}"
LOAD_SECONDS="${HA_LOAD_SECONDS:-35}"
KILL_AFTER="${HA_KILL_AFTER:-10}"
WORKERS="${HA_WORKERS:-4}"
BASE="${HA_BASE_PORT:-25400}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/hosted-checkout/target}"
log() { echo "== $*" >&2; }

packages=()
command -v patroni >/dev/null 2>&1 || packages+=(patroni)
command -v etcd >/dev/null 2>&1 || packages+=(etcd-server)
compgen -G '/usr/lib/postgresql/15/bin/initdb' >/dev/null || packages+=(postgresql-15)
if ((${#packages[@]})); then
    log "installing ${packages[*]}"
    sudo_cmd=()
    [[ "$(id -u)" != 0 ]] && sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${packages[@]}" >/dev/null
fi
PG_BIN=/usr/lib/postgresql/15/bin
as_pg=()
if [[ "$(id -u)" == 0 ]]; then as_pg=(runuser -u postgres --); fi

if [[ -z "${CHECKOUT_BIN:-}" ]]; then
    log "building checkout"
    cargo build -q -p checkout-server --bin checkout
    CHECKOUT_BIN="$CARGO_TARGET_DIR/debug/checkout"
fi

WORK=""
pids=()
patroni_pids=()
cleanup() {
    # Only the processes this script started, by id.
    for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
    if [[ -n "$WORK" ]]; then
        for pidfile in "$WORK"/node*/data/postmaster.pid; do
            [[ -f "$pidfile" ]] && kill -9 "$(head -1 "$pidfile")" 2>/dev/null || true
        done
        sleep 0.5
        # The last run's logs stay for a look.
        rm -rf /tmp/hc-ha-last
        mkdir -p /tmp/hc-ha-last
        cp "$WORK"/*.log "$WORK"/*.out /tmp/hc-ha-last/ 2>/dev/null || true
        rm -rf "$WORK"
    fi
    pids=()
}
trap cleanup EXIT

# Waits until `$1` (a command) succeeds, at most $2 seconds.
wait_for() {
    local deadline=$((SECONDS + $2))
    until eval "$1" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || return 1
        sleep 0.3
    done
}

leader_port() {
    # The PostgreSQL port of the node that is the leader, from Patroni's REST API.
    for n in 1 2 3; do
        if curl -sf "http://127.0.0.1:$((BASE + 10 + n))/primary" >/dev/null 2>&1; then
            echo $((BASE + n)); return 0
        fi
    done
    return 1
}

one_run() {
    local run=$1
    WORK="$(mktemp -d /tmp/hc-ha-XXXXXX)"
    chmod 0755 "$WORK"
    local etcd_client=$((BASE + 20)) etcd_peer=$((BASE + 21))
    etcd --name ha --data-dir "$WORK/etcd" \
        --listen-client-urls "http://127.0.0.1:$etcd_client" --advertise-client-urls "http://127.0.0.1:$etcd_client" \
        --listen-peer-urls "http://127.0.0.1:$etcd_peer" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
        --initial-cluster "ha=http://127.0.0.1:$etcd_peer" >"$WORK/etcd.log" 2>&1 &
    pids+=($!)
    wait_for "curl -sf http://127.0.0.1:$etcd_client/health" 20 || { cat "$WORK/etcd.log" >&2; return 1; }

    local urls=()
    for n in 1 2 3; do
        mkdir -p "$WORK/node$n"
        chown postgres: "$WORK/node$n" 2>/dev/null || true
        chmod 0700 "$WORK/node$n"
        NODE_NAME="node$n" REST_PORT=$((BASE + 10 + n)) PG_PORT=$((BASE + n)) \
            ETCD_HOSTS="127.0.0.1:$etcd_client" DATA_DIR="$WORK/node$n/data" PG_BIN="$PG_BIN" NODE_DIR="$WORK/node$n" \
            envsubst <"$ROOT/deploy/ha/patroni.yml.in" >"$WORK/node$n.yml"
        chmod 0644 "$WORK/node$n.yml"
        setsid "${as_pg[@]}" patroni "$WORK/node$n.yml" >"$WORK/node$n.log" 2>&1 &
        local launcher=$!
        # As root, runuser stays as patroni's parent: note patroni's own id too.
        [[ ${#as_pg[@]} -gt 0 ]] && wait_for "pgrep -P $launcher" 10
        patroni_pids[n]="$(pgrep -P "$launcher" || echo "$launcher")"
        pids+=("$launcher" "${patroni_pids[n]}")
        urls+=("127.0.0.1:$((BASE + n))")
        # The first node bootstraps the cluster; the others clone it.
        [[ $n == 1 ]] && { wait_for leader_port 60 || { cat "$WORK/node1.log" >&2; return 1; }; }
    done
    local leader; leader="$(leader_port)"
    psql -h 127.0.0.1 -p "$leader" -U postgres -qc 'CREATE DATABASE checkout'
    # Both replicas streaming, one of them synchronous.
    wait_for "[[ \$(psql -h 127.0.0.1 -p $leader -U postgres -Atc \"SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'\") == 2 ]]" 90 ||
        { for f in "$WORK"/node*.log; do tail -n 20 "$f" >&2; done; return 1; }
    wait_for "[[ \$(psql -h 127.0.0.1 -p $leader -U postgres -Atc \"SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'\") == 1 ]]" 30 ||
        { log "no synchronous standby"; return 1; }

    local hosts; hosts="$(IFS=,; echo "${urls[*]}")"
    local secret="ha-secret-$RANDOM$RANDOM"
    DATABASE_URL="postgresql://postgres@$hosts/checkout?target_session_attrs=read-write&connect_timeout=2" \
    CHECKOUT__DATA_DIR="$WORK/service" CHECKOUT__SERVER__PORT=$((BASE + 30)) \
    CHECKOUT__SANDBOX__CLIENT_SECRET="$secret" CHECKOUT__SECURITY__TOKEN_REQUESTS_PER_CLIENT_PER_MINUTE=0 \
    CHECKOUT__DATABASE__POOL_SIZE=8 RUST_LOG=warn \
        "$CHECKOUT_BIN" serve >"$WORK/service.out" 2>"$WORK/service.log" &
    pids+=($!)
    wait_for "curl -sf http://127.0.0.1:$((BASE + 30))/health/ready" 60 || { cat "$WORK/service.log" >&2; return 1; }

    (
        sleep "$KILL_AFTER"
        local port; port="$(leader_port)"
        local n=$((port - BASE))
        local postmaster; postmaster="$(head -1 "$WORK/node$n/data/postmaster.pid")"
        # The whole node at once: Patroni, the postmaster and its backends.
        # shellcheck disable=SC2046
        kill -9 "${patroni_pids[n]}" "$postmaster" $(pgrep -P "$postmaster") 2>/dev/null || true
        python3 -c 'import time; print(time.time())' >"$WORK/killed"
        echo "node$n" >"$WORK/killed-node"
    ) &
    local killer=$!
    local status=0
    python3 "$ROOT/bench/ha_load.py" --port $((BASE + 30)) --client-secret "$secret" \
        --workers "$WORKERS" --seconds "$LOAD_SECONDS" --kill-file "$WORK/killed" \
        --report "$WORK/report.json" >/dev/null || status=$?
    wait "$killer" || true
    local new_leader; new_leader="$(leader_port || echo none)"
    python3 - "$WORK/report.json" "$run" "$(cat "$WORK/killed-node")" "$new_leader" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"run {sys.argv[2]}: killed primary {sys.argv[3]}, new primary on port {sys.argv[4]}; "
      f"{r['acknowledged_sessions']} sessions and {r['acknowledged_payments']} payments acknowledged, "
      f"{r['requests']} requests; acknowledged sessions lost: {r['acknowledged_sessions_lost']}; "
      f"payments gone backwards: {r['payments_gone_backwards']}; failed requests after the kill: "
      f"{r['failed_requests_after_kill']} {r['failed_statuses']} (longest {r['longest_failed_request_s']} s); "
      f"failure window: {r['failure_window_s']} s; first success after the kill: {r['first_success_after_kill_s']} s; "
      f"final states: {r['final_states']}")
PY
    cleanup
    WORK=""
    return $status
}

failed=0
for run in $(seq 1 "$RUNS"); do
    one_run "$run" || failed=1
done
exit $failed
