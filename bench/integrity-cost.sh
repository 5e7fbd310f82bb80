#!/usr/bin/env bash
# integrity-cost.sh: what the integrity stress costs beside storbench's own checked I/O, and
# how fast its final audit reads, interleaved over several rounds on the same disk:
#   1. `storbench integrity` (data 256 MiB growing to 384 MiB by 32 MiB, log 16 MiB, --keep):
#      CPU time per I/O and per MiB moved, its mean request size and read share, and the
#      audit's read rate;
#   2. `storbench io --verify` on a file of the same size, random reads and writes at the
#      integrity run's mean request size (rounded to 8 KiB) and read share, QD16: CPU per I/O
#      and per MiB (the issue's target: integrity within 1.5x);
#   3. `storbench io --rw read --bs 1m` (O_DIRECT, as the audit reads) over the integrity run's
#      kept data file: the sequential rate the audit is measured against.
# Prints each round and the medians. CPU time per operation is steadier than rates on a
# shared VM.
#
# Usage: bench/integrity-cost.sh [--runs N] [--seconds S] [--dir DIR] [--binary PATH]
#   defaults: 5 runs, 20 s, /var/tmp/sb-integrity (removed at the end), target/release/storbench
set -euo pipefail
usage() { sed -n '2,18p' "$0"; }
runs=5 seconds=20 dir=/var/tmp/sb-integrity bin=target/release/storbench
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --binary) bin=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -x "$bin" ] || { echo "not an executable: $bin (cargo build --release first)" >&2; exit 2; }
bin=$(realpath "$bin")
command -v python3 >/dev/null || { echo "python3 is needed to read the results" >&2; exit 2; }
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT
raw="$dir/rounds.tsv"
: > "$raw"

field() { python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

for i in $(seq 1 "$runs"); do
  rm -rf "$dir/t" "$dir/io" "$dir/out"
  "$bin" integrity --target "$dir/t" --output-dir "$dir/out" --data-size 256MiB --data-max 384MiB \
    --data-growth 32MiB --log-size 16MiB --duration "$seconds" --seed "$i" --keep --json \
    > "$dir/i.json" 2>/dev/null
  read -r ios bytes reads cpu audit <<< "$(field "$dir/i.json" \
    "' '.join(str(x) for x in [s['results']['ios'], s['results']['bytes'], sum(a['reads'] for a in s['results']['activities']), s['cpu']['user_s']+s['cpu']['sys_s'], s['results']['audit']['bytes_per_sec']])")"
  bs=$(python3 -c "print(max(8192, round($bytes/$ios/8192)*8192))")
  pct=$(python3 -c "print(round(100*$reads/$ios))")
  "$bin" io --target "$dir/io" --size 256MiB --rw randrw --rwmix-read "$pct" --bs "$bs" --iodepth 16 \
    --verify --runtime "$seconds" --ramp 0 --seed "$i" --output-dir "$dir/out" --json > "$dir/v.json" 2>/dev/null
  read -r vios vbytes vcpu <<< "$(field "$dir/v.json" \
    "' '.join(str(x) for x in [s['results']['read']['ios']+s['results']['write']['ios'], s['results']['read']['bytes']+s['results']['write']['bytes'], s['cpu']['user_s']+s['cpu']['sys_s']])")"
  mdf="$dir/t/storbench-integrity.mdf"
  "$bin" io --target "$mdf" --rw read --bs 1m --runtime 5 --ramp 0 --output-dir "$dir/out" --json > "$dir/d.json" 2>/dev/null
  direct=$(field "$dir/d.json" "s['results']['read']['bytes_per_sec']")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$i" "$ios" "$bytes" "$cpu" "$bs" "$pct" \
    "$vios" "$vbytes" "$vcpu" "$audit" "$direct" >> "$raw"
done

python3 - "$raw" "$seconds" <<'PY'
import statistics, sys
rows = [l.split('\t') for l in open(sys.argv[1]).read().split('\n') if l]
secs = float(sys.argv[2])
med = statistics.median
print(f"{'round':>5} {'integ IOPS':>10} {'us/IO':>7} {'us/MiB':>7} {'bs':>7} {'read%':>5} | {'verify IOPS':>11} {'us/IO':>7} {'us/MiB':>7} | {'audit MB/s':>10} {'1m direct':>9}")
cols = []
for r in rows:
    i, ios, b, cpu, bs, pct, vios, vb, vcpu, audit, direct = r
    ios, b, cpu, vios, vb, vcpu = map(float, (ios, b, cpu, vios, vb, vcpu))
    c = (ios / secs, cpu / ios * 1e6, cpu / (b / 2**20) * 1e6, int(bs), int(pct), vios / secs, vcpu / vios * 1e6,
         vcpu / (vb / 2**20) * 1e6, float(audit) / 1e6, float(direct) / 1e6)
    cols.append(c)
    print(f"{i:>5} {c[0]:>10.0f} {c[1]:>7.1f} {c[2]:>7.1f} {c[3]:>7} {c[4]:>5} | {c[5]:>11.0f} {c[6]:>7.1f} {c[7]:>7.1f} | {c[8]:>10.0f} {c[9]:>9.0f}")
m = [med(c[k] for c in cols) for k in range(10)]
print(f"{'median':>5} {m[0]:>10.0f} {m[1]:>7.1f} {m[2]:>7.1f} {m[3]:>7.0f} {m[4]:>5.0f} | {m[5]:>11.0f} {m[6]:>7.1f} {m[7]:>7.1f} | {m[8]:>10.0f} {m[9]:>9.0f}")
print(f"integrity / io --verify CPU per I/O: {m[1]/m[6]:.2f}x, per MiB: {m[2]/m[7]:.2f}x; audit / 1m direct read: {m[8]/m[9]:.2f}x")
PY
