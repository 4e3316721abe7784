#!/usr/bin/env bash
# Measures the service against the database's own limit, on loopback, in one run.
#
#   ./bench/run.sh
#
# 1. builds the server (skipped when CHECKOUT_BIN names a binary) and bench/payer in release,
#    and installs wrk (and the postgresql package when initdb is missing);
# 2. starts a fresh private PostgreSQL cluster in a temp folder, with production durability
#    (fsync, synchronous_commit and full_page_writes on), on a unix socket;
# 3. measures the database's ceiling with pgbench on that cluster: single-row INSERTs into the
#    real payment_sessions table (the migration's own DDL), point SELECTs by primary key, and
#    a card payment's statements (pgbench/payment.sql: the create, the page's and the card
#    post's reads, the attempt begun and its answer recorded, each single-row);
# 4. starts the release server on the same cluster and drives it with wrk: start-payment,
#    payment status, card payments through the hosted page (bench/payer, sandbox
#    processor without delay, the card-testing guard on as by default, then again with it
#    off), start-payment at each concurrency of BENCH_SWEEP; then
#    restarts it with the sandbox processor made BENCH_PROCESSOR_DELAY_MS slow for payment
#    status while BENCH_SLOW_PAYERS payments wait on it, and token issuance;
# 5. prints one table (also written to bench/results/latest.md) with the targets next to the
#    numbers. Everything is stopped and removed on exit.
#
# Settings (environment variables):
#   BENCH_SECONDS         length of each measured run, pgbench and wrk (default 20)
#   BENCH_WARMUP_SECONDS  unmeasured wrk run before each measured one (default 3; 0: none)
#   BENCH_CLIENTS         pgbench clients and wrk connections (default 32)
#   BENCH_THREADS         pgbench -j and wrk -t (default 2)
#   BENCH_SELECT_ROWS     rows pre-filled for the pgbench SELECT (default 100000)
#   BENCH_STATUS_SESSIONS sessions the status runs poll at random (default 10000)
#   BENCH_BUILD_NICE      niceness of the cargo build (default 0)
#   BENCH_PROCESSOR_DELAY_MS  how slow the sandbox card processor is made (default 2000)
#   BENCH_SLOW_PAYERS     payments kept in flight during the slow-processor status run (default 16)
#   BENCH_PAYERS          payers of the card-payment run, no processor delay (default BENCH_CLIENTS)
#   BENCH_SWEEP           start-payment concurrencies of the sweep (default "1 8 32 128 512")
#   BENCH_SWEEP_SECONDS   length of each sweep run (default BENCH_SECONDS / 2, at least 5)
#   CHECKOUT_BIN          a prebuilt `checkout` binary to use instead of building one
#   CARGO_TARGET_DIR      default $HOME/.cache/hosted-checkout/target
#
# Exit status: 0 when every request answered 2xx (targets met or not: read the table),
# 1 on a setup failure, 2 when some requests failed (non-2xx or socket errors).
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_DIR="$PWD/bench"

SECONDS_PER_RUN="${BENCH_SECONDS:-20}"
WARMUP="${BENCH_WARMUP_SECONDS:-3}"
CLIENTS="${BENCH_CLIENTS:-32}"
THREADS="${BENCH_THREADS:-2}"
SELECT_ROWS="${BENCH_SELECT_ROWS:-100000}"
STATUS_SESSIONS="${BENCH_STATUS_SESSIONS:-10000}"
PROCESSOR_DELAY_MS="${BENCH_PROCESSOR_DELAY_MS:-2000}"
SLOW_PAYERS="${BENCH_SLOW_PAYERS:-16}"
PAYERS="${BENCH_PAYERS:-$CLIENTS}"
read -r -a SWEEP <<<"${BENCH_SWEEP:-1 8 32 128 512}"
SWEEP_SECONDS="${BENCH_SWEEP_SECONDS:-$((SECONDS_PER_RUN / 2 > 5 ? SECONDS_PER_RUN / 2 : 5))}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/hosted-checkout/target}"

log() { echo "== $*" >&2; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
# Other compilers running are the usual noise on a shared machine: count them. (Not pgrep:
# it matches nothing with a pattern longer than 15 characters.)
# shellcheck disable=SC2009
compilers() { ps -eo comm= | grep -cxE 'rustc|cc1|cc1plus|ld|cargo|build-script-bu' || true; }
die() {
    echo "bench: $*" >&2
    exit 1
}

# --- 1. tools and the release binary ------------------------------------------------------

sudo_cmd=()
if [[ "$(id -u)" != 0 ]]; then sudo_cmd=(sudo); fi
apt_install() {
    log "installing $*"
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "$@" >/dev/null
}

pg_bin_dir() {
    local dir
    for dir in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
        [[ -x "$dir/initdb" ]] && { echo "$dir"; return 0; }
    done
    command -v initdb >/dev/null 2>&1 && { dirname "$(command -v initdb)"; return 0; }
    return 1
}

packages=()
pg_bin_dir >/dev/null || packages+=(postgresql)
command -v wrk >/dev/null 2>&1 || packages+=(wrk)
command -v curl >/dev/null 2>&1 || packages+=(curl)
if ((${#packages[@]})); then apt_install "${packages[@]}"; fi
PG_BIN="$(pg_bin_dir)" || die "no initdb found after installing postgresql"
PATH="$PG_BIN:$PATH"

if [[ -n "${CHECKOUT_BIN:-}" ]]; then
    BIN="$CHECKOUT_BIN"
    log "using $BIN (no build)"
else
    log "cargo build --release -p checkout-server --bin checkout (target: $CARGO_TARGET_DIR)"
    nice -n "${BENCH_BUILD_NICE:-0}" cargo build --release -p checkout-server --bin checkout
    BIN="$CARGO_TARGET_DIR/release/checkout"
fi
[[ -x "$BIN" ]] || die "$BIN is not an executable"
# The payers (bench/payer: one thread, keep-alive connections), built whatever CHECKOUT_BIN.
log "cargo build --release -p bench-payer"
nice -n "${BENCH_BUILD_NICE:-0}" cargo build --release -p bench-payer
PAYER="$CARGO_TARGET_DIR/release/bench-payer"

# --- 2. a private PostgreSQL cluster --------------------------------------------------------

# As root, initdb refuses to run: the cluster runs as `postgres` (else `nobody`), in a folder
# that belongs to that user. The folder name is short: it also holds the unix socket
# (socket paths are limited to about 107 bytes).
WORK="$(mktemp -d /tmp/hcbench.XXXXXX)"
as_pg=()
if [[ "$(id -u)" == 0 ]]; then
    pg_user=postgres
    id -u postgres >/dev/null 2>&1 || pg_user=nobody
    chown "$pg_user" "$WORK"
    as_pg=(runuser -u "$pg_user" --)
fi
PGDATA="$WORK/pg"
SERVER_PID=""
PAYER_PIDS=()

cleanup() {
    local status=$?
    trap - EXIT INT TERM
    if ((${#PAYER_PIDS[@]})); then
        kill "${PAYER_PIDS[@]}" 2>/dev/null || true
        wait "${PAYER_PIDS[@]}" 2>/dev/null || true
    fi
    if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    if [[ -f "$PGDATA/postmaster.pid" ]]; then
        "${as_pg[@]}" pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$WORK"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log "private PostgreSQL cluster in $WORK (fsync, synchronous_commit, full_page_writes on)"
"${as_pg[@]}" initdb -D "$PGDATA" -U postgres -A trust --no-sync >"$WORK/initdb.log" 2>&1 ||
    { cat "$WORK/initdb.log" >&2; die "initdb failed"; }
# Durability as in production, said explicitly; no TCP listener, only the socket in $WORK.
# 100 connections: 32 pgbench clients or the server's pool (16) with room to spare.
"${as_pg[@]}" pg_ctl -D "$PGDATA" -l "$WORK/postgres.log" -w -o "\
 -c listen_addresses='' -c unix_socket_directories='$WORK' -c unix_socket_permissions=0700\
 -c fsync=on -c synchronous_commit=on -c full_page_writes=on -c max_connections=100" \
    start >/dev/null || { cat "$WORK/postgres.log" >&2; die "postgres did not start"; }

psql_q() { psql -X -q -v ON_ERROR_STOP=1 -h "$WORK" -U postgres "$@"; }
psql_q -d postgres -c 'CREATE DATABASE pgbench' -c 'CREATE DATABASE checkout'
durability="$(psql_q -d postgres -At -c "SELECT string_agg(name || '=' || setting, ', ' ORDER BY name)
    FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'full_page_writes', 'wal_sync_method')")"
pg_version="$(psql_q -d postgres -At -c 'SHOW server_version')"
log "PostgreSQL $pg_version: $durability"

# Before each measured run (after its warm-up): the statistics autovacuum would have gathered
# by then in a service that has been running, as pgbench's tables got theirs (VACUUM ANALYZE
# in prepare.sql). Without them, a table that was empty when the pool's connections first
# ran a statement on it (payment_attempts before the card-payment run) keeps a plan made for
# an empty table, a sequential scan, until autovacuum's first ANALYZE, up to a minute later:
# longer than a run. Then a checkpoint, so that no run starts with the previous run's dirty
# pages still to write.
checkpoint() {
    psql_q -d checkout -c ANALYZE
    psql_q -d postgres -c CHECKPOINT
}

# Where the cores' time goes during a run, from /proc in clock ticks: the whole machine's busy
# time, the server's, and PostgreSQL's (the postmaster, the children it has reaped, and its
# live backends). The rest of the busy time ("other") is the load generator (pgbench or wrk)
# and anything else running on the machine: a concurrent build shows up there.
HZ="$(getconf CLK_TCK)"
proc_ticks() { # utime + stime of pid $1, plus its reaped children's with a second argument
    local stat
    stat="$(cat "/proc/$1/stat" 2>/dev/null)" || { echo 0; return; }
    awk -v children="${2:-}" '{ t = $12 + $13; if (children) t += $14 + $15; print t }' \
        <<<"${stat##*) }" # the fields after "pid (comm) ", from the state on
}
pg_ticks() {
    local postmaster ticks child
    postmaster="$(head -1 "$PGDATA/postmaster.pid")"
    ticks="$(proc_ticks "$postmaster" children)"
    for child in $(pgrep -P "$postmaster"); do ticks=$((ticks + $(proc_ticks "$child"))); done
    echo "$ticks"
}
cpu_snapshot() { # busy idle server postgres
    echo "$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6 }' /proc/stat)" \
        "$([[ -n "$SERVER_PID" ]] && proc_ticks "$SERVER_PID" || echo 0)" "$(pg_ticks)"
}
# "busy% | server us | postgres us | other us" per request, between two snapshots.
cpu_report() { # before after requests
    local b0 i0 s0 p0 b1 i1 s1 p1
    read -r b0 i0 s0 p0 <<<"$1"
    read -r b1 i1 s1 p1 <<<"$2"
    awk -v b=$((b1 - b0)) -v i=$((i1 - i0)) -v s=$((s1 - s0)) -v p=$((p1 - p0)) -v n="$3" \
        -v hz="$HZ" 'BEGIN { us = 1e6 / hz / n;
        other = b - s - p; if (other < 0) other = 0; # the two clocks differ by a few ticks
        printf "%.0f%% | %.0f | %.0f | %.0f", 100 * b / (b + i), s * us, p * us, other * us }'
}

# --- 3. the database's ceiling: pgbench -----------------------------------------------------

LOAD_BEFORE="$(loadavg)" COMPILERS_BEFORE="$(compilers)"
log "load average before measuring: $LOAD_BEFORE ($COMPILERS_BEFORE compiler processes running)"

# The pgbench database gets the service's own schema (the migrations' DDL: the same columns,
# constraints, foreign key and indexes as payment_sessions), a terminal, and SELECT_ROWS
# sessions whose ids pgbench can compute: md5(k)::uuid for k in 1..SELECT_ROWS.
for up in migrations/*/up.sql; do psql_q -d pgbench -f "$up"; done
psql_q -d pgbench -f "$BENCH_DIR/pgbench/prepare.sql" -v rows="$SELECT_ROWS"

# Runs pgbench with the given script; sets PG_<NAME>_TPS and CPU_<NAME>.
run_pgbench() {
    local name="$1" script="$2" out before
    checkpoint
    log "pgbench $name: $CLIENTS clients, $THREADS threads, ${SECONDS_PER_RUN}s, -M prepared"
    before="$(cpu_snapshot)"
    out="$(pgbench -n -M prepared -c "$CLIENTS" -j "$THREADS" -T "$SECONDS_PER_RUN" \
        -D rows="$SELECT_ROWS" -h "$WORK" -U postgres -f "$script" pgbench 2>&1)" ||
        { echo "$out" >&2; die "pgbench $name failed"; }
    printf -v "PG_${name}_COUNT" '%s' \
        "$(echo "$out" | sed -nE 's/^number of transactions actually processed: ([0-9]+).*/\1/p')"
    local count="PG_${name}_COUNT"
    printf -v "CPU_$name" '%s' "$(cpu_report "$before" "$(cpu_snapshot)" "${!count}")"
    echo "$out" | grep -E '^(number of (transactions|failed)|latency average|tps)' | sed 's/^/   /' >&2
    printf -v "PG_${name}_TPS" '%s' \
        "$(echo "$out" | sed -nE 's/^tps = ([0-9.]+) \(without initial connection time\)$/\1/p')"
}
run_pgbench INSERT "$BENCH_DIR/pgbench/insert.sql"
run_pgbench SELECT "$BENCH_DIR/pgbench/select.sql"
run_pgbench PAYMENT "$BENCH_DIR/pgbench/payment.sql"
# Every payment counted must have done its writes: a statement whose WHERE matched no row
# would make the ceiling look higher than the work it stands for.
paid="$(psql_q -d pgbench -At -c "SELECT (SELECT count(*) FROM payment_attempts
    WHERE state = 'succeeded') || ' ' || (SELECT count(*) FROM events WHERE type = 'payment.succeeded')")"
[[ "$paid" == "$PG_PAYMENT_COUNT $PG_PAYMENT_COUNT" ]] ||
    die "pgbench payment: $PG_PAYMENT_COUNT payments, but succeeded attempts and events: $paid"
[[ -n "$PG_INSERT_TPS" && -n "$PG_SELECT_TPS" && -n "$PG_PAYMENT_TPS" ]] ||
    die "could not read pgbench's tps"

# --- 4. the release server on the same cluster ----------------------------------------------

SECRET="bench-secret-$RANDOM$RANDOM"
export DATABASE_URL="postgres://postgres@/checkout?host=$WORK&port=5432"
export CHECKOUT__SERVER__PORT=0 CHECKOUT__DATA_DIR="$WORK/server"
export CHECKOUT__SANDBOX__CLIENT_SECRET="$SECRET" RUST_LOG=warn
# The token run measures Argon2id throughput, not the abuse limits: lift them here.
export CHECKOUT__SECURITY__TOKEN_REQUESTS_PER_CLIENT_PER_MINUTE=0
export CHECKOUT__SECURITY__TOKEN_REQUESTS_PER_ADDRESS_PER_MINUTE=0
# No balancer to wait for between rounds: no grace period after SIGTERM.
export CHECKOUT__SERVER__SHUTDOWN_GRACE_MS=0
# Starts the server with the sandbox processor made $1 ms slow; sets SERVER_PID, BASE and
# TOKEN. Its data folder (and so its signing key) is the same for every start.
start_server() {
    local port
    export CHECKOUT__PROCESSOR__SANDBOX_DELAY_MS="$1"
    log "starting $BIN serve (processor delay $1 ms)"
    "$BIN" serve >"$WORK/server.out" 2>"$WORK/server.err" &
    SERVER_PID=$!
    BASE=""
    for _ in $(seq 1 300); do
        kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.err" >&2; die "the server exited"; }
        port="$(sed -nE 's/.*listening on http:\/\/[^:]+:([0-9]+).*/\1/p' "$WORK/server.out")"
        if [[ -n "$port" ]] && curl -sf -o /dev/null "http://127.0.0.1:$port/.well-known/jwks.json"; then
            BASE="http://127.0.0.1:$port"
            break
        fi
        sleep 0.1
    done
    [[ -n "$BASE" ]] || die "the server did not answer within 30 s"
    log "server pid $SERVER_PID at $BASE"
    TOKEN="$(curl -sf -X POST "$BASE/api/public/security/auth" -H 'Content-Type: application/json' \
        -d "{\"client_id\":\"$CLIENT_ID\",\"client_secret\":\"$SECRET\"}" |
        sed -nE 's/.*"token":"([^"]+)".*/\1/p')"
    [[ -n "$TOKEN" ]] || die "no token"
}
# Stops the server (SIGTERM, as in a deploy) after noting its peak RSS in SERVER_HWM_MB (the
# largest of every server started).
SERVER_HWM_MB=0
stop_server() {
    kill -0 "$SERVER_PID" 2>/dev/null || die "the server died during the run"
    SERVER_HWM_MB="$(awk -v kb="$(vm_kb VmHWM)" -v m="$SERVER_HWM_MB" \
        'BEGIN { v = kb / 1024; if (v < m) v = m; printf "%.1f", v }')"
    kill -TERM "$SERVER_PID"
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
}
vm_kb() { sed -nE "s/^$1:[[:space:]]+([0-9]+) kB/\1/p" "/proc/$SERVER_PID/status"; }

CLIENT_ID=sandbox-client
start_server 0
RUN_PREFIX="B$(date +%s)$RANDOM"

# --- 5. wrk against the server --------------------------------------------------------------

export BENCH_LUA_DIR="$BENCH_DIR"

# Runs wrk with the given script and arguments, first unmeasured for WARMUP seconds (the pool's
# connections open, the statement caches fill), then measured; sets <NAME>_RPS, _P50, _P99,
# _NON2XX, _SOCKET_ERRORS, _FIRST_ERROR, _HWM_MB and CPU_<NAME>. The 10 s timeout (wrk's default
# is 2 s) keeps a slow answer in the latencies instead of dropping it as a socket error.
# WRK_CONNECTIONS and WRK_SECONDS, when set, replace BENCH_CLIENTS and BENCH_SECONDS.
run_wrk() {
    local name="$1" script="$2" out line before
    local c="${WRK_CONNECTIONS:-$CLIENTS}" d="${WRK_SECONDS:-$SECONDS_PER_RUN}"
    local t=$((THREADS < c ? THREADS : c))
    shift 2
    if ((WARMUP > 0)); then
        wrk -c "$c" -t "$t" -d "${WARMUP}s" --timeout 10s -s "$script" "$BASE" \
            -- "$@" >/dev/null
    fi
    checkpoint
    log "wrk $name: $c connections, $t threads, ${d}s"
    before="$(cpu_snapshot)"
    out="$(wrk -c "$c" -t "$t" -d "${d}s" --timeout 10s --latency \
        -s "$script" "$BASE" -- "$@")" || { echo "$out" >&2; die "wrk $name failed"; }
    echo "$out" | grep -E 'Latency|Req/Sec|requests in|Requests/sec|Non-2xx|Socket errors|^ +(50|99)%' |
        sed 's/^/   /' >&2
    line="$(echo "$out" | grep '^BENCH requests=')" || die "wrk $name printed no summary"
    printf -v "CPU_$name" '%s' "$(cpu_report "$before" "$(cpu_snapshot)" \
        "$(sed -E 's/.*requests=([0-9]+).*/\1/' <<<"$line")")"
    printf -v "${name}_RPS" '%s' "$(sed -E 's/.* rps=([0-9.]+).*/\1/' <<<"$line")"
    printf -v "${name}_P50" '%s' "$(sed -E 's/.* p50_ms=([0-9.]+).*/\1/' <<<"$line")"
    printf -v "${name}_P99" '%s' "$(sed -E 's/.* p99_ms=([0-9.]+).*/\1/' <<<"$line")"
    printf -v "${name}_NON2XX" '%s' "$(sed -E 's/.* non2xx=([0-9]+).*/\1/' <<<"$line")"
    printf -v "${name}_SOCKET_ERRORS" '%s' "$(sed -E 's/.* socket_errors=([0-9]+).*/\1/' <<<"$line")"
    printf -v "${name}_FIRST_ERROR" '%s' "$(echo "$out" | sed -n 's/^BENCH first_error=//p')"
    # VmHWM is the largest resident set the process has had since it started.
    printf -v "${name}_HWM_MB" '%s' "$(awk -v kb="$(vm_kb VmHWM)" 'BEGIN { printf "%.1f", kb / 1024 }')"
    log "$name: server VmRSS $(($(vm_kb VmRSS) / 1024)) MiB, VmHWM so far $(($(vm_kb VmHWM) / 1024)) MiB"
}

run_wrk START "$BENCH_DIR/start-payment.lua" "$TOKEN" "$RUN_PREFIX"
# The status runs poll STATUS_SESSIONS sessions of the start-payment run, drawn at random,
# as pgbench's SELECT reads random rows: not one session, which combined reads would
# answer from a single row.
STATUS_IDS="$WORK/status-ids.txt"
psql_q -d checkout -At -c "SELECT id FROM payment_sessions ORDER BY random() LIMIT $STATUS_SESSIONS" \
    >"$STATUS_IDS"
(($(wc -l <"$STATUS_IDS") > 0)) || die "the start-payment run left no session for the status run"
run_wrk STATUS "$BENCH_DIR/status.lua" "$TOKEN" "$STATUS_IDS"

# Card payments through the hosted page with the sandbox processor answering at once: PAYERS
# payers (bench/payer: start-payment, the page, the card form post) for WARMUP seconds
# unmeasured, then SECONDS_PER_RUN measured. Sets <NAME>_303 and <NAME>_OTHER (form posts
# answered 303 and otherwise), <NAME>_RPS (303s per second), <NAME>_MEDIAN_MS and
# <NAME>_P99_MS (of the form posts answered 303) and CPU_<NAME>.
run_payers() {
    local name="$1" lines lines_before before after n303 nother
    local out="$WORK/payments-$name.txt"
    : >"$out"
    log "$PAYERS payers through the hosted page ($name), processor without delay, ${SECONDS_PER_RUN}s"
    "$PAYER" "$BASE" "$TOKEN" "$RUN_PREFIX-$name" "$out" "$PAYERS" &
    PAYER_PIDS+=($!)
    sleep "$((WARMUP > 0 ? WARMUP : 1))"
    checkpoint
    lines_before="$(wc -l <"$out")"
    before="$(cpu_snapshot)"
    sleep "$SECONDS_PER_RUN"
    lines="$(tail -n +"$((lines_before + 1))" "$out")"
    after="$(cpu_snapshot)"
    kill "${PAYER_PIDS[@]}" 2>/dev/null || true
    wait "${PAYER_PIDS[@]}" 2>/dev/null || true
    PAYER_PIDS=()
    n303="$(grep -c '^303 ' <<<"$lines" || true)"
    nother="$(($(grep -c . <<<"$lines" || true) - n303))"
    printf -v "${name}_303" '%s' "$n303"
    printf -v "${name}_OTHER" '%s' "$nother"
    printf -v "${name}_RPS" '%s' "$(awk -v n="$n303" -v s="$SECONDS_PER_RUN" 'BEGIN { printf "%.1f", n / s }')"
    printf -v "${name}_MEDIAN_MS" '%s' "$(awk '$1 == 303 { print $2 * 1000 }' <<<"$lines" | sort -n |
        awk '{ v[NR] = $1 } END { if (NR) printf "%.1f", v[int((NR + 1) / 2)]; else print "n/a" }')"
    printf -v "${name}_P99_MS" '%s' "$(awk '$1 == 303 { print $2 * 1000 }' <<<"$lines" | sort -n |
        awk '{ v[NR] = $1 } END { i = int(NR * 0.99 + 0.5); if (i < 1) i = 1; if (NR) printf "%.1f", v[i]; else print "n/a" }')"
    printf -v "CPU_${name}" '%s' "$(cpu_report "$before" "$after" "$((n303 > 0 ? n303 : 1))")"
    log "card payments ($name): $n303 answered 303, $nother otherwise"
}
run_payers PAY

# The concurrency sweep: start-payment at each of SWEEP connections, SWEEP_SECONDS each.
SWEEP_BEST=0
for c in "${SWEEP[@]}"; do
    WRK_CONNECTIONS="$c" WRK_SECONDS="$SWEEP_SECONDS" \
        run_wrk "SWEEP_$c" "$BENCH_DIR/start-payment.lua" "$TOKEN" "$RUN_PREFIX-c$c"
    rps="SWEEP_${c}_RPS"
    SWEEP_BEST="$(awk -v a="$SWEEP_BEST" -v b="${!rps}" 'BEGIN { print (b > a ? b : a) }')"
done

# The card payments again with the card-testing guard off: the guard's cost on the card post
# (its counts read before, the answer recorded after) is the difference.
stop_server
CHECKOUT__GUARD__ENABLED=false start_server 0
run_payers PAY_NO_GUARD

# Again with the card processor slow, for the status run while payments wait on it.
stop_server
start_server "$PROCESSOR_DELAY_MS"

# The same status run while SLOW_PAYERS payers each keep a card payment waiting on the slow
# processor. They start first, so that payments are in flight before wrk's warm-up; their
# one process shares the cores too (it shows in the "other" CPU column).
PAYMENTS="$WORK/payments.txt"
: >"$PAYMENTS"
log "$SLOW_PAYERS payers through the hosted page, processor ${PROCESSOR_DELAY_MS} ms slow"
"$PAYER" "$BASE" "$TOKEN" "$RUN_PREFIX" "$PAYMENTS" "$SLOW_PAYERS" &
PAYER_PIDS+=($!)
sleep 3
PAYMENTS_BEFORE="$(wc -l <"$PAYMENTS")"
run_wrk STATUS_SLOW "$BENCH_DIR/status.lua" "$TOKEN" "$STATUS_IDS"
PAYMENTS_DURING="$(($(wc -l <"$PAYMENTS") - PAYMENTS_BEFORE))"
kill "${PAYER_PIDS[@]}" 2>/dev/null || true
wait "${PAYER_PIDS[@]}" 2>/dev/null || true
PAYER_PIDS=()
# Payments as the payers saw them: form posts answered 303 (the redirect to the merchant after
# an approval), other answers, and the median time of a form post.
PAYMENTS_303="$(grep -c '^303 ' "$PAYMENTS" || true)"
PAYMENTS_OTHER="$(($(wc -l <"$PAYMENTS") - PAYMENTS_303))"
PAYMENT_MEDIAN_S="$(awk '$1 == 303 { print $2 }' "$PAYMENTS" | sort -n |
    awk '{ v[NR] = $1 } END { if (NR) printf "%.2f", v[int((NR + 1) / 2)]; else print "n/a" }')"
log "payments: $PAYMENTS_303 answered 303 (median form post ${PAYMENT_MEDIAN_S} s), $PAYMENTS_OTHER otherwise; $PAYMENTS_DURING finished during the measured run"
run_wrk TOKEN "$BENCH_DIR/token.lua" "$CLIENT_ID" "$SECRET"

# --- 6. peak memory ------------------------------------------------------------------------

# The servers' peak RSS over the whole run: the larger VmHWM of the two servers, the second
# read after its last run (token issuance, with its Argon2id memory); SWEEP_..._HWM_MB and
# STATUS_SLOW_HWM_MB are the peaks before token issuance started.
stop_server
RSS_MB="$SERVER_HWM_MB"
LAST_SWEEP="SWEEP_${SWEEP[-1]}_HWM_MB"
RSS_BEFORE_TOKEN_MB="$(awk -v a="${!LAST_SWEEP}" -v b="$STATUS_SLOW_HWM_MB" \
    'BEGIN { printf "%.1f", (a > b ? a : b) }')"
LOAD_AFTER="$(loadavg)" COMPILERS_AFTER="$(compilers)"

# --- 7. the table -------------------------------------------------------------------------

ok() { awk "BEGIN { exit !($1) }" && echo yes || echo "**no**"; }
calc() { awk "BEGIN { printf \"$1\", $2 }"; }

START_RATIO="$(calc %.2f "$START_RPS / $PG_INSERT_TPS")"
STATUS_RATIO="$(calc %.2f "$STATUS_RPS / $PG_SELECT_TPS")"
SLOW_RATIO="$(calc %.2f "$STATUS_SLOW_P99 / $STATUS_P99")"
PAY_RATIO="$(calc %.2f "$PAY_RPS / $START_RPS")"
PAY_PG_RATIO="$(calc %.2f "$PAY_RPS / $PG_PAYMENT_TPS")"
GUARD_RATIO="$(calc %.2f "$PAY_RPS / ($PAY_NO_GUARD_RPS > 0 ? $PAY_NO_GUARD_RPS : 1)")"
errors="$((PAY_OTHER + PAY_NO_GUARD_OTHER))"
SWEEP_NAMES=()
for c in "${SWEEP[@]}"; do SWEEP_NAMES+=("SWEEP_$c"); done
LAST_RPS="SWEEP_${SWEEP[-1]}_RPS"
SWEEP_RATIO="$(calc %.2f "${!LAST_RPS} / $SWEEP_BEST")"
sweep_errors=0
for name in "${SWEEP_NAMES[@]}"; do
    n2="${name}_NON2XX" se="${name}_SOCKET_ERRORS"
    sweep_errors=$((sweep_errors + ${!n2} + ${!se}))
done
errors=$((errors + sweep_errors))
for name in START STATUS STATUS_SLOW TOKEN; do
    n2="${name}_NON2XX" se="${name}_SOCKET_ERRORS"
    errors=$((errors + ${!n2} + ${!se}))
done

row() { # one markdown table row of its arguments
    printf '|'
    printf ' %s |' "$@"
    echo
}
table() {
    row "Measure" "Measured" "Target" "Met"
    row "---" "---:" "---" "---"
    row "pgbench INSERT, payment_sessions row" "$(calc %.0f "$PG_INSERT_TPS") tps" "(the ceiling)" ""
    row "pgbench SELECT by primary key" "$(calc %.0f "$PG_SELECT_TPS") tps" "(the ceiling)" ""
    row "pgbench card payment: its statements, single-row (3 commits)" \
        "$(calc %.0f "$PG_PAYMENT_TPS") tps = $(calc %.2f "$PG_PAYMENT_TPS / $PG_INSERT_TPS") x INSERT" \
        "(the ceiling)" ""
    row "start-payment throughput" "$(calc %.0f "$START_RPS") req/s = **$START_RATIO** x INSERT" \
        "≥ 0.80 x INSERT = $(calc %.0f "0.8 * $PG_INSERT_TPS") req/s" "$(ok "$START_RATIO >= 0.8")"
    row "start-payment latency p50 / p99" "$START_P50 / **$START_P99** ms" "p99 < 15 ms" \
        "$(ok "$START_P99 < 15")"
    row "start-payment non-2xx / socket errors" "$START_NON2XX / $START_SOCKET_ERRORS" "0" \
        "$(ok "$START_NON2XX + $START_SOCKET_ERRORS == 0")"
    row "status throughput" "$(calc %.0f "$STATUS_RPS") req/s = **$STATUS_RATIO** x SELECT" \
        "≥ 0.50 x SELECT = $(calc %.0f "0.5 * $PG_SELECT_TPS") req/s" "$(ok "$STATUS_RATIO >= 0.5")"
    row "status latency p50 / p99" "$STATUS_P50 / **$STATUS_P99** ms" "p99 < 5 ms" \
        "$(ok "$STATUS_P99 < 5")"
    row "status non-2xx / socket errors" "$STATUS_NON2XX / $STATUS_SOCKET_ERRORS" "0" \
        "$(ok "$STATUS_NON2XX + $STATUS_SOCKET_ERRORS == 0")"
    row "card payments through the hosted page, sandbox processor, no delay ($PAYERS payers)" \
        "$PAY_RPS /s = **$PAY_RATIO** x start-payment (median form post $PAY_MEDIAN_MS ms)" \
        "≥ 0.50 x start-payment" "$(ok "$PAY_RATIO >= 0.5")"
    row "card payments / pgbench card payment" "**$PAY_PG_RATIO** x" "(none)" ""
    row "card payments answered otherwise than 303" "$PAY_OTHER" "0" "$(ok "$PAY_OTHER == 0")"
    row "card post, card-testing guard on / off: throughput; form post median, p99" \
        "$PAY_RPS / $PAY_NO_GUARD_RPS /s = **$GUARD_RATIO** x; $PAY_MEDIAN_MS / $PAY_NO_GUARD_MEDIAN_MS ms, $PAY_P99_MS / $PAY_NO_GUARD_P99_MS ms" \
        "≥ 0.80 x, all 303" "$(ok "$GUARD_RATIO >= 0.8 && $PAY_NO_GUARD_OTHER == 0")"
    local c rps p99 n2 se
    for c in "${SWEEP[@]}"; do
        rps="SWEEP_${c}_RPS" p99="SWEEP_${c}_P99" n2="SWEEP_${c}_NON2XX" se="SWEEP_${c}_SOCKET_ERRORS"
        row "start-payment at c=$c: throughput (p99), non-2xx / socket errors" \
            "$(calc %.0f "${!rps}") req/s (${!p99} ms), ${!n2} / ${!se}" "(the sweep)" ""
    done
    row "sweep: c=${SWEEP[-1]} / the best concurrency; errors" \
        "**$SWEEP_RATIO** x; $sweep_errors errors" "≥ 0.90 x, 0 errors" \
        "$(ok "$SWEEP_RATIO >= 0.9 && $sweep_errors == 0")"
    row "status p50 / p99, processor ${PROCESSOR_DELAY_MS} ms slow, $SLOW_PAYERS payments in flight" \
        "$STATUS_SLOW_P50 / **$STATUS_SLOW_P99** ms = **$SLOW_RATIO** x normal p99" \
        "p99 ≤ 1.5 x normal = $(calc %.2f "1.5 * $STATUS_P99") ms" "$(ok "$SLOW_RATIO <= 1.5")"
    row "status throughput, processor slow" "$(calc %.0f "$STATUS_SLOW_RPS") req/s" "(none)" ""
    row "status non-2xx / socket errors, processor slow" \
        "$STATUS_SLOW_NON2XX / $STATUS_SLOW_SOCKET_ERRORS" "0" \
        "$(ok "$STATUS_SLOW_NON2XX + $STATUS_SLOW_SOCKET_ERRORS == 0")"
    row "payments by the payers: 303 / other answers (median form post)" \
        "$PAYMENTS_303 / $PAYMENTS_OTHER ($PAYMENT_MEDIAN_S s); $PAYMENTS_DURING during the measured run" \
        "all 303" "$(ok "$PAYMENTS_OTHER == 0 && $PAYMENTS_303 > 0")"
    row "token throughput" "$(calc %.0f "$TOKEN_RPS") req/s" "(none)" ""
    row "token latency p50 / p99" "$TOKEN_P50 / $TOKEN_P99 ms" "(none)" ""
    row "token non-2xx / socket errors" "$TOKEN_NON2XX / $TOKEN_SOCKET_ERRORS" "0" \
        "$(ok "$TOKEN_NON2XX + $TOKEN_SOCKET_ERRORS == 0")"
    row "server peak RSS (VmHWM), whole run" "**$RSS_MB** MB" "< 64 MB" "$(ok "$RSS_MB < 64")"
    row "server peak RSS before the token run" "$RSS_BEFORE_TOKEN_MB MB" "< 64 MB" \
        "$(ok "$RSS_BEFORE_TOKEN_MB < 64")"
}

cpu_table() {
    row "Run" "Cores busy" "Server CPU µs/req" "PostgreSQL CPU µs/req" "Other CPU µs/req (load generator + rest)"
    row "---" "---:" "---:" "---:" "---:"
    row "pgbench INSERT" "$CPU_INSERT"
    row "pgbench SELECT" "$CPU_SELECT"
    row "pgbench card payment (per payment)" "$CPU_PAYMENT"
    row "wrk start-payment" "$CPU_START"
    row "wrk status" "$CPU_STATUS"
    row "card payments, no delay (per payment: 3 requests; + payers)" "$CPU_PAY"
    row "card payments, no delay, guard off" "$CPU_PAY_NO_GUARD"
    local c cpu
    for c in "${SWEEP[@]}"; do
        cpu="CPU_SWEEP_$c"
        row "wrk start-payment, c=$c" "${!cpu}"
    done
    row "wrk status, processor slow (+ payers)" "$CPU_STATUS_SLOW"
    row "wrk token" "$CPU_TOKEN"
}

errors_note() {
    if ((errors > 0)); then
        echo "**THIS RUN HAD ERRORS**: $errors requests were not answered 2xx or failed on the socket."
        for name in START STATUS STATUS_SLOW TOKEN "${SWEEP_NAMES[@]}"; do
            local fe="${name}_FIRST_ERROR"
            if [[ -n "${!fe}" ]]; then echo "- first error of $name: \`${!fe}\`"; fi
        done
    else
        echo "Every request was answered 2xx."
    fi
}

echo
table
echo
errors_note
echo
cpu_table

mkdir -p "$BENCH_DIR/results"
if commit="$(git rev-parse --short HEAD 2>/dev/null)"; then
    git diff --quiet HEAD 2>/dev/null || commit="$commit (with uncommitted changes)"
else
    commit=unknown
fi
{
    echo "# Benchmark: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "Command: \`./bench/run.sh\` (BENCH_SECONDS=$SECONDS_PER_RUN, $CLIENTS clients/connections,"
    echo "$THREADS threads, ${WARMUP}s warm-up per wrk run), commit $commit."
    echo
    table
    echo
    errors_note
    echo
    echo "Where the $(nproc) cores' time went during each measured run:"
    echo
    cpu_table
    echo
    echo "- Machine: \`$(uname -a)\`"
    echo "- CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) cores"
    echo "- Load average (1, 5, 15 min) just before measuring: $LOAD_BEFORE, with $COMPILERS_BEFORE"
    echo "  compiler processes (rustc, cc1, ld, cargo) running; at the end: $LOAD_AFTER (this"
    echo "  includes the benchmark itself), with $COMPILERS_AFTER compiler processes running."
    echo "- PostgreSQL $pg_version on a unix socket: $durability"
    echo "- Server: release build, RUST_LOG=warn, default settings (workers = cores, pool 16)."
    echo "- wrk, pgbench, PostgreSQL and the server all share the same cores."
} >"$BENCH_DIR/results/latest.md"
log "written to bench/results/latest.md"

((errors == 0)) || exit 2
