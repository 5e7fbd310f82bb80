#!/usr/bin/env bash
# Where the CPU goes in a closed-loop DVD Store run on SQLite with the database in page cache:
# in SQLite (the database), in storbench's driver, or in the kernel. SQLite runs inside the
# storbench process, so one profile of that process splits the two exactly.
#
# Usage: bench/oltp-profile.sh [--size S] [--threads 2] [--seconds 30] [--dir DIR]
# Needs perf (Debian package linux-perf); uses the software cpu-clock event, which works in VMs
# without hardware counters.
set -euo pipefail
size=S threads=2 seconds=30 dir=${TMPDIR:-/var/tmp}/storbench-oltp-profile
while [ $# -gt 0 ]; do
  case $1 in
    --size) size=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
command -v perf >/dev/null || { echo "perf is missing: apt-get install linux-perf" >&2; exit 2; }
cd "$(dirname "$0")/.."
cargo build --release -q
bin=$PWD/target/release/storbench
mkdir -p "$dir"
db=$dir/ds3-$size.db
[ -f "$db" ] || "$bin" oltp load --db-size "$size" --path "$db"
cat "$db" > /dev/null   # into the page cache
"$bin" oltp run --db-size "$size" --path "$db" --warmup-time 0 --run-time "${seconds}s" --n-threads "$threads" \
  --output-dir "$dir/results" --json >"$dir/summary.json" 2>"$dir/ds3.log" &
pid=$!
sleep 2
perf record -e cpu-clock -F 999 -p "$pid" -o "$dir/perf.data" -- sleep $((seconds - 4)) 2>/dev/null
wait "$pid"
perf report -i "$dir/perf.data" --no-children --sort sym --stdio 2>/dev/null | grep -E '^ +[0-9]' > "$dir/symbols.txt"
python3 - "$dir" <<'PY'
import json, re, sys
d = sys.argv[1]
share = {"sqlite": 0.0, "driver": 0.0, "kernel": 0.0, "other": 0.0}
for line in open(f"{d}/symbols.txt"):
    m = re.match(r"\s*([\d.]+)%\s+\[(.)\]\s+(.*)", line)
    if not m:
        continue
    pct, where, sym = float(m[1]), m[2], m[3]
    if where == "k":
        share["kernel"] += pct
    elif re.search(r"sqlite3|^fts5|^vdbe|^btree|^pcache|^pager|^wal", sym, re.I):
        share["sqlite"] += pct
    elif "storbench" in sym or "oltp" in sym:
        share["driver"] += pct
    else:
        share["other"] += pct
s = json.load(open(f"{d}/summary.json"))
r = s["results"]
cpu = s["cpu"]["user_s"] + s["cpu"]["sys_s"]
print(f"OPM {r['opm']:.0f}, {r['orders']} orders in {s['phases']['measured_s']:.0f} s, {s['results']['threads']} threads")
print(f"process CPU per order (SQLite and driver together): {cpu * 1e6 / max(r['orders'], 1):.0f} us")
print("CPU samples by where they fell (%):")
for k, v in share.items():
    print(f"  {k:7s} {v:5.1f}")
print("top symbols:")
for line in open(f"{d}/symbols.txt").readlines()[:12]:
    print("  " + line.strip())
PY
