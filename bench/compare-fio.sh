#!/usr/bin/env bash
# compare-fio.sh: run storbench and fio on the same jobs, interleaved, and compare
# median IOPS and median CPU time per I/O.
#
# Follows the comparison protocol of ../shared/spec/io-peers.md section 3: same file and job
# options for both tools, runs interleaved (storbench, fio, storbench, fio, ...) so that
# slow drift of the shared VM hits both tools alike, medians over >= 5 repeats, and
# CPU-us per I/O as the noise-robust efficiency metric. Each run also records how busy the
# rest of the machine was (foreign CPU, foreign disk I/O), so contaminated runs can be told apart.
#
# Usage: bench/compare-fio.sh [--runs N] [--runtime S] [--dir DIR] [--jobs a,b,...] [--quick]
#        run with --help for the full list.

set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# ---------------------------------------------------------------------------
# Defaults (overridable by options or environment)
# ---------------------------------------------------------------------------
RUNS=5
RUNTIME=10          # seconds of measured phase per run
RAMP=2              # seconds of warm-up, excluded from results by both tools
SIZE=2G             # test file size (storbench and fio both read 2G as 2 GiB)
JOBS="a,b,c,d,e"
DIR=""              # empty: make a temp dir and remove it at the end
CSV=""              # empty: ${TMPDIR:-/tmp}/compare-fio-<stamp>.csv
STORBENCH=${STORBENCH:-$SCRIPT_DIR/../target/release/storbench}
FIO=${FIO:-fio}

# Thresholds for calling a run "noisy" (same as io-peers.md section 3): disk jobs with
# more than 10% foreign device I/O, CPU-bound jobs with more than 0.15 core of foreign CPU.
MAX_FOREIGN_IO_PCT=10
MAX_FOREIGN_CPU_CORES=0.15

usage() {
    cat <<EOF
Usage: $0 [options]

Runs storbench and fio on identical jobs, interleaved (storbench, fio, storbench, fio ...),
and prints median IOPS and median CPU-us per I/O for both, plus storbench/fio ratios.

Jobs:
  a  4k randread  QD32  O_DIRECT  io_uring
  b  4k randread  QD32  buffered  io_uring, file fully in the page cache
  c  4k randwrite QD32  O_DIRECT  io_uring
  d  64k seq read QD4   O_DIRECT  io_uring
  e  null engine, 4k randread QD128 (no file)

Options:
  --runs N        runs per tool and job (default $RUNS)
  --runtime S     measured seconds per run (default $RUNTIME; plus ${RAMP}s ramp)
  --ramp S        ramp seconds (default $RAMP)
  --size SIZE     test file size (default $SIZE)
  --dir DIR       where the test file goes (default: a temp dir under \${TMPDIR:-/tmp});
                  the file and scratch files are deleted at the end, DIR itself is kept
  --jobs LIST     comma-separated subset of a,b,c,d,e (default all)
  --csv FILE      per-run CSV (default \${TMPDIR:-/tmp}/compare-fio-<time>.csv). An existing
                  file is appended to and the table covers every job in it, so a long
                  comparison can be run in pieces (--jobs a,b then --jobs c,d,e, same --csv)
  --storbench P   storbench binary (default \$STORBENCH or $SCRIPT_DIR/../target/release/storbench)
  --fio P         fio binary (default \$FIO or fio from PATH)
  --quick         smoke test: 2 runs, 3 s, 512M file
  -h, --help      this text

Run it in the foreground on an otherwise quiet machine; it takes about
runs x jobs x 2 x (runtime + ramp + ~1 s).
EOF
}

die() { echo "error: $*" >&2; exit 1; }
log() { echo "$*" >&2; }

parse_args() {
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --runs)      RUNS=${2:?}; shift 2 ;;
            --runtime)   RUNTIME=${2:?}; shift 2 ;;
            --ramp)      RAMP=${2:?}; shift 2 ;;
            --size)      SIZE=${2:?}; shift 2 ;;
            --dir)       DIR=${2:?}; shift 2 ;;
            --jobs)      JOBS=${2:?}; shift 2 ;;
            --csv)       CSV=${2:?}; shift 2 ;;
            --storbench) STORBENCH=${2:?}; shift 2 ;;
            --fio)       FIO=${2:?}; shift 2 ;;
            --quick)     RUNS=2; RUNTIME=3; SIZE=512M; shift ;;
            -h|--help)   usage; exit 0 ;;
            *)           usage >&2; die "unknown option: $1" ;;
        esac
    done
    [[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive integer"
    [[ $RUNTIME =~ ^[1-9][0-9]*$ ]] || die "--runtime must be whole seconds"
    [[ $RAMP =~ ^[0-9]+$ ]] || die "--ramp must be whole seconds"
    local j
    for j in ${JOBS//,/ }; do
        [[ $j =~ ^[a-e]$ ]] || die "unknown job '$j' (choose from a,b,c,d,e)"
    done
}

# ---------------------------------------------------------------------------
# Job definitions: pattern, block size, queue depth and kind.
# kind decides how the file is prepared and which noise check applies:
#   direct = O_DIRECT on the test file, cached = buffered from a fully cached file,
#   null = no file at all.
# ---------------------------------------------------------------------------
declare -A JOB_RW=(   [a]=randread [b]=randread [c]=randwrite [d]=read  [e]=randread )
declare -A JOB_BS=(   [a]=4k       [b]=4k       [c]=4k        [d]=64k   [e]=4k )
declare -A JOB_QD=(   [a]=32       [b]=32       [c]=32        [d]=4     [e]=128 )
declare -A JOB_KIND=( [a]=direct   [b]=cached   [c]=direct    [d]=direct [e]=null )
declare -A JOB_DESC=(
    [a]="4k randread QD32 direct io_uring"
    [b]="4k randread QD32 page cache"
    [c]="4k randwrite QD32 direct io_uring"
    [d]="64k seq read QD4 direct io_uring"
    [e]="null engine 4k randread QD128"
)

# ---------------------------------------------------------------------------
# Tools and setup
# ---------------------------------------------------------------------------
check_tools() {
    command -v "$FIO" >/dev/null 2>&1 ||
        die "fio not found ('$FIO'). Install it with: apt-get install -y fio (or set FIO=/path/to/fio)"
    [[ -x $STORBENCH ]] || STORBENCH=$(command -v "$STORBENCH" 2>/dev/null) ||
        die "storbench not found. Build it with: (cd $SCRIPT_DIR/.. && cargo build --release), or pass --storbench PATH"
    [[ -x $STORBENCH ]] ||
        die "storbench not found. Build it with: (cd $SCRIPT_DIR/.. && cargo build --release), or pass --storbench PATH"
    command -v python3 >/dev/null 2>&1 || die "python3 is needed to parse the JSON results"
    # /usr/bin/time gives each tool's whole-process CPU, which the foreign-CPU estimate needs.
    [[ -x /usr/bin/time ]] || die "/usr/bin/time not found; install it with: apt-get install -y time"
}

WORK=""           # scratch dir (test file, storbench bundles, helper script)
OWN_WORK=0        # 1 if we created WORK and may delete it whole
TESTFILE=""

cleanup() {
    local rc=$?
    if [[ -n $WORK && -d $WORK ]]; then
        if [[ $OWN_WORK == 1 ]]; then
            rm -rf -- "$WORK"
        else
            # The user's --dir: remove only what we put there.
            rm -rf -- "$WORK/cmp.dat" "$WORK/sb-out" "$WORK/run" "$WORK/cmp_helper.py"
        fi
    fi
    exit "$rc"
}

setup_dirs() {
    if [[ -z $DIR ]]; then
        WORK=$(mktemp -d "${TMPDIR:-/tmp}/compare-fio.XXXXXX")
        OWN_WORK=1
    else
        mkdir -p -- "$DIR"
        WORK=$(cd "$DIR" && pwd)
    fi
    trap cleanup EXIT
    trap 'exit 130' INT TERM
    mkdir -p "$WORK/sb-out" "$WORK/run"
    TESTFILE=$WORK/cmp.dat

    local stamp
    stamp=$(date +%Y%m%d-%H%M%S)
    [[ -n $CSV ]] || CSV=${TMPDIR:-/tmp}/compare-fio-$stamp.csv
    # Raw JSON of every run is kept next to the CSV, so odd numbers can be inspected later.
    RAWDIR=${CSV%.csv}.raw
    mkdir -p "$RAWDIR"
    write_helper
}

# Block device behind --dir, for the foreign disk I/O count ("" if there is none, e.g. tmpfs).
DEV=""
find_device() {
    local src name
    src=$(findmnt -n -o SOURCE -T "$WORK" 2>/dev/null | head -1 || true)
    name=$(basename -- "${src:-none}")
    [[ -r /sys/class/block/$name/stat ]] && DEV=$name
    return 0
}

print_machine() {
    local mnt sched="" parent
    mnt=$(findmnt -n -o SOURCE,FSTYPE,OPTIONS -T "$WORK" 2>/dev/null | head -1 || echo "?")
    if [[ -n $DEV ]]; then
        parent=$DEV
        [[ -r /sys/class/block/$DEV/queue/scheduler ]] ||
            parent=$(lsblk -no PKNAME "/dev/$DEV" 2>/dev/null | head -1 || echo "$DEV")
        sched=$(cat "/sys/class/block/$parent/queue/scheduler" 2>/dev/null || true)
    fi
    echo "== machine"
    echo "cpu:        $(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -1) ($(nproc) cores online)"
    echo "memory:     $(awk '/^MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
    echo "kernel:     $(uname -r)"
    echo "test dir:   $WORK"
    echo "filesystem: $mnt"
    echo "device:     ${DEV:-none found (no foreign disk I/O check)}${sched:+, scheduler: $sched}"
    echo "fio:        $("$FIO" --version 2>&1 | head -1) ($(command -v "$FIO"))"
    echo "storbench:  $("$STORBENCH" --version 2>&1 | head -1) ($STORBENCH)"
    echo "load avg:   $(cut -d' ' -f1-3 /proc/loadavg) at start"
    echo "settings:   runs=$RUNS runtime=${RUNTIME}s ramp=${RAMP}s size=$SIZE jobs=$JOBS"
    echo "csv:        $CSV"
    echo
}

# ---------------------------------------------------------------------------
# Test file handling
# ---------------------------------------------------------------------------

# storbench creates the file (it marks files it created and refuses to overwrite others),
# then fio only reads and writes inside it. A short storbench run is the way to create it.
prepare_file() {
    log "== creating $TESTFILE ($SIZE) with storbench"
    "$STORBENCH" io --target "$TESTFILE" --size "$SIZE" --rw randread --bs 4k --iodepth 1 \
        --runtime 1s --ramp 0s --engine psync --json --output-dir "$WORK/sb-out" \
        >"$WORK/run/prep.json" 2>"$WORK/run/prep.err" || {
        cat "$WORK/run/prep.err" >&2
        die "storbench could not create the test file"
    }
    local want have
    want=$(python3 "$HELPER" size "$SIZE")
    have=$(stat -c %s "$TESTFILE")
    [[ $want == "$have" ]] || die "test file is $have bytes, expected $want"
}

# Drop the test file from the page cache, so every O_DIRECT run starts the same way
# (fio does this itself by default with invalidate=1; storbench may not), and so O_DIRECT
# writes do not pay for invalidating cached pages left over from job b.
drop_file_cache() {
    python3 - "$TESTFILE" <<'EOF'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
os.close(fd)
EOF
}

# Percentage of the test file resident in the page cache.
cached_pct() {
    local res size
    res=$(fincore --bytes --noheadings --output RES "$TESTFILE" 2>/dev/null | tr -d ' ' || true)
    size=$(stat -c %s "$TESTFILE")
    [[ -n $res ]] || { echo ""; return 0; }
    awk -v r="$res" -v s="$size" 'BEGIN { printf "%.1f", 100 * r / s }'
}

# Job b needs the whole file in the page cache; two passes of cat as io-peers.md does.
warm_file_cache() {
    cat "$TESTFILE" >/dev/null
    cat "$TESTFILE" >/dev/null
    local pct
    pct=$(cached_pct)
    if [[ -n $pct ]] && awk -v p="$pct" 'BEGIN { exit !(p < 99) }'; then
        log "warning: only $pct% of the test file is cached before the page-cache run"
    fi
}

# ---------------------------------------------------------------------------
# Command lines. Both tools get the same pattern, block size, depth, engine, ramp
# and runtime; fio gets the common options of io-peers.md section 3.
# ---------------------------------------------------------------------------
storbench_cmd() {
    local job=$1 run=$2
    local -a cmd=("$STORBENCH" io --rw "${JOB_RW[$job]}" --bs "${JOB_BS[$job]}"
        --iodepth "${JOB_QD[$job]}" --runtime "${RUNTIME}s" --ramp "${RAMP}s"
        --json --output-dir "$WORK/sb-out" --name "cmp-$job-$run")
    case ${JOB_KIND[$job]} in
        direct) cmd+=(--target "$TESTFILE" --size "$SIZE" --engine io_uring) ;;
        cached) cmd+=(--target "$TESTFILE" --size "$SIZE" --engine io_uring --buffered) ;;
        null)   cmd+=(--engine null) ;;
    esac
    printf '%q ' "${cmd[@]}"
}

fio_cmd() {
    local job=$1 out=$2
    local -a cmd=("$FIO" --name="$job" --rw="${JOB_RW[$job]}" --bs="${JOB_BS[$job]}"
        --iodepth="${JOB_QD[$job]}" --time_based --ramp_time="$RAMP" --runtime="$RUNTIME"
        --group_reporting --lat_percentiles=1 --percentile_list=50:90:99:99.9
        --output-format=json --output="$out")
    case ${JOB_KIND[$job]} in
        direct) cmd+=(--filename="$TESTFILE" --size="$SIZE" --ioengine=io_uring --direct=1) ;;
        # invalidate=0: by default fio drops the file's pages when it opens it.
        cached) cmd+=(--filename="$TESTFILE" --size="$SIZE" --ioengine=io_uring --direct=0 --invalidate=0) ;;
        null)   cmd+=(--ioengine=null --size=1T) ;;
    esac
    printf '%q ' "${cmd[@]}"
}

# ---------------------------------------------------------------------------
# Measurement of one run
# ---------------------------------------------------------------------------

# Busy and steal CPU seconds of the whole machine so far (from /proc/stat).
cpu_counters() {
    local _c user nice sys idle iowait irq softirq steal rest hz
    read -r _c user nice sys idle iowait irq softirq steal rest </proc/stat
    hz=$(getconf CLK_TCK)
    echo "$(( user + nice + sys + irq + softirq )) $steal $hz"
}

# Completed reads + writes on the test device so far.
dev_ios() {
    [[ -n $DEV ]] || { echo 0; return 0; }
    local r _1 _2 _3 w _rest
    read -r r _1 _2 _3 w _rest <"/sys/class/block/$DEV/stat"
    echo $(( r + w ))
}

# run_one TOOL JOB RUN: run one tool once, measure the machine around it, append a CSV row.
run_one() {
    local tool=$1 job=$2 run=$3
    local json="$RAWDIR/$job-$run-$tool.json" err="$RAWDIR/$job-$run-$tool.stderr"
    local timef="$WORK/run/$job-$run-$tool.time"
    local cmd

    case ${JOB_KIND[$job]} in
        direct) drop_file_cache ;;
        cached) warm_file_cache ;;
    esac

    if [[ $tool == storbench ]]; then
        cmd="$(storbench_cmd "$job" "$run") >$(printf '%q' "$json")"
    else
        cmd=$(fio_cmd "$job" "$json")
    fi

    local c0 c1 d0 d1 t0 t1 status=ok
    c0=$(cpu_counters); d0=$(dev_ios); t0=$(date +%s.%N)
    # Run in $WORK so nothing lands in the caller's directory; /usr/bin/time gives the
    # tool's total CPU (all threads and children), needed for the foreign-CPU estimate.
    (cd "$WORK" && /usr/bin/time -f "%U %S" -o "$timef" bash -c "$cmd") 2>"$err" || status=failed
    t1=$(date +%s.%N); d1=$(dev_ios); c1=$(cpu_counters)

    if [[ $status == failed ]]; then
        log "!! $tool failed on job $job run $run. Command:"
        log "   $cmd"
        log "   stderr:"
        sed 's/^/   | /' "$err" >&2
        [[ -s $json ]] && { log "   stdout/json:"; head -c 2000 "$json" | sed 's/^/   | /' >&2; }
    fi

    local pct=""
    [[ ${JOB_KIND[$job]} == cached ]] && pct=$(cached_pct)

    python3 "$HELPER" record --csv "$CSV" --job "$job" --run "$run" --tool "$tool" \
        --kind "${JOB_KIND[$job]}" --json "$json" --status "$status" \
        --t0 "$t0" --t1 "$t1" --cpu0 "$c0" --cpu1 "$c1" --dev0 "$d0" --dev1 "$d1" \
        --proc-cpu "$(cat "$timef" 2>/dev/null | tail -1)" --ramp "$RAMP" \
        --cached-pct "$pct" \
        --max-foreign-io "$MAX_FOREIGN_IO_PCT" --max-foreign-cpu "$MAX_FOREIGN_CPU_CORES"
}

# ---------------------------------------------------------------------------
# Python helper: JSON parsing, per-run CSV rows, and the medians table.
# Kept in one place so the bash above only does process plumbing.
# ---------------------------------------------------------------------------
HELPER=""
write_helper() {
    HELPER=$WORK/cmp_helper.py
    cat >"$HELPER" <<'PYEOF'
import csv, json, os, re, statistics, sys

FIELDS = ["job", "run", "tool", "status", "iops", "mb_s", "cpu_us_per_io",
          "measured_cpu_s", "measured_s", "wall_s", "proc_cpu_s",
          "foreign_cpu_cores", "steal_cores", "dev_ios", "foreign_io_pct",
          "cached_pct_after", "noisy", "note"]

def parse_size(s):
    m = re.fullmatch(r"(\d+)([KMGT]?)(i?B)?", s.strip(), re.I)
    if not m:
        sys.exit(f"bad size {s}")
    return int(m.group(1)) * 1024 ** " KMGT".index((m.group(2) or " ").upper())

def from_storbench(path):
    d = json.load(open(path))
    r = d["results"]
    ios = r["read"]["ios"] + r["write"]["ios"]
    iops = r["read"]["iops"] + r["write"]["iops"]
    bps = r["read"]["bytes_per_sec"] + r["write"]["bytes_per_sec"]
    cpu = d["cpu"]["user_s"] + d["cpu"]["sys_s"]
    notes = []
    if not d.get("complete", True):
        notes.append("incomplete")
    if d.get("warnings"):
        notes.append("warnings: " + "; ".join(map(str, d["warnings"])))
    if r.get("errors", {}).get("total"):
        notes.append(f"{r['errors']['total']} I/O errors")
    # storbench reports ns_per_io = (user_s + sys_s) / ios; use it, cross-checked.
    us = d["cpu"]["ns_per_io"] / 1000 if ios else float("nan")
    if ios and abs(us - cpu / ios * 1e6) > 0.01 * us:
        notes.append(f"ns_per_io {us:.3f}us != (user+sys)/ios {cpu/ios*1e6:.3f}us")
    return dict(iops=iops, mb_s=bps / 1e6, cpu_us_per_io=us, measured_cpu_s=cpu,
                measured_s=d["phases"]["measured_s"], ios=ios, note=" | ".join(notes))

def from_fio(path):
    d = json.load(open(path))
    j = d["jobs"][0]
    # usr_cpu/sys_cpu: percent of one core over the job's measured runtime (ramp excluded),
    # taken from the job process's rusage. CPU-us/IO = (usr+sys)/100 / IOPS * 1e6, as io-peers.md.
    iops = j["read"]["iops"] + j["write"]["iops"]
    ios = j["read"]["total_ios"] + j["write"]["total_ios"]
    bps = (j["read"]["bw_bytes"] + j["write"]["bw_bytes"])
    cores = (j["usr_cpu"] + j["sys_cpu"]) / 100
    runtime_s = j["job_runtime"] / 1000
    notes = []
    if j.get("error"):
        notes.append(f"fio error {j['error']}")
    return dict(iops=iops, mb_s=bps / 1e6,
                cpu_us_per_io=cores / iops * 1e6 if iops else float("nan"),
                measured_cpu_s=cores * runtime_s, measured_s=runtime_s, ios=ios,
                note=" | ".join(notes))

def opt(args, name, default=""):
    return args[args.index(name) + 1] if name in args else default

def record(args):
    a = {k: opt(args, "--" + k) for k in
         ["csv", "job", "run", "tool", "kind", "json", "status", "t0", "t1", "cpu0", "cpu1",
          "dev0", "dev1", "proc-cpu", "ramp", "cached-pct",
          "max-foreign-io", "max-foreign-cpu"]}
    row = dict.fromkeys(FIELDS, "")
    row.update(job=a["job"], run=a["run"], tool=a["tool"], status=a["status"])
    m = None
    if a["status"] == "ok":
        try:
            m = (from_storbench if a["tool"] == "storbench" else from_fio)(a["json"])
        except Exception as e:  # unparsable output counts as a failed run
            row["status"] = "failed"
            row["note"] = f"cannot parse {a['json']}: {e}"
            print(f"!! {row['note']}", file=sys.stderr)
    if m is not None:
        for k in ("iops", "mb_s", "cpu_us_per_io", "measured_cpu_s", "measured_s", "note"):
            row[k] = m[k]

    wall = float(a["t1"]) - float(a["t0"])
    busy0, steal0, hz = map(int, a["cpu0"].split())
    busy1, steal1, _ = map(int, a["cpu1"].split())
    busy_s = (busy1 - busy0) / hz
    row["wall_s"] = wall
    row["steal_cores"] = (steal1 - steal0) / hz / wall
    pc = a["proc-cpu"].split()
    if len(pc) == 2:
        proc = float(pc[0]) + float(pc[1])
        row["proc_cpu_s"] = proc
        # Everything the machine did besides this tool, in cores, over the whole invocation.
        row["foreign_cpu_cores"] = max(0.0, (busy_s - proc) / wall)
    dev = int(a["dev1"]) - int(a["dev0"])
    row["dev_ios"] = dev
    row["cached_pct_after"] = a["cached-pct"]

    noisy = []
    if m is not None and a["kind"] == "direct" and m["ios"]:
        # The tool itself issued about ios * (ramp + runtime) / runtime device I/Os.
        own = m["ios"] * (float(a["ramp"]) + m["measured_s"]) / m["measured_s"]
        row["foreign_io_pct"] = 100 * (dev - own) / own
        if row["foreign_io_pct"] > float(a["max-foreign-io"]):
            noisy.append("disk")
    if a["kind"] in ("cached", "null") and row["foreign_cpu_cores"] != "" \
            and row["foreign_cpu_cores"] > float(a["max-foreign-cpu"]):
        noisy.append("cpu")
    row["noisy"] = "+".join(noisy)

    new = not os.path.exists(a["csv"]) or os.path.getsize(a["csv"]) == 0
    with open(a["csv"], "a", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        if new:
            w.writeheader()
        w.writerow({k: (round(v) if k == "iops" and isinstance(v, float) else
                        round(v, 4) if isinstance(v, float) else v) for k, v in row.items()})

    # One progress line per run.
    if m is not None:
        fc = row["foreign_cpu_cores"]
        fi = row["foreign_io_pct"]
        print(f"  {a['job']} run {a['run']:>2} {a['tool']:<9} {m['iops']:>12,.0f} IOPS "
              f"{m['cpu_us_per_io']:>8.3f} CPU-us/IO  foreign cpu "
              f"{fc if fc == '' else f'{fc:.2f}'} cores"
              + (f", foreign disk {fi:+.0f}%" if fi != "" else "")
              + (f"  NOISY({row['noisy']})" if row["noisy"] else "")
              + (f"  [{row['note']}]" if row["note"] else ""), flush=True)
    else:
        print(f"  {a['job']} run {a['run']:>2} {a['tool']:<9} FAILED", flush=True)

def fmt_iops(x):
    return "-" if x is None else f"{x:,.0f}"

def fmt_us(x):
    return "-" if x is None else f"{x:.3f}"

def ratio(a, b):
    return "-" if a is None or b is None or b == 0 else f"{a / b:.2f}"

def med(rows, tool, key):
    v = [float(r[key]) for r in rows if r["tool"] == tool and r["status"] == "ok" and r[key] != ""]
    return (statistics.median(v) if v else None), len(v)

def short(x):
    return f"{x/1e6:.2f}M" if x >= 1e6 else f"{x/1e3:.0f}k"

def spread(rows, tool):
    v = [float(r["iops"]) for r in rows if r["tool"] == tool and r["status"] == "ok"]
    return f"{short(min(v))}-{short(max(v))}" if v else "-"

def table(rows, jobs, desc, title):
    print(title)
    hdr = (f"{'job':<3} {'workload':<34} {'n sb/fio':>8}  {'storbench IOPS':>14} {'fio IOPS':>12} "
           f"{'ratio':>5}  {'sb CPU-us/IO':>12} {'fio CPU-us/IO':>13} {'ratio':>5}  "
           f"{'noisy sb/fio':>12}  {'IOPS range sb | fio':<25}")
    print(hdr)
    print("-" * len(hdr))
    for j in jobs:
        jr = [r for r in rows if r["job"] == j]
        si, sn = med(jr, "storbench", "iops")
        fi, fn = med(jr, "fio", "iops")
        sc, _ = med(jr, "storbench", "cpu_us_per_io")
        fc, _ = med(jr, "fio", "cpu_us_per_io")
        n_runs = f"{sn}/{fn}"
        n_noisy = "{}/{}".format(*(sum(1 for r in jr if r["tool"] == t and r["noisy"])
                                   for t in ("storbench", "fio")))
        ranges = spread(jr, "storbench") + " | " + spread(jr, "fio")
        failed = sum(1 for r in jr if r["status"] != "ok")
        print(f"{j:<3} {desc[j]:<34} {n_runs:>8}  {fmt_iops(si):>14} {fmt_iops(fi):>12} "
              f"{ratio(si, fi):>5}  {fmt_us(sc):>12} {fmt_us(fc):>13} {ratio(sc, fc):>5}  "
              f"{n_noisy:>12}  {ranges:<25}"
              + (f"  ({failed} failed)" if failed else ""))
    print()

def summary(args):
    path = args[0]
    desc = dict(x.split("=", 1) for x in args[1:])
    rows = list(csv.DictReader(open(path)))
    jobs = [j for j in desc if any(r["job"] == j for r in rows)]
    table(rows, jobs, desc, "== medians over all runs "
          "(ratio = storbench / fio; IOPS: higher is better, CPU-us/IO: lower is better)")
    if any(r["noisy"] for r in rows):
        clean = [r for r in rows if not r["noisy"]]
        table(clean, jobs, desc, "== medians over clean runs only (noisy runs dropped)")

cmd, rest = sys.argv[1], sys.argv[2:]
if cmd == "size":
    print(parse_size(rest[0]))
elif cmd == "record":
    record(rest)
elif cmd == "summary":
    summary(rest)
else:
    sys.exit(f"unknown helper command {cmd}")
PYEOF
}

# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------
main() {
    parse_args "$@"
    check_tools
    setup_dirs
    find_device
    print_machine

    local needs_file=0 job
    for job in ${JOBS//,/ }; do
        [[ ${JOB_KIND[$job]} == null ]] || needs_file=1
    done
    [[ $needs_file == 0 ]] || prepare_file

    # Interleave per job: storbench run 1, fio run 1, storbench run 2, ... so both tools
    # see the same drift of the shared host over the job's time window.
    local run
    for job in ${JOBS//,/ }; do
        echo "== job $job: ${JOB_DESC[$job]}"
        echo "   storbench: $(storbench_cmd "$job" N)"
        echo "   fio:       $(fio_cmd "$job" "$RAWDIR/$job-N-fio.json")"
        for (( run = 1; run <= RUNS; run++ )); do
            run_one storbench "$job" "$run"
            run_one fio "$job" "$run"
        done
        echo
    done

    # All job names go to the summary: it reports every job present in the CSV.
    local -a desc=()
    for job in a b c d e; do desc+=("$job=${JOB_DESC[$job]}"); done
    python3 "$HELPER" summary "$CSV" "${desc[@]}" | tee "${CSV%.csv}.summary.txt"
    echo "per-run numbers: $CSV"
    echo "raw JSON:        $RAWDIR/"
    echo "noisy = foreign device I/O > ${MAX_FOREIGN_IO_PCT}% (O_DIRECT jobs) or foreign CPU > ${MAX_FOREIGN_CPU_CORES} core (jobs b, e)"
}

main "$@"
