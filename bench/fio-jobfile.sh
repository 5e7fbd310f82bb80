#!/usr/bin/env bash
# fio-jobfile.sh: the same fio job files run by fio and by `storbench io JOB.fio`, interleaved
# (storbench, fio, storbench, fio, ...), and for each job of each file the I/O each tool did:
# I/Os read and written, bytes, the read share and the mean block size, with IOPS and CPU-us
# per I/O (medians over the runs).
#
# The job files are this script's own, written into the work directory; each uses options of
# a kind fio's examples folder uses (ssd-test: stonewalled phases; iometer-file-access-server:
# a bssplit mix with rwmixread; tiobench: bsrange and numjobs; fio-rand-read: time_based with
# an include and $ncpus). Size-based jobs must move the same bytes in both tools; time-based
# ones are compared by their shape and rates.
#
# fio lays out a file per job copy (jobname.N.0) in the directory; storbench makes one
# file (storbench-io.dat) its workers share. Both files sit in the same directory.
#
# Usage: bench/fio-jobfile.sh [--runs N] [--dir DIR] [--size SIZE]
#   STORBENCH=path/to/storbench (default: target/release/storbench), FIO=fio

set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STORBENCH=${STORBENCH:-$SCRIPT_DIR/../target/release/storbench}
FIO=${FIO:-fio}
RUNS=5
DIR=""
SIZE=256m

while [ $# -gt 0 ]; do
    case "$1" in
        --runs) RUNS=$2; shift 2 ;;
        --dir) DIR=$2; shift 2 ;;
        --size) SIZE=$2; shift 2 ;;
        -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
        *) echo "unknown option $1; see --help" >&2; exit 2 ;;
    esac
done

command -v "$FIO" >/dev/null || { echo "fio not found; install it (apt-get install fio) or set FIO" >&2; exit 2; }
[ -x "$STORBENCH" ] || { echo "storbench not found at $STORBENCH; build it (cargo build --release) or set STORBENCH" >&2; exit 2; }

own_dir=0
if [ -z "$DIR" ]; then DIR=$(mktemp -d "${TMPDIR:-/tmp}/fio-jobfile.XXXXXX"); own_dir=1; fi
WORK="$DIR/fio-jobfile-work"
mkdir -p "$WORK/jobs" "$WORK/data" "$WORK/out"
cleanup() { rm -rf "$WORK"; [ "$own_dir" = 1 ] && rmdir "$DIR" 2>/dev/null || true; }
trap cleanup EXIT

# ---------------------------------------------------------------------------
# The job files
# ---------------------------------------------------------------------------
cat > "$WORK/jobs/phases.fio" <<EOF
; four phases one after the other, as an SSD test does
[global]
bs=4k
ioengine=libaio
iodepth=4
size=$SIZE
direct=1
directory=$WORK/data

[seq-read]
rw=read
stonewall

[rand-read]
rw=randread
norandommap
stonewall

[seq-write]
rw=write
stonewall

[rand-write]
rw=randwrite
norandommap
stonewall
EOF

cat > "$WORK/jobs/fileserver.fio" <<EOF
# a file server's mix of sizes, 80 % reads
[fileserver]
bssplit=512/10:1k/5:2k/5:4k/60:8k/2:16k/4:32k/4:64k/10
rw=randrw
rwmixread=80
direct=1
size=$SIZE
ioengine=libaio
iodepth=16
norandommap
directory=$WORK/data
EOF

cat > "$WORK/jobs/threads.fio" <<EOF
; four threads drawing 4k to 16k blocks
[global]
direct=1
size=$SIZE
bsrange=4k-16k
numjobs=4
norandommap
directory=$WORK/data

[randread]
rw=randread
EOF

cat > "$WORK/jobs/common.inc" <<EOF
ioengine=io_uring
direct=1
directory=$WORK/data
size=$SIZE
EOF

cat > "$WORK/jobs/timed.fio" <<EOF
[global]
include common.inc

[timed]
rw=randread
bs=4k
iodepth=\$ncpus
time_based
runtime=5
EOF

# ---------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------
CSV="$WORK/runs.csv"
echo "file,run,tool,job,read_ios,write_ios,read_bytes,write_bytes,iops,cpu_us_per_io" > "$CSV"

storbench_run() { # file run
    local out="$WORK/out/sb-$1-$2.json"
    "$STORBENCH" io "$WORK/jobs/$1.fio" --output-dir "$WORK/out/sb" --power none --json > "$out" 2>/dev/null
    python3 - "$out" "$1" "$2" >> "$CSV" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for j in d.get("profiles", [d]):
    r = j["results"]; ios = r["read"]["ios"] + r["write"]["ios"]
    cpu = j["cpu"]["user_s"] + j["cpu"]["sys_s"]
    iops = r["read"]["iops"] + r["write"]["iops"]
    print(f"{sys.argv[2]},{sys.argv[3]},storbench,{j['name']},{r['read']['ios']},{r['write']['ios']},"
          f"{r['read']['bytes']},{r['write']['bytes']},{iops:.1f},{cpu / max(ios, 1) * 1e6:.3f}")
PY
}

fio_run() { # file run
    local out="$WORK/out/fio-$1-$2.json"
    (cd "$WORK/jobs" && "$FIO" "$1.fio" --output-format=json --group_reporting > "$out" 2>/dev/null)
    python3 - "$out" "$1" "$2" >> "$CSV" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for j in d["jobs"]:
    rd, wr = j["read"], j["write"]; ios = rd["total_ios"] + wr["total_ios"]
    run_s = j["job_runtime"] / 1000
    cpu = (j["usr_cpu"] + j["sys_cpu"]) / 100 * run_s
    iops = rd["iops"] + wr["iops"]  # fio's own: a group's copies together
    print(f"{sys.argv[2]},{sys.argv[3]},fio,{j['jobname']},{rd['total_ios']},{wr['total_ios']},"
          f"{rd['io_bytes']},{wr['io_bytes']},{iops:.1f},{cpu / max(ios, 1) * 1e6:.3f}")
PY
}

for file in phases fileserver threads timed; do
    for run in $(seq 1 "$RUNS"); do
        echo "[$file $run/$RUNS] storbench, fio" >&2
        storbench_run "$file" "$run"
        fio_run "$file" "$run"
    done
done

# ---------------------------------------------------------------------------
# Table: medians per file, job and tool
# ---------------------------------------------------------------------------
python3 - "$CSV" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
keys = []
for r in rows:
    k = (r["file"], r["job"])
    if k not in keys:
        keys.append(k)
med = lambda xs: statistics.median(xs) if xs else float("nan")
print(f"{'file/job':<24} {'tool':<10} {'reads':>9} {'writes':>9} {'MiB':>8} {'read %':>7} {'mean bs':>8} {'IOPS':>9} {'CPU-us/IO':>9}")
for f, job in keys:
    for tool in ("storbench", "fio"):
        rs = [r for r in rows if (r["file"], r["job"], r["tool"]) == (f, job, tool)]
        if not rs:
            continue
        n = lambda c: [float(r[c]) for r in rs]
        reads, writes = med(n("read_ios")), med(n("write_ios"))
        byts = [float(r["read_bytes"]) + float(r["write_bytes"]) for r in rs]
        ios = [float(r["read_ios"]) + float(r["write_ios"]) for r in rs]
        share = med([float(r["read_ios"]) / i * 100 for r, i in zip(rs, ios) if i])
        mean_bs = med([b / i for b, i in zip(byts, ios) if i])
        print(f"{f + '/' + job:<24} {tool:<10} {reads:>9.0f} {writes:>9.0f} {med(byts) / 2**20:>8.1f} "
              f"{share:>7.1f} {mean_bs:>8.0f} {med(n('iops')):>9.0f} {med(n('cpu_us_per_io')):>9.2f}")
print(f"\nmedians of {len({r['run'] for r in rows})} interleaved runs per tool; per-run rows: kept only in this run's work dir")
PY
