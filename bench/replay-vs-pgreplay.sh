#!/usr/bin/env bash
# replay-vs-pgreplay.sh: replay the same PostgreSQL statement log with pgreplay and with
# `storbench replay`, interleaved, against the same database of a private PostgreSQL instance,
# and compare statements per second, CPU time per statement and lateness at speed 1.
#
# What it does, in order:
#  1. initdb a private instance in a temp dir (its own port and socket directory, run as the
#     postgres user), statement logging on as pgreplay needs it (log_line_prefix '%m|%u|%d|%c|',
#     log_statement = all, connections and disconnections logged, English messages).
#  2. pgbench -i, a template copy of the database, then two recordings by pgbench (simple query
#     protocol, so the log holds literal values): a select-only log (pgbench -S) and a write mix
#     (--mix: by default own-rows, pgbench's simple-update with each client on accounts of its
#     own; see below). Each log is the part of the server's log its run wrote.
#  3. At a high speed factor (--speed, logging off on the server): pgreplay -s X, storbench
#     --mode time-sync --speed X and storbench --mode fire-hose, interleaved, --runs times each:
#     statements/s (statements / wall time of the command) and CPU-us per statement (the
#     process's own user+sys from /usr/bin/time, divided by its statements).
#  4. At speed 1 (logging on again, as in the recording): pgreplay and storbench time-sync,
#     interleaved: each tool's own lateness figures, how long after the log's span each finished,
#     and one yardstick for both taken from the server's log (see "server lateness" below).
#  5. --big: a ~1 GB log made by repeating the select-only log at shifted times, replayed by
#     storbench fire-hose; peak RSS and RSS over the run, against the peak RSS on the small log.
# The write mix is restored before each replay (DROP DATABASE, CREATE DATABASE ... TEMPLATE).
# A run that takes longer than --timeout is killed and counted as hung: pgreplay's strict global
# order waits forever when two sessions' statements reach a row's lock in another order than
# the log's (the next statement in the log is of the session that waits; the one that would
# release the lock comes after it). pgbench's own write scripts pick rows at random, so two
# clients sometimes share one and pgreplay can hang on their log; own-rows gives each client
# its accounts so the two tools can be compared on writes (--mix simple-update or tpcb-like
# shows the hang).
#
# Usage: bench/replay-vs-pgreplay.sh [--runs N] [--record S] [--big] [--quick] ...
#        run with --help for the full list. Runs as root (it starts the instance with runuser).

set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# ---------------------------------------------------------------------------
# Defaults (overridable by options or environment)
# ---------------------------------------------------------------------------
RUNS=5              # high-speed runs per tool and log
PACED_RUNS=""       # speed-1 runs per tool and log (default: RUNS)
RECORD=30           # seconds of each pgbench recording
RATE=5000           # statements/s of each recording (pgbench -R; 0: as fast as it goes)
CLIENTS=8           # pgbench clients (sessions in the log)
SCALE=10            # pgbench scale (1M accounts at 10)
SPEED=1000          # the high speed factor for pgreplay -s and storbench --speed
MIX=own-rows        # the write log's script: own-rows, or a pgbench builtin (simple-update, ...)
LOGS="select,mix"   # which recordings to replay
PORT=55432
TIMEOUT=""          # seconds a single replay may take before it is stopped (60 + 6 x RECORD)
BIG=0
BIG_SIZE=1G
CSV=""              # empty: ${TMPDIR:-/tmp}/replay-vs-pgreplay-<stamp>.csv
PG_BIN=""           # empty: the newest /usr/lib/postgresql/*/bin
STORBENCH=${STORBENCH:-$SCRIPT_DIR/../target/release/storbench}
PGREPLAY=${PGREPLAY:-pgreplay}
PREFIX='%m|%u|%d|%c|'

usage() {
    cat <<EOF
Usage: $0 [options]

Starts a private PostgreSQL instance, records pgbench's statements in its log, and replays the
log with pgreplay and storbench, interleaved; prints median statements/s, CPU-us per statement
and lateness at speed 1 for each.

Options:
  --runs N        high-speed runs per tool and log (default $RUNS)
  --paced-runs N  speed-1 runs per tool and log (default: --runs; 0 skips speed 1)
  --record S      seconds of each pgbench recording (default $RECORD)
  --rate N        statements a second in each recording (default $RATE: pgbench -R N for the
                  select-only log, -R N/5 transactions for the write mix, 5 statements each);
                  0: as fast as pgbench goes (the tools then cannot keep up at speed 1)
  --clients N     pgbench clients, so sessions in the log (default $CLIENTS)
  --scale N       pgbench scale (default $SCALE)
  --speed X       the high speed factor (default $SPEED)
  --mix NAME      the write log's script (default $MIX: pgbench's simple-update, each client
                  on accounts of its own); or one of pgbench's builtins (simple-update,
                  tpcb-like), whose clients share rows, where pgreplay can hang
  --logs LIST     comma-separated subset of select,mix (default $LOGS)
  --port P        the private instance's port (default $PORT)
  --timeout S     a replay taking longer is stopped (default 60 + 6 x --record) and counted as
                  hung if a session of it was waiting for a lock, else as timed out
  --big           also make a ~--big-size log and replay it with storbench fire-hose,
                  reporting peak RSS (memory that stays flat however long the log)
  --big-size SIZE size of that log (default $BIG_SIZE; K, M, G suffixes)
  --big-only      only the --big part (records the select-only log, skips the comparison)
  --csv FILE      per-run CSV (default \${TMPDIR:-/tmp}/replay-vs-pgreplay-<time>.csv); each
                  tool's raw output is kept beside it in FILE's name with .raw
  --storbench P   storbench binary (default \$STORBENCH or $SCRIPT_DIR/../target/release/storbench)
  --pgreplay P    pgreplay binary (default \$PGREPLAY or pgreplay from PATH)
  --pg-bin DIR    PostgreSQL's server binaries (default: newest /usr/lib/postgresql/*/bin)
  --quick         smoke test: 2 runs, 1 paced run, 5 s recordings, scale 2
  -h, --help      this text

It takes about (logs x runs x 3 x replay time) + (logs x paced runs x 2 x --record) seconds,
plus the recordings; run it in the foreground on an otherwise quiet machine.
EOF
}

die() { echo "error: $*" >&2; exit 1; }
log() { echo "$*" >&2; }

BIG_ONLY=0
parse_args() {
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --runs)       RUNS=${2:?}; shift 2 ;;
            --paced-runs) PACED_RUNS=${2:?}; shift 2 ;;
            --record)     RECORD=${2:?}; shift 2 ;;
            --rate)       RATE=${2:?}; shift 2 ;;
            --clients)    CLIENTS=${2:?}; shift 2 ;;
            --scale)      SCALE=${2:?}; shift 2 ;;
            --speed)      SPEED=${2:?}; shift 2 ;;
            --mix)        MIX=${2:?}; shift 2 ;;
            --logs)       LOGS=${2:?}; shift 2 ;;
            --port)       PORT=${2:?}; shift 2 ;;
            --timeout)    TIMEOUT=${2:?}; shift 2 ;;
            --big)        BIG=1; shift ;;
            --big-size)   BIG_SIZE=${2:?}; shift 2 ;;
            --big-only)   BIG=1; BIG_ONLY=1; shift ;;
            --csv)        CSV=${2:?}; shift 2 ;;
            --storbench)  STORBENCH=${2:?}; shift 2 ;;
            --pgreplay)   PGREPLAY=${2:?}; shift 2 ;;
            --pg-bin)     PG_BIN=${2:?}; shift 2 ;;
            --quick)      RUNS=2; PACED_RUNS=1; RECORD=5; SCALE=2; RATE=2000; shift ;;
            -h|--help)    usage; exit 0 ;;
            *)            usage >&2; die "unknown option: $1" ;;
        esac
    done
    [[ -n $PACED_RUNS ]] || PACED_RUNS=$RUNS
    [[ -n $TIMEOUT ]] || TIMEOUT=$(( 60 + 6 * RECORD ))
    [[ $RATE =~ ^[0-9]+$ ]] || die "--rate must be a whole number"
    local n
    for n in RUNS RECORD CLIENTS SCALE PORT TIMEOUT; do
        [[ ${!n} =~ ^[1-9][0-9]*$ ]] || die "--${n,,} must be a positive integer"
    done
    [[ $PACED_RUNS =~ ^[0-9]+$ ]] || die "--paced-runs must be a whole number"
    [[ $SPEED =~ ^[0-9]+([.][0-9]+)?$ ]] || die "--speed must be a number"
    [[ $MIX =~ ^[a-z-]+$ ]] || die "--mix must name one of pgbench's builtin scripts"
    local l
    for l in ${LOGS//,/ }; do
        [[ $l == select || $l == mix ]] || die "unknown log '$l' (choose from select,mix)"
    done
    [[ $BIG_ONLY == 0 ]] || LOGS=select
}

# ---------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------
check_tools() {
    [[ $(id -u) == 0 ]] || die "run as root: the private instance is started as the postgres user with runuser"
    id postgres >/dev/null 2>&1 || die "no postgres user; install the server with: apt-get install -y postgresql"
    if [[ -z $PG_BIN ]]; then
        PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
    fi
    [[ -x $PG_BIN/initdb && -x $PG_BIN/pg_ctl && -x $PG_BIN/pgbench ]] ||
        die "PostgreSQL's initdb, pg_ctl and pgbench not found in '${PG_BIN:-/usr/lib/postgresql/*/bin}'; install them with: apt-get install -y postgresql (or pass --pg-bin DIR)"
    command -v psql >/dev/null 2>&1 || die "psql not found; install it with: apt-get install -y postgresql-client"
    if [[ $BIG_ONLY == 0 ]]; then
        command -v "$PGREPLAY" >/dev/null 2>&1 ||
            die "pgreplay not found ('$PGREPLAY'). Install it with: apt-get install -y pgreplay (or set PGREPLAY=/path/to/pgreplay)"
    fi
    [[ -x $STORBENCH ]] || STORBENCH=$(command -v "$STORBENCH" 2>/dev/null) ||
        die "storbench not found. Build it with: (cd $SCRIPT_DIR/.. && cargo build --release -p storbench), or pass --storbench PATH"
    command -v python3 >/dev/null 2>&1 || die "python3 is needed to parse the results"
    command -v timeout >/dev/null 2>&1 || die "timeout not found; install it with: apt-get install -y coreutils"
    # /usr/bin/time gives each tool's whole-process CPU time and peak RSS.
    [[ -x /usr/bin/time ]] || die "/usr/bin/time not found; install it with: apt-get install -y time"
}

# ---------------------------------------------------------------------------
# The private instance
# ---------------------------------------------------------------------------
WORK=""           # temp dir: the instance's data, its socket, the logs, storbench's bundles
STARTED=0
SAMPLER=""        # pid of the RSS sampler of the --big run, if running

as_postgres() { runuser -u postgres -- "$@"; }

cleanup() {
    local rc=$?
    [[ -z $SAMPLER ]] || kill "$SAMPLER" 2>/dev/null || true
    if [[ $STARTED == 1 ]]; then
        as_postgres "$PG_BIN/pg_ctl" -D "$WORK/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    [[ -z $WORK || ! -d $WORK ]] || rm -rf -- "$WORK"
    exit "$rc"
}

setup_dirs() {
    # On the real disk (not tmpfs): the instance and the logs live here.
    WORK=$(mktemp -d /var/tmp/replay-vs-pgreplay.XXXXXX)
    trap cleanup EXIT
    trap 'exit 130' INT TERM
    chown postgres: "$WORK"
    mkdir -p "$WORK/logs" "$WORK/sb-out" "$WORK/run"
    local stamp
    stamp=$(date +%Y%m%d-%H%M%S)
    [[ -n $CSV ]] || CSV=${TMPDIR:-/tmp}/replay-vs-pgreplay-$stamp.csv
    RAWDIR=${CSV%.csv}.raw
    mkdir -p "$RAWDIR"
    write_helper
}

# The server's log file (logging_collector writes it; one file, never rotated).
SERVER_LOG=""

start_instance() {
    log "== private instance: $PG_BIN, port $PORT, in $WORK"
    as_postgres "$PG_BIN/initdb" -D "$WORK/data" -A trust -U postgres -E UTF8 --locale=C --no-sync \
        >"$WORK/run/initdb.out" 2>&1 || { cat "$WORK/run/initdb.out" >&2; die "initdb failed"; }
    # Durability off: the replay tools are measured, not the disk (both tools alike).
    # Autovacuum off: no background work of the server's own between interleaved runs.
    cat >>"$WORK/data/postgresql.conf" <<EOF
port = $PORT
listen_addresses = '127.0.0.1'
unix_socket_directories = '$WORK'
max_connections = 200
fsync = off
synchronous_commit = off
full_page_writes = off
autovacuum = off
logging_collector = on
log_destination = 'stderr'
log_directory = 'log'
log_filename = 'postgresql.log'
log_rotation_age = 0
log_rotation_size = 0
log_line_prefix = '$PREFIX'
log_statement = 'all'
log_connections = on
log_disconnections = on
log_checkpoints = off
lc_messages = 'C'
EOF
    as_postgres "$PG_BIN/pg_ctl" -D "$WORK/data" -l "$WORK/pg_ctl.log" -w -t 60 start >/dev/null ||
        { cat "$WORK/pg_ctl.log" >&2; die "the private instance did not start"; }
    STARTED=1
    SERVER_LOG=$WORK/data/log/postgresql.log
}

URL_BASE=""       # postgres://postgres@127.0.0.1:PORT
sql() { psql "$URL_BASE/${DB:-postgres}" -XAtq -v ON_ERROR_STOP=1 "$@"; }

# Statement logging on (as in the recording) or off (high-speed runs: the tools, not the
# server's logging, should be what limits them).
server_logging() {
    local v=$1 stmt=none
    [[ $v == on ]] && stmt=all
    sql -c "ALTER SYSTEM SET log_statement = '$stmt'" -c "ALTER SYSTEM SET log_connections = $v" \
        -c "ALTER SYSTEM SET log_disconnections = $v" -c "SELECT pg_reload_conf()" >/dev/null
    sleep 0.5
}

log_size() { stat -c %s "$SERVER_LOG"; }

# cut_log FROM OUT: the server's log from byte FROM to now, into OUT (after the collector wrote it).
cut_log() {
    sleep 1
    tail -c +"$(( $1 + 1 ))" "$SERVER_LOG" >"$2"
}

# record NAME PGBENCH_ARGS...: a pgbench run's part of the server's log into $WORK/logs/NAME.log.
record() {
    local name=$1 tps=$2; shift 2
    local from
    local -a rate=()
    [[ $tps == 0 ]] || rate=(-R "$tps")
    from=$(log_size)
    log "== recording '$name': pgbench $* ${rate[*]} -c $CLIENTS -T $RECORD"
    PGHOST=$WORK PGPORT=$PORT PGUSER=postgres "$PG_BIN/pgbench" -n -M simple -c "$CLIENTS" \
        -j 2 -T "$RECORD" "${rate[@]}" "$@" bench >"$RAWDIR/record-$name.pgbench" 2>&1 ||
        { cat "$RAWDIR/record-$name.pgbench" >&2; die "pgbench failed"; }
    cut_log "$from" "$WORK/logs/$name.log"
    log "   $(grep -E '^tps' "$RAWDIR/record-$name.pgbench" | head -1)"
    log "   $(python3 "$HELPER" describe "$WORK/logs/$name.log")"
}

record_logs() {
    URL_BASE=postgres://postgres@127.0.0.1:$PORT
    sql -c "CREATE DATABASE bench"
    PGHOST=$WORK PGPORT=$PORT PGUSER=postgres "$PG_BIN/pgbench" -i -q -s "$SCALE" bench \
        >"$RAWDIR/init.pgbench" 2>&1 || { cat "$RAWDIR/init.pgbench" >&2; die "pgbench -i failed"; }
    sql -c "CHECKPOINT" -c "CREATE DATABASE bench_template TEMPLATE bench"
    # The select-only run changes no row, so the template is still the state before the mix.
    record select "$RATE" -S
    if [[ ,$LOGS, == *,mix,* ]]; then
        if [[ $MIX == own-rows ]]; then
            own_rows_script >"$WORK/own-rows.sql"
            record mix $(( RATE / 5 )) -f "$WORK/own-rows.sql" -D clients="$CLIENTS" -D scale="$SCALE"
        else
            record mix $(( RATE / 5 )) -b "$MIX"
        fi
    fi
}

# pgbench's simple-update, each client on a range of accounts of its own (client_id counts
# from 0), so no two sessions of the log wait for one another's locks.
own_rows_script() {
    cat <<'EOF'
\set width 100000 * :scale / :clients
\set aid :client_id * :width + random(1, :width)
\set bid random(1, :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
EOF
}

# The database back as it was before the recordings (for a log that writes).
reset_db() {
    sql -c "DROP DATABASE IF EXISTS bench WITH (FORCE)" -c "CREATE DATABASE bench TEMPLATE bench_template"
}

# ---------------------------------------------------------------------------
# One replay
# ---------------------------------------------------------------------------
SB_URL=""
storbench_cmd() {
    local logf=$1 mode=$2 speed=$3 out=$4
    local -a cmd=("$STORBENCH" replay "$logf" --format pg-stderr --log-line-prefix "$PREFIX"
        --url "$SB_URL" --json --output-dir "$WORK/sb-out")
    if [[ $mode == fire-hose ]]; then
        cmd+=(--mode fire-hose --in-flight "$CLIENTS")
    else
        cmd+=(--mode time-sync --speed "$speed" --in-flight "$CLIENTS")
    fi
    printf '%q ' "${cmd[@]}"
    printf '>%q' "$out"
}

pgreplay_cmd() {
    local logf=$1 speed=$2 out=$3
    local -a cmd=("$PGREPLAY" -h 127.0.0.1 -p "$PORT" -s "$speed" "$logf")
    printf '%q ' "${cmd[@]}"
    printf '>%q' "$out"
}

# run_one PHASE LOG TOOL RUN: one replay of $WORK/logs/LOG.log, measured, and a CSV row.
# TOOL: pgreplay, sb-time-sync or sb-fire-hose. PHASE: fast (--speed) or paced (speed 1).
run_one() {
    local phase=$1 name=$2 tool=$3 run=$4
    local logf=$WORK/logs/$name.log speed=$SPEED
    [[ $phase == paced ]] && speed=1
    local raw="$RAWDIR/$phase-$name-$run-$tool.out" err="$RAWDIR/$phase-$name-$run-$tool.stderr"
    local timef="$WORK/run/time" cmd
    case $tool in
        pgreplay)     cmd=$(pgreplay_cmd "$logf" "$speed" "$raw") ;;
        sb-time-sync) cmd=$(storbench_cmd "$logf" time-sync "$speed" "$raw") ;;
        sb-fire-hose) cmd=$(storbench_cmd "$logf" fire-hose "$speed" "$raw") ;;
    esac
    [[ $name == mix ]] && reset_db
    local from status=ok rc=0 c0 c1 s0 s1 watch
    from=$(log_size)
    lock_watch & watch=$!
    c0=$(busy_ticks); s0=$(server_ticks)
    # timeout inside /usr/bin/time: its rusage covers the tool (a waited-for grandchild).
    (cd "$WORK" && /usr/bin/time -f "%e %U %S %M" -o "$timef" \
        timeout -k 10 "$TIMEOUT" bash -c "$cmd") 2>"$err" || rc=$?
    s1=$(server_ticks); c1=$(busy_ticks)
    kill "$watch" 2>/dev/null || true
    wait "$watch" 2>/dev/null || true
    if [[ $rc == 124 || $rc == 137 ]]; then
        if [[ -s $WORK/run/lock-waits ]]; then
            status=hung
            log "!! $tool hung on $name run $run: stopped after ${TIMEOUT}s with sessions waiting for locks ($(cat "$WORK/run/lock-waits"))"
        else
            status=timeout
            log "!! $tool had not finished $name run $run after ${TIMEOUT}s (no session waiting for a lock); stopped"
        fi
    elif [[ $rc != 0 ]]; then
        status=failed
        log "!! $tool failed on $name run $run (exit $rc). Command:"
        log "   $cmd"
        sed 's/^/   | /' "$err" | tail -20 >&2
    fi
    local served=""
    if [[ $phase == paced ]]; then
        served=$WORK/run/served.log
        cut_log "$from" "$served"
    fi
    python3 "$HELPER" record --csv "$CSV" --phase "$phase" --log "$name" --run "$run" \
        --tool "$tool" --status "$status" --out "$raw" --time "$(tail -1 "$timef" 2>/dev/null || true)" \
        --speed "$speed" --recorded "$logf" --served "$served" \
        --busy "$(( c1 - c0 ))" --server "$(( s1 - s0 ))" --hz "$(getconf CLK_TCK)"
    rm -f "$WORK/run/served.log" "$WORK/run/lock-waits"
    rm -rf "${WORK:?}/sb-out/"*
}

# Busy CPU ticks of the whole machine so far (from /proc/stat).
busy_ticks() {
    local _c user nice sys _idle _iowait irq softirq _rest
    read -r _c user nice sys _idle _iowait irq softirq _rest </proc/stat
    echo $(( user + nice + sys + irq + softirq ))
}

# CPU ticks of the private server so far: the postmaster, its children that exited (reaped)
# and those still running. A run's share is the difference; what the machine was busy with
# beyond the tool and the server is foreign work (another session's build, say).
server_ticks() {
    local pm total c t
    pm=$(head -1 "$WORK/data/postmaster.pid")
    total=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$pm/stat")
    for c in $(cat "/proc/$pm/task/$pm/children" 2>/dev/null); do
        t=$(awk '{print $14 + $15}' "/proc/$c/stat" 2>/dev/null || echo 0)
        total=$(( total + ${t:-0} ))
    done
    echo "$total"
}

# Sessions of the database waiting for a lock, asked twice 2 s apart just before --timeout
# stops a run; a session waiting both times is written to run/lock-waits (a hang, not slowness).
lock_watch() {
    local q="SELECT string_agg(pid::text, ',' ORDER BY pid) FROM pg_stat_activity WHERE datname = 'bench' AND wait_event_type = 'Lock'"
    local i first second
    # One second at a time: a run that ends kills this watch, and leaves no long sleep behind.
    for (( i = 0; i < TIMEOUT - 4; i++ )); do sleep 1; done
    first=$(sql -c "$q" 2>/dev/null || true)
    sleep 2
    second=$(sql -c "$q" 2>/dev/null || true)
    [[ -z $first || $first != "$second" ]] || echo "pids $first" >"$WORK/run/lock-waits"
}

compare_fast() {
    server_logging off
    local name run
    for name in ${LOGS//,/ }; do
        echo "== $name log at speed $SPEED: $RUNS runs each, interleaved"
        echo "   pgreplay:  $(pgreplay_cmd "$WORK/logs/$name.log" "$SPEED" OUT)"
        echo "   storbench: $(storbench_cmd "$WORK/logs/$name.log" time-sync "$SPEED" OUT)"
        echo "   storbench: $(storbench_cmd "$WORK/logs/$name.log" fire-hose "$SPEED" OUT)"
        for (( run = 1; run <= RUNS; run++ )); do
            run_one fast "$name" pgreplay "$run"
            run_one fast "$name" sb-time-sync "$run"
            run_one fast "$name" sb-fire-hose "$run"
        done
        echo
    done
}

compare_paced() {
    [[ $PACED_RUNS -gt 0 ]] || return 0
    # Logging on as in the recording: the server's log gives one lateness yardstick for both.
    server_logging on
    local name run
    for name in ${LOGS//,/ }; do
        echo "== $name log at speed 1: $PACED_RUNS runs each, interleaved"
        echo "   pgreplay:  $(pgreplay_cmd "$WORK/logs/$name.log" 1 OUT)"
        echo "   storbench: $(storbench_cmd "$WORK/logs/$name.log" time-sync 1 OUT)"
        for (( run = 1; run <= PACED_RUNS; run++ )); do
            run_one paced "$name" pgreplay "$run"
            run_one paced "$name" sb-time-sync "$run"
        done
        echo
    done
    server_logging off
}

# ---------------------------------------------------------------------------
# --big: a ~1 GB log, storbench fire-hose, peak RSS and RSS over the run
# ---------------------------------------------------------------------------
big_run() {
    server_logging off
    local big=$WORK/logs/big.log
    log "== making a $BIG_SIZE log from the select-only log (shifted times, new sessions)"
    python3 "$HELPER" biglog "$WORK/logs/select.log" "$big" "$BIG_SIZE"
    log "   $(python3 "$HELPER" describe "$big")"
    local raw="$RAWDIR/big-fire-hose.out" timef="$WORK/run/time" rss="$RAWDIR/big-rss.txt"
    local cmd
    cmd=$(storbench_cmd "$big" fire-hose "$SPEED" "$raw")
    echo "== big log: storbench fire-hose"
    echo "   $cmd"
    (cd "$WORK" && exec /usr/bin/time -f "%e %U %S %M" -o "$timef" "$STORBENCH" replay "$big" \
        --format pg-stderr --log-line-prefix "$PREFIX" --url "$SB_URL" --json \
        --output-dir "$WORK/sb-out" --mode fire-hose --in-flight "$CLIENTS" \
        >"$raw" 2>"$RAWDIR/big-fire-hose.stderr") &
    local timer=$! pid=""
    # storbench is /usr/bin/time's only child; sample its resident memory every 2 s.
    for _ in $(seq 1 50); do
        pid=$(cat "/proc/$timer/task/$timer/children" 2>/dev/null | awk '{print $1}')
        [[ -n $pid ]] && break
        sleep 0.1
    done
    : >"$rss"
    if [[ -n $pid ]]; then
        ( while [[ -r /proc/$pid/status ]]; do
              awk -v t="$(date +%s.%N)" '/^VmRSS/ {print t, $2}' "/proc/$pid/status" 2>/dev/null || true
              sleep 2
          done >>"$rss" ) &
        SAMPLER=$!
    fi
    local rc=0
    wait "$timer" || rc=$?
    [[ -z $SAMPLER ]] || { kill "$SAMPLER" 2>/dev/null || true; wait "$SAMPLER" 2>/dev/null || true; }
    SAMPLER=""
    [[ $rc == 0 ]] || { tail -20 "$RAWDIR/big-fire-hose.stderr" >&2; die "the big replay failed (exit $rc)"; }
    python3 "$HELPER" record --csv "$CSV" --phase big --log big --run 1 --tool sb-fire-hose \
        --status ok --out "$raw" --time "$(tail -1 "$timef")" --speed "$SPEED" --recorded "$big" \
        --served ""
    python3 "$HELPER" rss "$rss"
    rm -f "$big"
}

# ---------------------------------------------------------------------------
# Python helper: logs, per-run CSV rows, the tables. The bash above only does the plumbing.
# ---------------------------------------------------------------------------
HELPER=""
write_helper() {
    HELPER=$WORK/helper.py
    cat >"$HELPER" <<'PYEOF'
import csv, functools, json, os, re, statistics, sys, time
from datetime import datetime, timezone

FIELDS = ["phase", "log", "run", "tool", "status", "statements", "errors", "wall_s", "own_s",
          "stmt_per_s", "cpu_s", "cpu_us_per_stmt", "maxrss_kb", "late_p50_ms", "late_p99_ms",
          "late_max_ms", "pgreplay_max_lag_s", "behind_s", "srv_late_p50_ms", "srv_late_p99_ms",
          "srv_late_max_ms", "srv_matched", "server_cpu_s", "foreign_cpu_cores", "noisy", "note"]

# A run during which the rest of the machine (not the tool, not the private server) kept more
# than this many cores busy is marked noisy: another session's build, say.
MAX_FOREIGN_CORES = 0.2

# A stderr line with log_line_prefix '%m|%u|%d|%c|': time, user, database, session, message.
LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) (\S+)\|([^|]*)\|([^|]*)\|([^|]*)\|(.*)$")

@functools.lru_cache(maxsize=4096)
def whole_second(stamp):
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S").replace(tzinfo=timezone.utc).timestamp()

def epoch(stamp):
    """'2026-11-26 10:35:49.796' (UTC, as %m writes it here) in seconds; parsed once a second."""
    return whole_second(stamp[:19]) + int(stamp[20:23]) / 1000

def lines(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        for text in f:
            m = LINE.match(text)
            if m:
                yield m

def statements(path):
    """(time, session, SQL) of every 'statement:' line."""
    for m in lines(path):
        msg = m.group(6)
        if msg.startswith("LOG:  statement: "):
            yield epoch(m.group(1)), m.group(5), msg[len("LOG:  statement: "):]

def spans(path):
    """The log's span from its first to its last statement (what storbench's schedule
    covers) and from its first to its last connection, statement or disconnection (what
    pgreplay's covers)."""
    st, items = [], []
    for m in lines(path):
        msg = m.group(6)
        if msg.startswith("LOG:  statement: "):
            st.append(epoch(m.group(1)))
        if msg.startswith(("LOG:  statement: ", "LOG:  connection authorized: ", "LOG:  disconnection: ")):
            items.append(epoch(m.group(1)))
    return (st[-1] - st[0] if st else 0.0), (items[-1] - items[0] if items else 0.0), len(st)

def describe(path):
    s, items, n = spans(path)
    sessions = {m.group(5) for m in lines(path) if m.group(6).startswith("LOG:  statement: ")}
    size = os.path.getsize(path)
    print(f"{os.path.basename(path)}: {n:,} statements in {len(sessions)} sessions over {s:.1f} s, "
          f"{size / 1e6:,.1f} MB")

def quantiles(values):
    if not values:
        return None
    v = sorted(values)
    q = lambda p: v[min(len(v) - 1, int(p * len(v)))]
    return q(0.5), q(0.99), v[-1]

def served_lateness(recorded, served):
    """One lateness yardstick for both tools, from the server's own log: each statement whose
    text is unique in the recorded log and in the replay's part of the server log is matched;
    its delay = (time the server logged it in the replay) - (time in the recording); lateness =
    delay - the smallest delay (the replay's start offset). Millisecond resolution (%m)."""
    def unique(path):
        seen, dup = {}, set()
        for t, _s, sql in statements(path):
            if sql in seen:
                dup.add(sql)
            seen[sql] = t
        return {k: v for k, v in seen.items() if k not in dup}
    a, b = unique(recorded), unique(served)
    delays = [b[k] - a[k] for k in a.keys() & b.keys()]
    if not delays:
        return None, 0
    base = min(delays)
    return quantiles([(d - base) * 1000 for d in delays]), len(delays)

def from_storbench(path):
    d = json.load(open(path))
    r = d["results"]
    late = r.get("lateness_ms") or {}
    notes = []
    if r.get("unread_lines"):
        notes.append(f"{r['unread_lines']} unread lines")
    if not d.get("complete", True):
        notes.append("incomplete")
    return dict(statements=r["calls"], errors=r["errors"]["total"], own_s=r["elapsed_s"],
                late=(late.get("p50"), late.get("p99"), late.get("max")), lag=None,
                note=" | ".join(notes))

def from_pgreplay(path):
    text = open(path, errors="replace").read()
    def num(pattern):
        m = re.search(pattern, text)
        return float(m.group(1)) if m else None
    m = re.search(r"Total run time:((?: \d+ hours)?(?: \d+ minutes)? [\d.]+ seconds)", text)
    own = None
    if m:
        own = 0.0
        for n, unit in re.findall(r"([\d.]+) (hours|minutes|seconds)", m.group(1)):
            own += float(n) * {"hours": 3600, "minutes": 60, "seconds": 1}[unit]
    stmts = num(r"SQL statements executed: (\d+)")
    if stmts is None:
        raise ValueError("no 'SQL statements executed' in pgreplay's output")
    behind = re.findall(r"Execution is (.+) behind schedule", text)
    return dict(statements=int(stmts), errors=int(num(r"\((\d+) or [\d.]+% of these completed with error\)") or 0),
                own_s=own, late=(None, None, None), lag=num(r"Maximum lag behind schedule: (\d+) seconds"),
                note=("said: behind schedule by " + ", ".join(behind)) if behind else "")

def opt(args, name, default=""):
    return args[args.index(name) + 1] if name in args else default

def record(args):
    a = {k: opt(args, "--" + k) for k in
         ["csv", "phase", "log", "run", "tool", "status", "out", "time", "speed", "recorded", "served",
          "busy", "server", "hz"]}
    row = dict.fromkeys(FIELDS, "")
    row.update(phase=a["phase"], log=a["log"], run=a["run"], tool=a["tool"], status=a["status"])
    t = a["time"].split()
    if len(t) == 4:
        wall, user, sys_, rss = float(t[0]), float(t[1]), float(t[2]), int(t[3])
        row.update(wall_s=wall, cpu_s=user + sys_, maxrss_kb=rss)
        # A run stopped by --timeout has no CPU figure of the tool's (it was killed unwaited).
        if a["status"] == "ok" and a["busy"] and a["server"] and a["hz"]:
            hz = float(a["hz"])
            row["server_cpu_s"] = float(a["server"]) / hz
            foreign = (float(a["busy"]) / hz - row["cpu_s"] - row["server_cpu_s"]) / wall if wall else 0.0
            row["foreign_cpu_cores"] = max(0.0, foreign)
            row["noisy"] = "cpu" if foreign > MAX_FOREIGN_CORES else ""
    m = None
    if a["status"] == "ok":
        try:
            m = (from_pgreplay if a["tool"] == "pgreplay" else from_storbench)(a["out"])
        except Exception as e:
            row["status"] = "failed"
            row["note"] = f"cannot read {a['out']}: {e}"
    if m is not None:
        row.update(statements=m["statements"], errors=m["errors"], own_s=m["own_s"], note=m["note"])
        if m["statements"] and row["wall_s"] != "":
            row["stmt_per_s"] = m["statements"] / row["wall_s"]
            row["cpu_us_per_stmt"] = row["cpu_s"] / m["statements"] * 1e6
        row["late_p50_ms"], row["late_p99_ms"], row["late_max_ms"] = ("" if x is None else x for x in m["late"])
        row["pgreplay_max_lag_s"] = "" if m["lag"] is None else m["lag"]
        if a["phase"] == "paced" and m["own_s"] is not None:
            st_span, item_span, _ = spans(a["recorded"])
            span = item_span if a["tool"] == "pgreplay" else st_span
            row["behind_s"] = m["own_s"] - span / float(a["speed"])
        if a["served"]:
            q, n = served_lateness(a["recorded"], a["served"])
            row["srv_matched"] = n
            if q:
                row["srv_late_p50_ms"], row["srv_late_p99_ms"], row["srv_late_max_ms"] = q
    new = not os.path.exists(a["csv"]) or os.path.getsize(a["csv"]) == 0
    with open(a["csv"], "a", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        if new:
            w.writeheader()
        w.writerow({k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()})
    if m is None:
        print(f"  {a['phase']:<5} {a['log']:<6} run {a['run']:>2} {a['tool']:<12} {row['status'].upper()}"
              + (f"  [{row['note']}]" if row["note"] else ""), flush=True)
        return
    line = (f"  {a['phase']:<5} {a['log']:<6} run {a['run']:>2} {a['tool']:<12} {m['statements']:>9,} stmts "
            f"{m['errors']:>3} err  {row['stmt_per_s']:>9,.0f} stmt/s  {row['cpu_us_per_stmt']:>6.1f} CPU-us/stmt  "
            f"RSS {row['maxrss_kb'] / 1024:>6.1f} MB")
    if row["foreign_cpu_cores"] != "":
        line += f"  foreign cpu {row['foreign_cpu_cores']:.2f}" + ("  NOISY" if row["noisy"] else "")
    if a["phase"] == "paced":
        line += f"  behind {row['behind_s']:+.3f} s"
        if m["late"][0] is not None:
            line += "  late p50/p99/max {:.2f}/{:.2f}/{:.2f} ms".format(*m["late"])
        if m["lag"] is not None:
            line += f"  max lag {m['lag']:.0f} s"
        if row["srv_late_p50_ms"] != "":
            line += "  server-seen p50/p99/max {:.0f}/{:.0f}/{:.0f} ms".format(
                row["srv_late_p50_ms"], row["srv_late_p99_ms"], row["srv_late_max_ms"])
    print(line + (f"  [{row['note']}]" if row["note"] else ""), flush=True)

def values(rows, key):
    return [float(r[key]) for r in rows if r["status"] == "ok" and r[key] != ""]

def med(rows, key):
    v = values(rows, key)
    return statistics.median(v) if v else None

def f(x, spec):
    return "-" if x is None else format(x, spec)

TOOLS = [("pgreplay", "pgreplay -s X"), ("sb-time-sync", "storbench time-sync"),
         ("sb-fire-hose", "storbench fire-hose")]

def groups(rows):
    """(log, tool's label, its rows, 'ok/runs', what went wrong) for each log and tool, in order."""
    for log in dict.fromkeys(r["log"] for r in rows):
        for tool, label in TOOLS:
            tr = [r for r in rows if r["log"] == log and r["tool"] == tool]
            if not tr:
                continue
            ok = sum(1 for r in tr if r["status"] == "ok")
            bad = "".join(f"  ({n} {s})" for s in ("hung", "timeout", "failed")
                          if (n := sum(1 for r in tr if r["status"] == s)))
            yield log, label, tr, f"{ok:>3}/{len(tr):<3}", bad

def fast_table(rows, title):
    print(f"== high speed factor{title}: medians (statements/s: statements / wall time of the command; "
          "CPU-us: the process's user+sys / statements; foreign: cores busy with neither tool nor server)")
    hdr = (f"{'log':<7} {'tool':<20} {'ok/runs':>7} {'statements':>10} {'errors':>6} {'stmt/s':>9} "
           f"{'range':>15} {'CPU-us/stmt':>11} {'peak RSS MB':>11} {'foreign':>7}")
    print(hdr)
    print("-" * len(hdr))
    for log, label, tr, runs, bad in groups(rows):
        rate = values(tr, "stmt_per_s")
        rng = f"{min(rate):,.0f}-{max(rate):,.0f}" if rate else "-"
        rss = med(tr, "maxrss_kb")
        print(f"{log:<7} {label:<20} {runs} {f(med(tr, 'statements'), ',.0f'):>10} "
              f"{f(med(tr, 'errors'), '.0f'):>6} {f(med(tr, 'stmt_per_s'), ',.0f'):>9} {rng:>15} "
              f"{f(med(tr, 'cpu_us_per_stmt'), '.1f'):>11} {f(rss and rss / 1024, '.1f'):>11} "
              f"{f(med(tr, 'foreign_cpu_cores'), '.2f'):>7}{bad}")
    print()

def paced_table(rows, title):
    print(f"== speed 1{title}: medians over runs (max: the largest over runs)")
    print("   behind: the tool's own run time minus the log's span (how late it finished)")
    print("   own lateness: storbench's lateness_ms (start - intended start, every statement);")
    print("     pgreplay's 'Maximum lag behind schedule' (whole seconds, sampled as it sends)")
    print("   server-seen: the same yardstick for both, from the server's log (ms resolution):")
    print("     time the server got each statement minus its time in the recording, less the smallest")
    hdr = (f"{'log':<7} {'tool':<20} {'ok/runs':>7} {'behind s':>9} {'own p50 ms':>10} {'own p99 ms':>10} "
           f"{'own max ms':>10} {'pgr lag s (max)':>15} {'srv p50 ms':>10} {'srv p99 ms':>10} "
           f"{'srv max ms (max)':>16} {'CPU-us/stmt':>11}")
    print(hdr)
    print("-" * len(hdr))
    for log, label, tr, runs, bad in groups(rows):
        lag = values(tr, "pgreplay_max_lag_s")
        smax = values(tr, "srv_late_max_ms")
        print(f"{log:<7} {label.replace(' -s X', ' -s 1'):<20} {runs} "
              f"{f(med(tr, 'behind_s'), '+.3f'):>9} {f(med(tr, 'late_p50_ms'), '.2f'):>10} "
              f"{f(med(tr, 'late_p99_ms'), '.2f'):>10} {f(med(tr, 'late_max_ms'), '.1f'):>10} "
              f"{(f'{statistics.median(lag):.0f} ({max(lag):.0f})' if lag else '-'):>15} "
              f"{f(med(tr, 'srv_late_p50_ms'), '.0f'):>10} {f(med(tr, 'srv_late_p99_ms'), '.0f'):>10} "
              f"{(f'{statistics.median(smax):.0f} ({max(smax):.0f})' if smax else '-'):>16} "
              f"{f(med(tr, 'cpu_us_per_stmt'), '.1f'):>11}{bad}")
    print()

def big_table(rows, fast):
    for r in rows:
        small = [x for x in fast if x["log"] == "select" and x["tool"] == "sb-fire-hose"]
        print("== big log: storbench fire-hose")
        print(f"   {int(r['statements']):,} statements, {r['errors']} errors, {float(r['stmt_per_s']):,.0f} stmt/s, "
              f"{float(r['cpu_us_per_stmt']):.1f} CPU-us/stmt, peak RSS {int(r['maxrss_kb']) / 1024:.1f} MB"
              + (f" (select-only log: peak RSS {med(small, 'maxrss_kb') / 1024:.1f} MB, median)" if small else ""))
    print()

def summary(args):
    rows = list(csv.DictReader(open(args[0])))
    fast = [r for r in rows if r["phase"] == "fast"]
    paced = [r for r in rows if r["phase"] == "paced"]
    big = [r for r in rows if r["phase"] == "big"]
    noisy = any(r["noisy"] for r in fast + paced)
    for table, part in ((fast_table, fast), (paced_table, paced)):
        if part:
            table(part, "")
            clean = [r for r in part if not r["noisy"]]
            if noisy and clean and len(clean) < len(part):
                table(clean, f", noisy runs left out (foreign CPU > {MAX_FOREIGN_CORES} core)")
            elif noisy and not clean:
                print(f"   (every run was noisy: foreign CPU > {MAX_FOREIGN_CORES} core)\n")
    if big:
        big_table(big, fast)

def parse_size(s):
    m = re.fullmatch(r"(\d+)([KMGT]?)(i?B)?", s.strip(), re.I)
    if not m:
        sys.exit(f"bad size {s}")
    return int(m.group(1)) * 1024 ** " KMGT".index((m.group(2) or " ").upper())

# storbench takes a session as ended (and closes its connection) once the log has not named it
# for 5 minutes of log time; it does not read the log's disconnections. Copies of the log closer
# than that would keep every copy's sessions connected at once, past max_connections.
SESSION_IDLE_END_MS = 300_000

def biglog(args):
    """SRC repeated into DST until it holds SIZE bytes: copy k shifted by k x (span + 5 min +
    1 s), its sessions renamed (the %c's start-time part plus k x 2^32, still hex), so each
    copy's sessions are new ones, opened and ended as a real day's sessions are."""
    src, dst, size = args[0], args[1], parse_size(args[2])
    rows = []
    for m in lines(src):
        a, _, b = m.group(5).partition(".")
        ms = round(epoch(m.group(1)) * 1000)
        rows.append((ms, m.group(2), f"|{m.group(3)}|{m.group(4)}|", int(a, 16) if a else None, b, f"|{m.group(6)}\n"))
    if not rows:
        sys.exit(f"{src}: no log lines")
    period = rows[-1][0] - rows[0][0] + SESSION_IDLE_END_MS + 1000
    seconds = {}
    def stamp(ms):
        s = ms // 1000
        t = seconds.get(s)
        if t is None:
            t = seconds[s] = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(s))
        return f"{t}.{ms % 1000:03d}"
    written, k = 0, 0
    with open(dst, "w", buffering=1 << 20) as out:
        while written < size:
            shift = k * period
            part = []
            for ms, zone, mid, a, b, rest in rows:
                session = f"{a + (k << 32):x}.{b}" if a is not None else ""
                part.append(f"{stamp(ms + shift)} {zone}{mid}{session}{rest}")
            chunk = "".join(part)
            out.write(chunk)
            written += len(chunk.encode())
            k += 1
    seconds.clear()

def rss(args):
    samples = [tuple(map(float, l.split())) for l in open(args[0]) if len(l.split()) == 2]
    if not samples:
        print("   (no RSS samples)")
        return
    t0 = samples[0][0]
    picks = [samples[min(len(samples) - 1, int(p * (len(samples) - 1)))] for p in (0, 0.25, 0.5, 0.75, 1)]
    print("   RSS over the run (VmRSS every 2 s): " + ", ".join(
        f"{t - t0:.0f} s {kb / 1024:.1f} MB" for t, kb in picks)
        + f"; largest sample {max(kb for _, kb in samples) / 1024:.1f} MB of {len(samples)}")

cmd, rest = sys.argv[1], sys.argv[2:]
{"describe": lambda r: describe(r[0]), "record": record, "summary": summary, "biglog": biglog,
 "rss": rss}[cmd](rest)
PYEOF
}

print_machine() {
    echo "== machine"
    echo "cpu:        $(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -1) ($(nproc) cores online)"
    echo "memory:     $(awk '/^MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
    echo "kernel:     $(uname -r)"
    echo "work dir:   $WORK ($(findmnt -n -o SOURCE,FSTYPE -T "$WORK" 2>/dev/null | head -1))"
    echo "postgres:   $("$PG_BIN/postgres" --version) ($PG_BIN)"
    [[ $BIG_ONLY == 1 ]] || echo "pgreplay:   $("$PGREPLAY" -v 2>&1 | head -1) ($(command -v "$PGREPLAY"))"
    echo "storbench:  $("$STORBENCH" --version 2>&1 | head -1) ($STORBENCH)"
    echo "load avg:   $(cut -d' ' -f1-3 /proc/loadavg) at start"
    echo "settings:   runs=$RUNS paced-runs=$PACED_RUNS record=${RECORD}s clients=$CLIENTS scale=$SCALE speed=$SPEED mix=$MIX logs=$LOGS big=$BIG"
    echo "csv:        $CSV"
    echo
}

main() {
    parse_args "$@"
    check_tools
    setup_dirs
    start_instance
    print_machine
    record_logs
    SB_URL=$URL_BASE/bench
    if [[ $BIG_ONLY == 0 ]]; then
        compare_fast
        compare_paced
    fi
    [[ $BIG == 0 ]] || big_run
    python3 "$HELPER" summary "$CSV" | tee "${CSV%.csv}.summary.txt"
    echo "per-run numbers: $CSV"
    echo "raw output:      $RAWDIR/"
}

main "$@"
