#!/usr/bin/env bash
# The mailbox workload beside Jetstress's published figures: the 2007 preset at the thread
# counts of the 2009 report (17 for 3 SSDs, 73 for 24 HDDs) and the 2010 preset at 1, 5 and 20
# threads (Microsoft's per-thread table), each with its shape figures (DB reads:writes, the
# log's share of all I/O, bytes per log write), latency, storbench's CPU per I/O and share of a
# core, and how busy the disk was.
#
# Usage: bench/mailbox-fidelity.sh [--dir /var/tmp/sb-fidelity] [--seconds 60]
#   Creates two sets of 200 mailboxes of 25 MB (5 GB each; the 2007 cache is 256 MB, as
#   Jetstress 2007's) under --dir, and removes them at the end.
set -euo pipefail
dir=/var/tmp/sb-fidelity seconds=60
while [ $# -gt 0 ]; do
  case $1 in
    --dir) dir=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
command -v python3 >/dev/null || { echo "python3 is needed to read the results" >&2; exit 2; }
cd "$(dirname "$0")/.."
cargo build --release -q
bin=$PWD/target/release/storbench
mkdir -p "$dir"
out=$dir/results
common=(--mailboxes 200 --mailbox-size 25MB --max-warmup 120s --output-dir "$out" --keep --json)
run() { # name args...
  local name=$1; shift
  "$bin" mailbox "${common[@]}" --name "$name" "$@" > "$dir/$name.json" 2> "$dir/$name.err" || true
}
for t in 17 73; do run "2007-t$t" --target "$dir/db2007" --preset 2007 --cache-size 256MB --threads "$t" --duration "${seconds}s"; done
for t in 1 5 20; do run "2010-t$t" --target "$dir/db2010" --preset 2010 --threads "$t" --duration "$((seconds / 2))s"; done
python3 - "$dir" <<'PY'
import csv, glob, json, sys
d = sys.argv[1]
print("| run | DB reads/s | DB writes/s | log writes/s | reads:writes | log share | bytes/log write | read ms | log ms | pass | CPU us/IO | storbench CPU % | disk busy % |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for name in ["2007-t17", "2007-t73", "2010-t1", "2010-t5", "2010-t20"]:
    try:
        s = json.load(open(f"{d}/{name}.json"))
    except Exception:
        print(f"| {name} | failed: see {d}/{name}.err |"); continue
    r = s["results"]
    bundle = sorted(glob.glob(f"{d}/results/*-{name}"))[-1]
    series = [x for x in csv.DictReader(open(bundle + "/timeseries.csv")) if x["phase"] == "measure"]
    mean = lambda k: sum(float(x[k]) for x in series if x[k]) / max(1, sum(1 for x in series if x[k]))
    print(f"| {name} | {r['db_reads_per_sec']:,.0f} | {r['db_writes_per_sec']:,.0f} | {r['log_writes_per_sec']:,.0f} | "
          f"{r['db_reads_per_sec'] / max(1, r['db_writes_per_sec']):.2f} | {100 * r['log_writes_per_sec'] / r['total_iops']:.1f} % | "
          f"{r['log_bytes_per_write']:,.0f} | {r['db_read_avg_ms']:.2f} | {r['log_write_avg_ms']:.2f} | {'pass' if r['pass'] else 'FAIL'} | "
          f"{s['cpu']['ns_per_io'] / 1000:.1f} | {mean('storbench_cpu_pct'):.0f} | {mean('disk_busy_pct'):.0f} |")
PY
rm -rf "$dir/db2007" "$dir/db2010"
