#!/usr/bin/env bash
# replay-vs-fio-iolog.sh: one block trace replayed by storbench (`replay-trace --fast`) and by
# fio (its iolog replay, the trace converted to fio's iolog version 2 here), interleaved, on the
# same loop device: requests per second and CPU time per request, medians.
#
#  1. Two loop devices over files: the trace is captured (`storbench capture`) on A while
#     `storbench io` runs randrw 4k at depth 8 for --seconds; replays go to B.
#  2. The trace becomes an iolog: `fio version 2 iolog`, then B's add/open, a read or write line
#     per request (offset, length), close. Flushes are left out (storbench does not replay them
#     either).
#  3. --runs times each, alternating: storbench replay-trace TRACE --target B --fast --iodepth 8
#     and fio --read_iolog at --iodepth 8 with io_uring and O_DIRECT, --replay_no_stall; each
#     under /usr/bin/time for its wall time and its own user+system CPU.
# Runs as root. Leaves nothing behind.
#
# Usage: STORBENCH=target/release/storbench bench/replay-vs-fio-iolog.sh [--runs 5] [--seconds 5]

set -euo pipefail
SB=${STORBENCH:-target/release/storbench}
RUNS=5 SECONDS_=5
while [ $# -gt 0 ]; do
  case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --seconds) SECONDS_=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
command -v fio >/dev/null || { echo "fio is needed (apt install fio)" >&2; exit 2; }
WORK=$(mktemp -d /var/tmp/replay-iolog.XXXXXX)
A="" B=""
cleanup() {
  [ -n "$A" ] && losetup -d "$A"
  [ -n "$B" ] && losetup -d "$B"
  rm -rf "$WORK"
}
trap cleanup EXIT
truncate -s 1G "$WORK/a.img" "$WORK/b.img"
A=$(losetup --find --show "$WORK/a.img")
B=$(losetup --find --show "$WORK/b.img")

"$SB" capture --device "$A" --out "$WORK/t.sbtrace" --duration $((SECONDS_ + 3)) >/dev/null 2>&1 &
CAP=$!
sleep 1
"$SB" io --target "$A" --allow-device --rw randrw --bs 4k --iodepth 8 --runtime "$SECONDS_" --ramp 0 \
  --power none --output-dir "$WORK/results" >/dev/null 2>&1
wait $CAP

python3 - "$WORK/t.sbtrace" "$WORK/t.iolog" "$B" <<'PY'
import json, struct, sys
src, dst, dev = sys.argv[1:4]
with open(src, "rb") as f, open(dst, "w") as out:
    assert f.read(8) == b"SBTRACE\0", "not a storbench trace"
    version, hlen = struct.unpack("<II", f.read(8))
    assert version == 1, f"trace version {version}"
    json.loads(f.read(hlen))
    out.write(f"fio version 2 iolog\n{dev} add\n{dev} open\n")
    n = 0
    while (rec := f.read(32)) and len(rec) == 32:
        issue, sector, nbytes, lat, op = struct.unpack("<QQIIB", rec[:25])
        if op in (0, 1) and nbytes > 0:
            out.write(f"{dev} {'read' if op == 0 else 'write'} {sector * 512} {nbytes}\n")
            n += 1
    out.write(f"{dev} close\n")
print(f"{n} reads and writes in the iolog", file=sys.stderr)
PY
N=$(grep -cE ' (read|write) ' "$WORK/t.iolog")

timed() { # label, command...: prints "label wall_s cpu_s"
  local label=$1; shift
  /usr/bin/time -f "%e %U %S" -o "$WORK/time" "$@" >/dev/null 2>&1
  read -r wall user sys <"$WORK/time"
  echo "$label $wall $(python3 -c "print($user + $sys)")"
}
: >"$WORK/results.txt"
for i in $(seq 1 "$RUNS"); do
  timed storbench "$SB" replay-trace "$WORK/t.sbtrace" --target "$B" --allow-device --force --fast --iodepth 8 \
    --power none --output-dir "$WORK/sb-results" \
    >>"$WORK/results.txt"
  timed fio fio --name=replay --read_iolog="$WORK/t.iolog" --ioengine=io_uring --direct=1 --iodepth=8 \
    --replay_no_stall=1 --output="$WORK/fio.out" >>"$WORK/results.txt"
done
python3 - "$WORK/results.txt" "$N" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
n = int(sys.argv[2])
print(f"{n} requests replayed per run, {len(rows) // 2} runs each, interleaved")
print(f"{'tool':<10}{'requests/s (median)':>22}{'CPU us/request (median)':>26}")
for tool in ("storbench", "fio"):
    walls = [float(r[1]) for r in rows if r[0] == tool]
    cpus = [float(r[2]) for r in rows if r[0] == tool]
    print(f"{tool:<10}{n / statistics.median(walls):>22.0f}{statistics.median(cpus) * 1e6 / n:>26.2f}")
PY
