#!/usr/bin/env bash
# compare-builds.sh: the same jobs with two storbench builds, interleaved (old, new, old, new
# ...), to show what a change to the run machinery costs: median throughput and median CPU
# time per operation of each build, and their ratio. Throughput on a shared VM is noisy; CPU
# time per operation is the steadier figure.
#
# Jobs (each run's figures from its --json summary):
#   io-a     4k random reads, QD32, O_DIRECT, io_uring, 1 GiB file      (IOPS, CPU us per I/O)
#   io-e     null engine, 4k random reads, QD128                         (IOPS, CPU us per I/O)
#   oltp     DVD Store on SQLite, size S, 2 threads, closed loop         (OPM, CPU us per order)
#   mailbox  2007 preset, 100 mailboxes of 25 MB, 17 threads             (transactional IOPS,
#                                                                        CPU us per I/O)
#   integrity data 256 MiB growing to 384 MiB by 32 MiB, log 16 MiB      (IOPS, CPU us per I/O)
#
# Usage: bench/compare-builds.sh OLD_BINARY NEW_BINARY [--runs N] [--seconds S] [--dir DIR]
#                                [--jobs io-a,io-e,oltp,mailbox,integrity]
#   Build the old one from a worktree, e.g.
#     git worktree add /tmp/sb-old HEAD~3 && (cd /tmp/sb-old && cargo build --release)
#   DIR (default /var/tmp/sb-builds) holds the test file, the SQLite database and the mailbox
#   databases; they are removed at the end.
set -euo pipefail
usage() { sed -n '2,20p' "$0"; }
[ $# -ge 2 ] || { usage >&2; exit 2; }
case $1 in -h|--help) usage; exit 0 ;; esac
old=$(realpath "$1") new=$(realpath "$2"); shift 2
runs=5 seconds=15 dir=/var/tmp/sb-builds jobs=io-a,io-e,oltp,mailbox,integrity
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
for b in "$old" "$new"; do [ -x "$b" ] || { echo "not an executable: $b" >&2; exit 2; }; done
command -v python3 >/dev/null || { echo "python3 is needed to read the results" >&2; exit 2; }
mkdir -p "$dir/out" "$dir/raw"
trap 'rm -rf "$dir/io" "$dir/ds3" "$dir/mbx" "$dir/integrity" "$dir/out"' EXIT
mkdir -p "$dir/io" "$dir/ds3" "$dir/mbx" "$dir/integrity"

job_cmd() { # binary job -> the command's arguments
  local bin=$1 job=$2
  case $job in
    io-a) echo "$bin io --target $dir/io --size 1G --rw randread --bs 4k --iodepth 32 --runtime ${seconds}s --ramp 1s" ;;
    io-e) echo "$bin io --engine null --size 1G --rw randread --bs 4k --iodepth 128 --runtime ${seconds}s --ramp 1s" ;;
    oltp) echo "$bin oltp run --backend sqlite --path $dir/ds3/ds3.db --db-size S --n-threads 2 --run-time ${seconds}s --warmup-time 5s --settle-time 0s" ;;
    mailbox) echo "$bin mailbox --target $dir/mbx --preset 2007 --mailboxes 100 --mailbox-size 25MB --threads 17 --duration ${seconds}s --max-warmup 60s --keep" ;;
    # Not kept: each run creates its files and removes them at its end.
    integrity) echo "$bin integrity --target $dir/integrity/t --data-size 256MiB --data-max 384MiB --data-growth 32MiB --log-size 16MiB --duration ${seconds}s" ;;
  esac
}

# Data sets, made once by the new build and used by both.
case ,$jobs, in *,oltp,*)
  echo "loading the DVD Store S set into $dir/ds3" >&2
  "$new" oltp load --backend sqlite --path "$dir/ds3/ds3.db" --db-size S >/dev/null 2>"$dir/raw/load.err" ;;
esac

for job in ${jobs//,/ }; do
  for run in $(seq 1 "$runs"); do
    for build in old new; do
      bin=$old; [ $build = new ] && bin=$new
      echo "$job run $run/$runs: $build" >&2
      # shellcheck disable=SC2046
      $(job_cmd "$bin" "$job") --json --output-dir "$dir/out" >"$dir/raw/$job-$run-$build.json" \
        2>"$dir/raw/$job-$run-$build.err" || echo "  failed: see $dir/raw/$job-$run-$build.err" >&2
    done
  done
done

python3 - "$dir/raw" "$runs" "$jobs" <<'PY'
import json, statistics, sys
raw, runs, jobs = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(",")

def figures(job, s):
    r, cpu = s["results"], s["cpu"]["ns_per_io"]
    rate = {"oltp": lambda: r["opm"], "mailbox": lambda: r["transactional_iops"],
            "integrity": lambda: r["iops"]}.get(
        job, lambda: r["read"]["iops"] + r["write"]["iops"])()
    return rate, cpu / 1e3 if cpu else None

unit = {"oltp": ("OPM", "CPU us/order"), "mailbox": ("transactional IOPS", "CPU us/IO")}
print("| job | runs | old median | new median | new/old | old CPU | new CPU | new/old | old range | new range |")
print("|---|---|---|---|---|---|---|---|---|---|")
for job in jobs:
    got = {"old": [], "new": []}
    for b in got:
        for i in range(1, runs + 1):
            try:
                got[b].append(figures(job, json.load(open(f"{raw}/{job}-{i}-{b}.json"))))
            except Exception:
                pass
    if not got["old"] or not got["new"]:
        print(f"| {job} | failed runs: see {raw} |")
        continue
    med = {b: statistics.median(x[0] for x in got[b]) for b in got}
    cpu = {b: statistics.median(x[1] for x in got[b] if x[1] is not None) for b in got}
    rng = {b: f"{min(x[0] for x in got[b]):,.0f}-{max(x[0] for x in got[b]):,.0f}" for b in got}
    rate_unit, cpu_unit = unit.get(job, ("IOPS", "CPU us/IO"))
    print(f"| {job} ({rate_unit}, {cpu_unit}) | {len(got['old'])}/{len(got['new'])} | {med['old']:,.0f} | "
          f"{med['new']:,.0f} | {med['new'] / med['old']:.2f} | {cpu['old']:.3f} | {cpu['new']:.3f} | "
          f"{cpu['new'] / cpu['old']:.2f} | {rng['old']} | {rng['new']} |")
PY
