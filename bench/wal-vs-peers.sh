#!/usr/bin/env bash
# wal-vs-peers.sh: the commit path measured by PostgreSQL's pg_test_fsync, by fio and by
# `storbench wal` on the same directory, interleaved (pg_test_fsync, then each method by fio and
# by storbench, N times), with the medians of each method's commits a second and the tools'
# CPU per commit.
#
# What is compared: pg_test_fsync's "one 8kB write" section (each method, one write per sync,
# over a 16 MB file it writes first) against `storbench wal --bs 8k --writers 1` on a
# preallocated 16 MiB file. pg_test_fsync opens open_datasync and open_sync with O_DIRECT where
# the platform has it, so its open_datasync is storbench's open_direct_datasync; its open_sync
# is O_DIRECT|O_SYNC, which storbench does not have (storbench's open_sync is buffered): that
# row is shown for both but is not the same test.
#
# fio runs each method as a job of sequential 8k writes over a 16 MiB file it lays out first,
# psync: fdatasync is --fdatasync=1, fsync --fsync=1, open_direct_datasync --direct=1
# --sync=dsync, open_sync --sync=sync; one commit is one write and its sync. Its CPU per commit
# is its job's usr_cpu and sys_cpu (percent of the job's runtime) over its writes.
#
# CPU: storbench's own user and system CPU over the measured phase per commit (summary cpu).
# pg_test_fsync runs all its tests (synced and not) in one process and reports no CPU, so its
# CPU per operation cannot be told apart per method; its whole run's user and system seconds
# are printed beside, for scale.
#
# Usage: bench/wal-vs-peers.sh [--runs N] [--seconds S] [--dir DIR]

set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUNS=5
SECONDS_PER_TEST=5
DIR=""
STORBENCH=${STORBENCH:-$SCRIPT_DIR/../target/release/storbench}
PG_TEST_FSYNC=${PG_TEST_FSYNC:-$(ls /usr/lib/postgresql/*/bin/pg_test_fsync 2>/dev/null | sort -V | tail -1)}

while [ $# -gt 0 ]; do
    case "$1" in
        --runs) RUNS=$2; shift 2 ;;
        --seconds) SECONDS_PER_TEST=$2; shift 2 ;;
        --dir) DIR=$2; shift 2 ;;
        -h|--help) sed -n 2,27p "$0"; exit 0 ;;
        *) echo "unknown option $1; see --help" >&2; exit 2 ;;
    esac
done

[ -x "$STORBENCH" ] || { echo "no storbench at $STORBENCH: cargo build --release" >&2; exit 2; }
[ -x "$PG_TEST_FSYNC" ] || { echo "no pg_test_fsync: apt-get install postgresql (or set PG_TEST_FSYNC)" >&2; exit 2; }
command -v fio > /dev/null || { echo "no fio: apt-get install fio" >&2; exit 2; }
if [ -z "$DIR" ]; then
    DIR=$(mktemp -d /var/tmp/wal-vs-pgtf.XXXXXX)
    trap 'rm -rf "$DIR"' EXIT
fi
OUT=$(mktemp -d /var/tmp/wal-vs-pgtf-out.XXXXXX)
trap 'rm -rf "$OUT"; [ -n "${DIR:-}" ] && rm -f "$DIR"/pgtf.out' EXIT

METHODS="fdatasync fsync open_direct_datasync open_sync"
ROWS="$OUT/rows.tsv"
: > "$ROWS"

for run in $(seq 1 "$RUNS"); do
    echo "run $run/$RUNS: pg_test_fsync" >&2
    TIMEFORMAT='%U %S'
    { time "$PG_TEST_FSYNC" -f "$DIR/pgtf.out" -s "$SECONDS_PER_TEST" > "$OUT/pg.txt" 2>&1; } 2> "$OUT/pg.time"
    python3 - "$OUT/pg.txt" "$OUT/pg.time" "$SECONDS_PER_TEST" "$run" >> "$ROWS" <<'PY'
import re, sys
text, cpu, secs, run = open(sys.argv[1]).read(), open(sys.argv[2]).read().split(), float(sys.argv[3]), sys.argv[4]
user_s, sys_s = float(cpu[0]), float(cpu[1])
section = text.split("Compare file sync methods using one 8kB write:")[1].split("Compare file sync methods using two")[0]
names = {"open_datasync": "open_direct_datasync", "fdatasync": "fdatasync", "fsync": "fsync", "open_sync": "open_sync"}
for line in section.splitlines():
    m = re.match(r"\s+(\w+)\s+([\d.]+) ops/sec\s+(\d+) usecs/op", line)
    if m and m.group(1) in names:
        print(f"pg_test_fsync\t{names[m.group(1)]}\t{run}\t{m.group(2)}\t{m.group(3)}\t{user_s:.3f}\t{sys_s:.3f}")
PY
    for m in $METHODS; do
        echo "run $run/$RUNS: fio $m" >&2
        case "$m" in
            fdatasync) SYNC="--fdatasync=1" ;;
            fsync) SYNC="--fsync=1" ;;
            open_direct_datasync) SYNC="--direct=1 --sync=dsync" ;;
            open_sync) SYNC="--sync=sync" ;;
        esac
        # shellcheck disable=SC2086
        fio --name=wal --filename="$DIR/fio.log" --rw=write --bs=8k --size=16m --ioengine=psync \
            $SYNC --time_based --ramp_time=1 --runtime="$SECONDS_PER_TEST" --output-format=json \
            > "$OUT/fio.json" 2> /dev/null || true
        rm -f "$DIR/fio.log"
        python3 - "$OUT/fio.json" "$m" "$run" >> "$ROWS" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
n = max(j["write"]["total_ios"], 1)
run_us = j["job_runtime"] * 1e3
user_us, sys_us = j["usr_cpu"] / 100 * run_us / n, j["sys_cpu"] / 100 * run_us / n
sync = j.get("sync", {}).get("lat_ns", {}).get("mean", 0) / 1e3
p50_us = j["write"]["clat_ns"]["percentile"]["50.000000"] / 1e3 + sync
print(f"fio\t{sys.argv[2]}\t{sys.argv[3]}\t{j['write']['iops']:.1f}\t{p50_us:.0f}\t{user_us:.2f}\t{sys_us:.2f}")
PY
        echo "run $run/$RUNS: storbench wal $m" >&2
        "$STORBENCH" wal --target "$DIR" --sync-method "$m" --bs 8k --writers 1 --ramp 1s \
            --runtime "${SECONDS_PER_TEST}s" --output-dir "$OUT/results" --power none --json \
            > "$OUT/sb.json" 2> /dev/null || true
        python3 - "$OUT/sb.json" "$m" "$run" >> "$ROWS" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
r = s["results"]
p50_us = r["commit_lat_ns"]["p50"] / 1e3 if r.get("commit_lat_ns") else float("nan")
n = max(r["commits"], 1)
user_us, sys_us = s["cpu"]["user_s"] * 1e6 / n, s["cpu"]["sys_s"] * 1e6 / n
print(f"storbench\t{sys.argv[2]}\t{sys.argv[3]}\t{r['commits_per_sec']:.1f}\t{p50_us:.0f}\t{user_us:.2f}\t{sys_us:.2f}")
PY
    done
done

python3 - "$ROWS" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
def med(tool, method, col):
    v = [float(r[col]) for r in rows if r[0] == tool and r[1] == method]
    return statistics.median(v) if v else float("nan")
print(f"{'method':22} {'pg ops/s':>9} {'fio ops/s':>10} {'sb commits/s':>13} {'sb/pg':>6} {'sb/fio':>7} "
      f"{'fio user/sys CPU-us':>20} {'sb user/sys CPU-us':>19}")
for m in ["fdatasync", "fsync", "open_direct_datasync", "open_sync"]:
    pg, fio, sb = med("pg_test_fsync", m, 3), med("fio", m, 3), med("storbench", m, 3)
    note = "  (pg's open_sync is O_DIRECT)" if m == "open_sync" else ""
    cpu = lambda t: f"{med(t, m, 5):.2f} / {med(t, m, 6):.2f}"
    print(f"{m:22} {pg:9.0f} {fio:10.0f} {sb:13.0f} {sb / pg:6.2f} {sb / fio:7.2f} {cpu('fio'):>20} {cpu('storbench'):>19}{note}")
print(f"(medians of {len({r[2] for r in rows})} interleaved runs; CPU per commit is each tool's own: storbench's over its")
print(f" measured phase, fio's over its job's runtime;")
print(f" pg_test_fsync's whole run, every test in one process: user {med('pg_test_fsync', 'fdatasync', 5):.2f} s, "
      f"system {med('pg_test_fsync', 'fdatasync', 6):.2f} s, median)")
PY
