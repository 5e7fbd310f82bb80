#!/usr/bin/env bash
# capture-vs-perf.sh: what recording a device's block requests costs, storbench capture beside
# perf record of the same two tracepoints with the same device filter (issue 40, item 1).
#
# A loop device over a file; `storbench io` reads 4 KiB at random from it at --iops for
# --seconds, paced, three ways interleaved --runs times: with nothing recording (the load's
# own IOPS and p99), with `storbench capture --device DEV` recording, and with
# `perf record -e block:block_rq_issue --filter 'dev == N' -e block:block_rq_complete
# --filter 'dev == N' -a`. For each recorder: its whole process's CPU (user + system, from
# /usr/bin/time) per request recorded, the requests it recorded, and the load's IOPS and p99
# beside the run with nothing recording. Medians over the runs. Runs as root; leaves nothing.
#
# Usage: STORBENCH=target/release/storbench bench/capture-vs-perf.sh [--iops 15000]
#        [--seconds 8] [--runs 5]

set -euo pipefail
SB=${STORBENCH:-target/release/storbench}
IOPS=15000 SECS=8 RUNS=5
while [ $# -gt 0 ]; do
  case $1 in
    --iops) IOPS=$2; shift 2 ;;
    --seconds) SECS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "unknown option $1; see --help" >&2; exit 2 ;;
  esac
done
command -v perf >/dev/null || { echo "perf not found; install linux-perf" >&2; exit 2; }
[ -x "$SB" ] || { echo "storbench not found at $SB; build it or set STORBENCH" >&2; exit 2; }

source "$(dirname "${BASH_SOURCE[0]}")/loop-device.sh" capture-vs-perf
# The kernel's dev_t as the tracepoints' `dev` field holds it: major << 20 | minor.
MAJMIN=$(lsblk -ndo MAJ:MIN "$DEV" | tr -d ' ')
DEVT=$(( ${MAJMIN%:*} << 20 | ${MAJMIN#*:} ))
CSV="$WORK/runs.csv"
echo "run,recorder,requests,cpu_s,iops,p99_us" > "$CSV"

# The paced load, its summary as JSON on stdout.
load() {
  "$SB" io --target "$DEV" --allow-device --rw randread --bs 4k --iodepth 16 --rate-iops "$IOPS" \
    --runtime "$SECS" --ramp 0 --power none --output-dir "$WORK/io" --json 2>/dev/null
}

# The CPU seconds /usr/bin/time measured in file $1.
cpu_of() {
  awk -F': ' '/User time/ {u = $2} /System time/ {s = $2} END {print u + s}' "$1"
}

row() { # run recorder requests cpu_s load.json
  python3 - "$@" >> "$CSV" <<'PY'
import json, sys
run, rec, n, cpu, path = sys.argv[1:]
r = json.load(open(path))["results"]["read"]
print(f"{run},{rec},{n},{cpu},{r['iops']:.1f},{r['lat_ns']['p99'] / 1000:.1f}")
PY
}

for run in $(seq 1 "$RUNS"); do
  echo "[$run/$RUNS] nothing, storbench capture, perf record" >&2
  load > "$WORK/none.json"
  row "$run" none 0 0 "$WORK/none.json"

  /usr/bin/time -v -o "$WORK/sb.time" "$SB" capture --device "$DEV" --duration "$((SECS + 2))" \
    --json --out "$WORK/t.sbtrace" > "$WORK/capture.json" 2>/dev/null &
  rec=$!
  sleep 1
  load > "$WORK/sb.json"
  wait "$rec"
  n=$(python3 -c "import json; print(json.load(open('$WORK/capture.json'))['records'])")
  row "$run" storbench "$n" "$(cpu_of "$WORK/sb.time")" "$WORK/sb.json"
  rm -f "$WORK/t.sbtrace"

  /usr/bin/time -v -o "$WORK/perf.time" perf record -q -a -o "$WORK/perf.data" \
    -e block:block_rq_issue --filter "dev == $DEVT" \
    -e block:block_rq_complete --filter "dev == $DEVT" -- sleep "$((SECS + 2))" 2>/dev/null &
  rec=$!
  sleep 1
  load > "$WORK/perf.json"
  wait "$rec"
  n=$(perf script -i "$WORK/perf.data" -F event 2>/dev/null | grep -c block_rq_issue || true)
  row "$run" perf "$n" "$(cpu_of "$WORK/perf.time")" "$WORK/perf.json"
  rm -f "$WORK/perf.data"
done

python3 - "$CSV" "$IOPS" "$SECS" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
med = lambda xs: statistics.median(xs)
base = [r for r in rows if r["recorder"] == "none"]
base_iops = med([float(r["iops"]) for r in base])
base_p99 = med([float(r["p99_us"]) for r in base])
print(f"load: 4 KiB random reads at {sys.argv[2]} IOPS for {sys.argv[3]} s; alone {base_iops:,.0f} IOPS, p99 {base_p99:.0f} µs")
print("| recorder | requests recorded | CPU-µs per request | load IOPS | load p99 µs |")
print("|---|---|---|---|---|")
for rec in ("storbench", "perf"):
    rs = [r for r in rows if r["recorder"] == rec]
    per = med([float(r["cpu_s"]) * 1e6 / max(int(r["requests"]), 1) for r in rs])
    print(f"| {rec} | {med([int(r['requests']) for r in rs]):,.0f} | {per:.2f} | "
          f"{med([float(r['iops']) for r in rs]):,.0f} | {med([float(r['p99_us']) for r in rs]):.0f} |")
print(f"\nmedians of {len(base)} interleaved runs")
PY
