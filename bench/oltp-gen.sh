#!/usr/bin/env bash
# DVD Store data generation speed: `storbench oltp gen` writing DS3's CSV files to tmpfs,
# repeated, with CPU seconds (user + sys) and wall time per run and their medians.
#
# Usage: bench/oltp-gen.sh [--size M] [--runs 5] [--threads "1 2"] [--out /dev/shm/DIR]
#
# The reference is DS3's own C generators on this machine (spec/dvdstore.md §6): the M set,
# 58.6 M rows and 2.78 GB, in about 21 CPU-seconds. Their code is not part of this repository,
# so the script prints that measured anchor beside storbench's figures instead of running it.
set -euo pipefail
size=M runs=5 threads="1 2" out=/dev/shm/storbench-gen-bench
while [ $# -gt 0 ]; do
  case $1 in
    --size) size=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."
cargo build --release -q
bin=$PWD/target/release/storbench
results=$(mktemp)
for r in $(seq 1 "$runs"); do
  for t in $threads; do
    rm -rf "$out"
    /usr/bin/time -f "%U %S %e %M" -o "$results.one" "$bin" oltp gen --db-size "$size" --threads "$t" --out "$out" >/dev/null
    read -r user sys wall rss < "$results.one"
    echo "$t $user $sys $wall $rss" >> "$results"
    echo "run $r threads $t: cpu $(echo "$user + $sys" | bc) s, wall $wall s, max RSS $((rss / 1024)) MiB" >&2
  done
done
rows=$(cat "$out"/*/*.csv | wc -l); bytes=$(cat "$out"/*/*.csv | wc -c)
rm -rf "$out" "$results.one"
python3 - "$results" "$rows" "$bytes" "$size" <<'PY'
import statistics, sys
path, rows, nbytes, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
runs = {}
for line in open(path):
    t, user, sys_, wall, rss = line.split()
    runs.setdefault(t, []).append((float(user) + float(sys_), float(wall), int(rss)))
print(f"oltp gen --db-size {size}: {rows:,} rows, {nbytes / 1e9:.2f} GB of CSV")
print("threads  median CPU s  median wall s  rows/s per CPU-s  MB/s per CPU-s  max RSS MiB")
for t, rs in sorted(runs.items()):
    cpu = statistics.median(r[0] for r in rs)
    wall = statistics.median(r[1] for r in rs)
    rss = max(r[2] for r in rs) / 1024
    print(f"{t:>7}  {cpu:12.2f}  {wall:13.2f}  {rows / cpu / 1e6:13.2f} M  {nbytes / cpu / 1e6:14.0f}  {rss:11.0f}")
if size.upper() in ("M", "1GB"):
    print("DS3's C generators, same set (spec §6): about 21 CPU-s (2.6 M rows/s, 125 MB/s per core)")
PY
rm -f "$results"
