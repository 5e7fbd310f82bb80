#!/usr/bin/env bash
# capture-load.sh: what `storbench capture` costs and holds under a steady load (issue 27: "a
# 10-minute capture at 50k IOPS streams to disk with flat memory").
#
# A loop device over a file; `storbench io` reads 4 KiB at random from it at --iops for each
# capture length, while `storbench capture` records it under /usr/bin/time -v. Per length:
# requests in the trace, the trace's size, what was lost (completions without an issue,
# requests without a completion, events the kernel dropped), the capture's own CPU per request (its reading thread, as it
# reports it, and the whole process's user+system over the requests) and its maximum resident
# memory. Flat memory: the same maximum at every length. Runs as root. Leaves nothing behind.
#
# Usage: STORBENCH=target/release/storbench bench/capture-load.sh [--iops 50000] [--seconds "30 60 120"]

set -euo pipefail
SB=${STORBENCH:-target/release/storbench}
IOPS=50000 LENGTHS="30 60 120"
while [ $# -gt 0 ]; do
  case $1 in
    --iops) IOPS=$2; shift 2 ;;
    --seconds) LENGTHS=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
source "$(dirname "${BASH_SOURCE[0]}")/loop-device.sh" capture-load

echo "| seconds | requests | trace MB | no issue / no completion / kernel dropped | reader CPU-µs/req | process CPU-µs/req | max RSS MB |"
echo "|---|---|---|---|---|---|---|"
for secs in $LENGTHS; do
  trace="$WORK/t$secs.sbtrace"
  /usr/bin/time -v -o "$WORK/time" "$SB" capture --device "$DEV" --duration "$((secs + 2))" \
    --json --out "$trace" > "$WORK/capture.json" 2>/dev/null &
  cap=$!
  sleep 1
  "$SB" io --target "$DEV" --allow-device --rw randread --bs 4k --iodepth 16 --rate-iops "$IOPS" \
    --runtime "$secs" --ramp 0 --power none --output-dir "$WORK/io" > /dev/null 2>&1
  wait "$cap"
  python3 - "$WORK/capture.json" "$WORK/time" "$trace" "$secs" <<'EOF'
import json, os, re, sys
c = json.load(open(sys.argv[1]))
t = open(sys.argv[2]).read()
cpu = float(re.search(r"User time \(seconds\): ([\d.]+)", t)[1]) + float(re.search(r"System time \(seconds\): ([\d.]+)", t)[1])
rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t)[1]) / 1024
n = c["records"]
lost = f'{c["unmatched_completions"]} / {c["never_completed"]} / {c["kernel_dropped"]}'
print(f"| {sys.argv[4]} | {n:,} | {os.path.getsize(sys.argv[3]) / 1e6:.0f} | {lost} | "
      f"{c['capture_cpu_us_per_request']:.2f} | {cpu * 1e6 / max(n, 1):.2f} | {rss:.1f} |")
EOF
  rm -f "$trace"
done
