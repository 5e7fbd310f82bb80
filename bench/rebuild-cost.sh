#!/usr/bin/env bash
# rebuild-cost.sh: what a mirror rebuild costs each of the six SQLIO profiles, on a btrfs RAID1
# of loop devices, measured three ways (002's "Normal" and "Vol Rebuild", plus a real rebuild):
#
#   normal    the profile alone on a file of the RAID1
#   emulated  the same with `--background rebuild:...` (storbench's emulated mirror rebuild:
#             a sequential copy between two files of its own on the same RAID1, by default
#             unthrottled: 002's "Vol Rebuild")
#   replace   the same while the kernel really rebuilds: `btrfs replace start -B` of member 2
#             onto a spare loop device, started by storbench as `--background 'cmd:...'` when
#             the measured phase starts, with --background-wait so the run ends when the
#             replace has finished and every next run starts on a whole, idle mirror. The two
#             spares take turns (member 2 goes to whichever loop device is out of the RAID1),
#             so there is nothing to restore between runs.
#
# Per run it keeps the workload's IOPS and p99 latency, the emulated copy's rate, and for a
# replace its progress second by second from the run's series (`rebuild.<mount>.pct_done` in
# timeseries.csv), how many measured seconds it was under way, the IOPS over those seconds,
# and how long it took (the command's seconds in summary.json). After each round of profiles
# one replace runs with no foreground load, timed and polled the same way: the other half of
# the trade a storage admin tunes with speed_limit_min/max (btrfs: scrub_speed_max).
#
# Runs are interleaved (for each round, for each profile: normal, emulated, replace), medians
# over rounds. The loop devices do direct I/O on files under --dir on the real disk, so the
# page cache does not absorb the copy; they share that one disk, as a Vol Rebuild does.
#
# Usage: bench/rebuild-cost.sh [--runs N] [--runtime S] [--profiles LIST] [--quick] ...
#        run with --help for the full list. Runs as root (loop devices, mkfs, mount).

set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# ---------------------------------------------------------------------------
# Defaults (overridable by options or environment)
# ---------------------------------------------------------------------------
RUNS=3              # rounds: each profile measured RUNS times in each condition
RUNTIME=10          # seconds of measured phase per run
RAMP=2              # seconds of warm-up, excluded from the results
LOOP_SIZE=10G       # each loop device's backing file (sparse; room for the chunks COW leaves behind)
FILE_SIZE=1536M     # the workload's file on the RAID1
EMULATED="rebuild:" # the emulated rebuild's spec (storbench's defaults: size=256MiB, unthrottled)
REPLACE_RATE=0      # btrfs scrub_speed_max of member 2 while it is replaced (bytes/s; 0: unthrottled)
PROFILES=all
CONDITIONS="normal,emulated,replace"
DIR=/var/tmp        # where the backing files go (a temp dir under it, removed at the end)
CSV=""              # empty: ${TMPDIR:-/tmp}/rebuild-cost-<stamp>.csv
STORBENCH=${STORBENCH:-$SCRIPT_DIR/../target/release/storbench}
SUMMARIZE=""        # a past run's CSV: read its rows again from the raw output beside it

usage() {
    cat <<EOF
Usage: $0 [options]

Measures the six SQLIO profiles on a btrfs RAID1 of two loop devices: normal, beside
storbench's emulated rebuild (--background $EMULATED), and during a real 'btrfs replace' of
one member onto a third loop device; prints medians and "% of normal" per profile, the
replace's progress under each profile's load and how long it took without load.

Options:
  --runs N          rounds (each profile and condition once per round; default $RUNS)
  --runtime S       measured seconds per run (default $RUNTIME; plus ${RAMP}s ramp)
  --ramp S          ramp seconds (default $RAMP)
  --profiles LIST   comma-separated subset of the SQLIO profiles (default all:
                    $(profile_names | paste -sd, -))
  --conditions LIST comma-separated subset of normal,emulated,replace (default all)
  --emulated SPEC   the emulated rebuild's --background spec (default '$EMULATED':
                    storbench's own files beside the test file, 256 MiB copied in a loop,
                    unthrottled); e.g. rebuild:rate=40MiB
  --replace-rate R  cap the real replace at R bytes/s (btrfs scrub_speed_max of the replaced
                    member, e.g. 50m; default 0: unthrottled, as the kernel's default)
  --loop-size SIZE  each loop device's backing file (default $LOOP_SIZE)
  --file-size SIZE  the workload's file (default $FILE_SIZE); the replace copies it, the
                    emulated rebuild's two files and the metadata
  --dir DIR         where the backing files go (default $DIR; must be a real disk, not tmpfs)
  --csv FILE        per-run CSV (default \${TMPDIR:-/tmp}/rebuild-cost-<time>.csv); each run's
                    summary.json and timeseries.csv are kept beside it in FILE's name with .raw
  --storbench P     storbench binary (default \$STORBENCH or $SCRIPT_DIR/../target/release/storbench)
  --summarize CSV   measure nothing: read a past run's rows again from the raw output beside
                    its CSV (the replaces with no load as they were) and print its table
  --quick           smoke test: 1 round, 3 s runs, 1 s ramp, two profiles, 2G loops, 256M file
  -h, --help        this text

It takes about runs x profiles x (3 x (runtime + ramp + 2 s) + the replace's tail after the
measured phase) plus a timed replace per round: about 15 minutes with the defaults.
Everything it made (mount, loop devices, backing files) is removed at the end, also on Ctrl-C.
EOF
}

die() { echo "error: $*" >&2; exit 1; }
log() { echo "$*" >&2; }

# The six SQLIO profiles (as `storbench io --profile sqlio` runs them): name, rw, bs, depth.
PROFILE_TABLE="
randread-8k-qd4  randread  8k  4
randwrite-8k-qd4 randwrite 8k  4
read-64k-qd4     read      64k 4
write-64k-qd4    write     64k 4
randread-8k-qd1  randread  8k  1
randwrite-8k-qd1 randwrite 8k  1
"
profile_names() { awk 'NF { print $1 }' <<<"$PROFILE_TABLE"; }
profile_field() { awk -v p="$1" -v f="$2" '$1 == p { print $f }' <<<"$PROFILE_TABLE"; }

parse_args() {
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --runs)         RUNS=${2:?}; shift 2 ;;
            --runtime)      RUNTIME=${2:?}; shift 2 ;;
            --ramp)         RAMP=${2:?}; shift 2 ;;
            --profiles)     PROFILES=${2:?}; shift 2 ;;
            --conditions)   CONDITIONS=${2:?}; shift 2 ;;
            --emulated)     EMULATED=${2:?}; shift 2 ;;
            --replace-rate) REPLACE_RATE=${2:?}; shift 2 ;;
            --loop-size)    LOOP_SIZE=${2:?}; shift 2 ;;
            --file-size)    FILE_SIZE=${2:?}; shift 2 ;;
            --dir)          DIR=${2:?}; shift 2 ;;
            --csv)          CSV=${2:?}; shift 2 ;;
            --storbench)    STORBENCH=${2:?}; shift 2 ;;
            --summarize)    SUMMARIZE=${2:?}; shift 2 ;;
            --quick)        RUNS=1; RUNTIME=3; RAMP=1; LOOP_SIZE=2G; FILE_SIZE=256M
                            PROFILES=randread-8k-qd4,write-64k-qd4; shift ;;
            -h|--help)      usage; exit 0 ;;
            *)              usage >&2; die "unknown option: $1" ;;
        esac
    done
    [[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive integer"
    [[ $RUNTIME =~ ^[1-9][0-9]*$ ]] || die "--runtime must be whole seconds"
    [[ $RAMP =~ ^[0-9]+$ ]] || die "--ramp must be whole seconds"
    [[ $REPLACE_RATE =~ ^[0-9]+[kmgKMG]?$ ]] || die "--replace-rate must be bytes/s such as 50m, or 0"
    [[ $EMULATED == rebuild* ]] || die "--emulated must be a rebuild spec, such as rebuild:rate=40MiB"
    [[ $PROFILES != all ]] || PROFILES=$(profile_names | paste -sd, -)
    local p c
    for p in ${PROFILES//,/ }; do
        [[ -n $(profile_field "$p" 2) ]] ||
            die "unknown profile '$p' (choose from $(profile_names | paste -sd, -))"
    done
    for c in ${CONDITIONS//,/ }; do
        [[ $c =~ ^(normal|emulated|replace)$ ]] ||
            die "unknown condition '$c' (choose from normal,emulated,replace)"
    done
}

check_tools() {
    [[ $(id -u) == 0 ]] || die "run as root: it attaches loop devices, makes a btrfs and mounts it"
    local t
    for t in losetup blkdiscard mkfs.btrfs btrfs findmnt python3; do
        command -v "$t" >/dev/null 2>&1 ||
            die "$t not found; install it with: apt-get install -y btrfs-progs util-linux python3"
    done
    [[ -x $STORBENCH ]] || STORBENCH=$(command -v "$STORBENCH" 2>/dev/null) ||
        die "storbench not found. Build it with: (cd $SCRIPT_DIR/.. && cargo build --release -p storbench), or pass --storbench PATH"
    # Runs start in the work directory: a relative path would no longer name the binary.
    STORBENCH=$(realpath -- "$STORBENCH")
    [[ -d $DIR ]] || die "--dir $DIR is not a directory"
    [[ $(findmnt -n -o FSTYPE -T "$DIR") != tmpfs ]] ||
        die "--dir $DIR is on tmpfs: the loop devices' backing files must be on a real disk"
}

# ---------------------------------------------------------------------------
# The RAID1 and its cleanup
# ---------------------------------------------------------------------------
WORK=""           # temp dir: backing files, the mount point, storbench's bundles
MNT=""
LOOPS=()          # member 1, member 2, spare (member 2 and the spare swap as runs replace)
MOUNTED=0
POLLER=""         # pid of the progress poller of a replace with no load, while it runs

cleanup() {
    local rc=$?
    trap - INT TERM
    [[ -z $POLLER ]] || kill "$POLLER" 2>/dev/null || true
    if [[ $MOUNTED == 1 ]]; then
        # A replace interrupted with its run (Ctrl-C) goes on in the kernel: stop it first.
        btrfs replace cancel "$MNT" >/dev/null 2>&1 || true
        local i
        for i in 1 2 3 4 5 6 7 8 9 10; do
            umount "$MNT" 2>/dev/null && break
            sleep 0.5
        done
        mountpoint -q "$MNT" && log "warning: could not unmount $MNT; detach ${LOOPS[*]} yourself"
    fi
    local dev
    for dev in "${LOOPS[@]}"; do
        losetup -d "$dev" 2>/dev/null || log "warning: could not detach $dev"
    done
    if [[ -n $WORK && -d $WORK ]] && ! mountpoint -q "$MNT"; then
        rm -rf -- "$WORK"
    fi
    exit "$rc"
}

setup_dirs() {
    WORK=$(mktemp -d "$DIR/rebuild-cost.XXXXXX")
    trap cleanup EXIT
    trap 'exit 130' INT TERM
    MNT=$WORK/mnt
    mkdir -p "$MNT" "$WORK/sb-out"
    local stamp
    stamp=$(date +%Y%m%d-%H%M%S)
    [[ -n $CSV ]] || CSV=${TMPDIR:-/tmp}/rebuild-cost-$stamp.csv
    RAWDIR=${CSV%.csv}.raw
    mkdir -p "$RAWDIR"
    write_helper
}

make_raid1() {
    local name dev
    for name in a b spare; do
        truncate -s "$LOOP_SIZE" "$WORK/$name.img"
        # Direct I/O to the backing file: the host's page cache would otherwise take the writes
        # of the mirror and of the rebuild, and the figures would be of memory.
        dev=$(losetup --find --show --direct-io=on "$WORK/$name.img") ||
            die "could not attach a loop device to $WORK/$name.img"
        LOOPS+=("$dev")
    done
    log "== btrfs RAID1 of ${LOOPS[0]} and ${LOOPS[1]} (spare ${LOOPS[2]}), $LOOP_SIZE each, on $WORK"
    mkfs.btrfs -q -f -d raid1 -m raid1 "${LOOPS[0]}" "${LOOPS[1]}" >"$WORK/mkfs.out" 2>&1 ||
        { cat "$WORK/mkfs.out" >&2; die "mkfs.btrfs failed"; }
    mount "${LOOPS[0]}" "$MNT" || die "could not mount ${LOOPS[0]} on $MNT"
    MOUNTED=1
    UUID=$(findmnt -n -o UUID "$MNT")
}

# The loop device that is member 2 now, and the one that is not in the RAID1.
member2() {
    btrfs filesystem show --raw "$MNT" | awk '$1 == "devid" && $2 == 2 { print $NF }'
}
spare() {
    local m2
    m2=$(member2)
    if [[ $m2 == "${LOOPS[1]}" ]]; then echo "${LOOPS[2]}"; else echo "${LOOPS[1]}"; fi
}

# The replace is paced by its source device's scrub throttle (0: none). The replace target
# takes member 2's devid, so the one setting holds for every replace.
set_replace_rate() {
    echo "$REPLACE_RATE" >"/sys/fs/btrfs/$UUID/devinfo/2/scrub_speed_max"
}

# -K: no whole-device trim of the new device first (settle did it before the run), so the
# replace's seconds are its copy's.
replace_cmd() {
    echo "btrfs replace start -B -f -K 2 $(spare) $MNT"
}

# Everything every condition needs, made before the first measured run, so every replace
# copies the same: the workload's file, and the emulated rebuild's two files (kept by storbench).
prepare() {
    log "== creating the test file ($FILE_SIZE) and the emulated rebuild's files with storbench"
    local -a bg=()
    [[ ,$CONDITIONS, != *,emulated,* ]] || bg=(--background "$EMULATED")
    "$STORBENCH" io --target "$MNT" --size "$FILE_SIZE" --rw read --bs 64k --iodepth 1 \
        --runtime 1s --ramp 0s "${bg[@]}" --json --output-dir "$WORK/sb-out/prep" \
        >"$RAWDIR/prep.json" 2>"$RAWDIR/prep.stderr" || {
        cat "$RAWDIR/prep.stderr" >&2
        die "storbench could not prepare the test files"
    }
    sync -f "$MNT"
    set_replace_rate
    log "   $(btrfs filesystem df "$MNT" | paste -sd';' - | tr -s ' ')"
}

# ---------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------

storbench_cmd() {
    local profile=$1 cond=$2 id=$3
    local -a cmd=("$STORBENCH" io --target "$MNT" --size "$FILE_SIZE"
        --rw "$(profile_field "$profile" 2)" --bs "$(profile_field "$profile" 3)"
        --iodepth "$(profile_field "$profile" 4)" --runtime "${RUNTIME}s" --ramp "${RAMP}s"
        --json --output-dir "$WORK/sb-out/$id" --name "$id")
    case $cond in
        emulated) cmd+=(--background "$EMULATED") ;;
        replace)  cmd+=(--background-wait --background "cmd:$(replace_cmd)") ;;
    esac
    printf '%q ' "${cmd[@]}"
}

# run_one PROFILE CONDITION ROUND: one storbench run, its bundle's summary and series kept,
# a CSV row appended.
run_one() {
    local profile=$1 cond=$2 round=$3
    local id="$profile-$cond-r$round" cmd status=ok target
    local json=$RAWDIR/$id.json err=$RAWDIR/$id.stderr
    target=$(spare)
    settle
    cmd=$(storbench_cmd "$profile" "$cond" "$id")
    (cd "$WORK" && bash -c "$cmd") >"$json" 2>"$err" || status=failed
    local bundle
    bundle=$(find "$WORK/sb-out/$id" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | head -1 || true)
    [[ -z $bundle ]] || cp "$bundle/timeseries.csv" "$RAWDIR/$id.timeseries.csv" 2>/dev/null || true
    if [[ $status == failed ]]; then
        log "!! storbench failed: $profile $cond round $round. Command:"
        log "   $cmd"
        sed 's/^/   | /' "$err" >&2
    fi
    rm -rf -- "$WORK/sb-out/$id"
    python3 "$HELPER" record --csv "$CSV" --profile "$profile" --condition "$cond" \
        --run "$round" --status "$status" --json "$json" --series "$RAWDIR/$id.timeseries.csv"
    if [[ $cond == replace && $(member2) != "$target" ]]; then
        log "!! the replace did not bring $target in (member 2 is $(member2)); the next runs use what is there"
    fi
}

# Every run starts from the same state: written data committed, and the chunks that copy-on-write
# emptied given back. The emulated rebuild rewrites its file at hundreds of MiB/s and leaves
# empty chunks faster than btrfs's cleaner removes them; a replace makes each chunk read-only
# as it copies it and fails with ENOSPC ("failed setting block group ro: -28") when no
# unallocated room is left for the writes that chunk would have taken.
# The spare is trimmed here, outside any measurement: on these loop devices a trim punches
# holes in the backing file, which takes as long as the file holds data.
settle() {
    sync -f "$MNT"
    btrfs balance start -dusage=0 -musage=0 "$MNT" >/dev/null 2>&1 ||
        log "warning: btrfs balance -dusage=0 failed; empty chunks stay allocated"
    blkdiscard -f "$(spare)" 2>/dev/null || log "warning: could not trim the spare $(spare)"
}

# A replace with no foreground load: timed, and its progress polled every second the same way
# the run's series reads it (`btrfs replace status -1`).
replace_alone() {
    local round=$1 cmd t0 t1 status=ok poll=$RAWDIR/alone-r$round.progress target w0 w1
    cmd=$(replace_cmd)
    target=$(spare)
    settle
    w0=$(sectors_written "$target")
    : >"$poll"
    (while :; do
        echo "$(date +%s.%N) $(btrfs replace status -1 "$MNT" 2>/dev/null | head -1)" >>"$poll"
        sleep 1
    done) &
    POLLER=$!
    t0=$(date +%s.%N)
    $cmd >"$RAWDIR/alone-r$round.out" 2>&1 || status=failed
    t1=$(date +%s.%N)
    w1=$(sectors_written "$target")
    kill "$POLLER" 2>/dev/null || true
    wait "$POLLER" 2>/dev/null || true
    POLLER=""
    [[ $status == ok ]] || { log "!! $cmd failed:"; sed 's/^/   | /' "$RAWDIR/alone-r$round.out" >&2; }
    python3 "$HELPER" alone --csv "$CSV" --run "$round" --status "$status" \
        --t0 "$t0" --t1 "$t1" --poll "$poll" --written $(( (w1 - w0) * 512 ))
}

# 512-byte sectors a block device has written since it was attached (its trim is not counted).
sectors_written() {
    awk '{ print $7 }' "/sys/class/block/$(basename -- "$1")/stat"
}

# ---------------------------------------------------------------------------
# Python helper: summary.json and timeseries.csv into CSV rows, and the medians table.
# ---------------------------------------------------------------------------
HELPER=""
write_helper() {
    HELPER=$WORK/rebuild_helper.py
    cat >"$HELPER" <<'PYEOF'
import csv, json, os, re, statistics, sys

FIELDS = ["profile", "condition", "run", "status", "iops", "mb_s", "p99_us", "copy_mib_s",
          "replace_s", "replace_exit", "replace_busy_s", "replace_pct_start", "replace_pct_end",
          "replace_pct_per_s", "replace_copy_mib_s", "iops_while_replacing", "rebuild_warnings",
          "note"]

def opt(args, name, default=""):
    return args[args.index(name) + 1] if name in args else default

def background(summary):
    bg = summary.get("background") or []
    return bg if isinstance(bg, list) else [bg]

def series(path):
    """The measured rows of timeseries.csv, and the one btrfs's rebuild column names."""
    if not os.path.exists(path):
        return [], None, None
    rows = list(csv.DictReader(open(path)))
    act = next((c for c in (rows[0].keys() if rows else []) if c.startswith("rebuild.") and c.endswith(".action")), None)
    pct = act[: -len("action")] + "pct_done" if act else None
    return [r for r in rows if r.get("phase") == "measure"], act, pct

def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None

REPLACE = 6  # rebuild.<stack>.action's code for a btrfs replace

def rate_between(points):
    """% per second from the first to the last (time, % done) reading. Only readings: btrfs
    counts % of the member's size and jumps to 100 % past its last chunk, so an assumed 100 %
    at the end would mix that jump in; the same rule under load and alone keeps them alike."""
    if len(points) < 2 or points[-1][0] <= points[0][0]:
        return None
    return (points[-1][1] - points[0][1]) / (points[-1][0] - points[0][0])

def replace_progress(rows, act, pct):
    """Measured seconds with a replace under way, its % done at the first and last of them,
    % per second over them, and the workload's mean IOPS in those seconds."""
    busy = [r for r in rows if act and num(r[act]) == REPLACE and num(r[pct]) is not None]
    if not busy:
        return 0, None, None, None, None, None
    points = [(num(r["t_s"]), num(r[pct])) for r in busy]
    iops = statistics.mean((num(r["read_iops"]) or 0) + (num(r["write_iops"]) or 0) for r in busy)
    return len(busy), points[0][1], points[-1][1], rate_between(points), iops, copy_rate(busy)

def copy_rate(busy):
    """MiB/s written to the replace's new device: the run's disk writes less the two members'
    own (the new device has no columns of its own; it joins the totals the second after it
    joined, so the first busy second is left out) less the workload's writes, which a replace
    mirrors onto the new device as it goes (its metadata and checksums stay in)."""
    members = [c for c in busy[0] if c.startswith("disk.") and c.endswith(".write_bytes_per_sec")]
    rates = []
    for r in busy[1:]:
        total = num(r.get("disk_write_bytes_per_sec"))
        if total is None:
            continue
        new = total - sum(num(r[c]) or 0 for c in members) - (num(r["write_bytes_per_sec"]) or 0)
        rates.append(max(0.0, new) / 2**20)
    return statistics.mean(rates) if rates else None

def record(args):
    a = {k: opt(args, "--" + k) for k in ["csv", "profile", "condition", "run", "status", "json", "series"]}
    row = run_row(a)
    write(a["csv"], row)
    show(a, row)

def run_row(a):
    """A measured run's CSV row from its summary.json and timeseries.csv."""
    row = dict.fromkeys(FIELDS, "")
    row.update(profile=a["profile"], condition=a["condition"], run=a["run"], status=a["status"])
    notes = []
    try:
        s = json.load(open(a["json"]))
    except Exception as e:
        s = None
        row["status"] = "failed"
        notes.append(f"no summary: {e}")
    if s is not None:
        r = s["results"]
        row["iops"] = r["read"]["iops"] + r["write"]["iops"]
        row["mb_s"] = (r["read"]["bytes_per_sec"] + r["write"]["bytes_per_sec"]) / 1e6
        # Each SQLIO profile goes one way: its p99 is that direction's.
        side = r["read"] if r["read"]["ios"] >= r["write"]["ios"] else r["write"]
        row["p99_us"] = side["lat_ns"]["p99"] / 1000
        if not s.get("complete", True):
            notes.append("incomplete")
        if r.get("errors", {}).get("total"):
            notes.append(f"{r['errors']['total']} I/O errors")
        # Only the warnings about storage rebuilding count (this machine has no power meter,
        # which every run says): in a normal or emulated run one means the run was not normal.
        said = [w for w in (s.get("warnings") or []) if "rebuilding" in str(w)]
        row["rebuild_warnings"] = len(said)
        if said and a["condition"] != "replace":
            notes.append("storage was rebuilding: " + "; ".join(map(str, said)))
        for b in background(s):
            if b.get("kind") == "rebuild":
                row["copy_mib_s"] = b["bytes_per_sec"] / 2**20
            elif b.get("kind") == "cmd":
                row["replace_s"] = b.get("seconds")
                row["replace_exit"] = "stopped" if b.get("stopped") else b.get("exit_code")
    if a["condition"] == "replace":
        rows, act, pct = series(a["series"])
        n, first, last, rate, iops, copy = replace_progress(rows, act, pct)
        row.update(replace_busy_s=n, replace_pct_start=first if first is not None else "",
                   replace_pct_end=last if last is not None else "",
                   replace_pct_per_s=rate if rate is not None else "",
                   replace_copy_mib_s=copy if copy is not None else "",
                   iops_while_replacing=iops if iops is not None else "")
        if not n:
            notes.append("no replace seen in the series")
        if row["replace_exit"] not in (0, "0"):
            notes.append(f"replace exit {row['replace_exit']}")
    row["note"] = " | ".join(notes)
    return row

def show(a, row):
    line = f"  {a['profile']:<17} {a['condition']:<9} run {a['run']:>2} "
    if row["iops"] == "":
        print(line + "FAILED  " + row["note"], flush=True)
        return
    line += f"{row['iops']:>9,.0f} IOPS  p99 {row['p99_us']:>9,.0f} us"
    if row["copy_mib_s"] != "":
        line += f"  copy {row['copy_mib_s']:.0f} MiB/s"
    if a["condition"] == "replace":
        line += (f"  replace {row['replace_s']:.1f} s, under way {row['replace_busy_s']} of the measured s"
                 if row["replace_s"] not in ("", None) else "  replace ?")
        if row["replace_copy_mib_s"] != "":
            line += f", copying {row['replace_copy_mib_s']:.0f} MiB/s"
    print(line + (f"  [{row['note']}]" if row["note"] else ""), flush=True)

def alone(args):
    a = {k: opt(args, "--" + k) for k in ["csv", "run", "status", "t0", "t1", "poll", "written"]}
    row = dict.fromkeys(FIELDS, "")
    row.update(profile="(none)", condition="alone", run=a["run"], status=a["status"])
    seconds = float(a["t1"]) - float(a["t0"])
    row["replace_s"] = seconds
    pts = []
    for line in open(a["poll"]):
        m = re.match(r"(\S+) (\d+(?:\.\d+)?)% done", line)
        if m:
            pts.append((float(m.group(1)), float(m.group(2))))
    if pts:
        rate = rate_between(pts)
        row.update(replace_busy_s=len(pts), replace_pct_start=pts[0][1], replace_pct_end=pts[-1][1],
                   replace_pct_per_s=rate if rate is not None else "")
    # What the new device took a second, over the whole replace (-K: no trim before the copy).
    if a["written"] and seconds > 0:
        row["replace_copy_mib_s"] = int(a["written"]) / 2**20 / seconds
    write(a["csv"], row)
    print(f"  {'(no load)':<17} {'alone':<9} run {a['run']:>2}  replace took {seconds:.1f} s"
          + (f", copying {row['replace_copy_mib_s']:.0f} MiB/s" if row["replace_copy_mib_s"] != "" else ""),
          flush=True)

def redo(args):
    """The CSV again from the raw output kept beside it (after a change to how a run is read):
    every measured run's row anew, the rows of replaces with no load as they were."""
    path = args[0]
    raw = path[: -len(".csv")] + ".raw"
    old = list(csv.DictReader(open(path)))
    os.rename(path, path + ".old")
    for r in old:
        if r["condition"] == "alone":
            row = dict.fromkeys(FIELDS, "")
            row.update({k: v for k, v in r.items() if k in FIELDS})
        else:
            rid = f"{r['profile']}-{r['condition']}-r{r['run']}"
            row = run_row(dict(profile=r["profile"], condition=r["condition"], run=r["run"],
                               status="ok" if r["status"] == "ok" else r["status"],
                               json=f"{raw}/{rid}.json", series=f"{raw}/{rid}.timeseries.csv"))
        write(path, row)
    os.remove(path + ".old")

def write(path, row):
    new = not os.path.exists(path) or os.path.getsize(path) == 0
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        if new:
            w.writeheader()
        w.writerow({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()})

def med(rows, key):
    v = [float(r[key]) for r in rows if r["status"] == "ok" and r[key] not in ("", None)]
    return (statistics.median(v) if v else None), len(v)

def f(x, spec):
    return "-" if x is None else format(x, spec)

def pct(a, b):
    return "-" if a is None or not b else f"{100 * a / b:.0f} %"

def times(a, b):
    return "-" if a is None or not b else f"{a / b:.2f}x"

def summary(args):
    rows = list(csv.DictReader(open(args[0])))
    profiles = list(dict.fromkeys(r["profile"] for r in rows if r["condition"] != "alone"))
    al = [r for r in rows if r["condition"] == "alone"]
    alone_rate, _ = med(al, "replace_copy_mib_s")
    alone_s, _ = med(al, "replace_s")
    print("== medians per profile (n: runs per condition normal/emulated/replace; % of normal: "
          "degraded / normal, for p99 > 100 % is worse)")
    hdr = (f"{'profile':<17} {'n':>5} {'normal IOPS':>11} {'emulated':>9} {'%':>5} {'replace':>9} {'%':>5} "
           f"{'while repl.':>11} {'%':>5}  {'p99 us normal':>13} {'emulated':>9} {'%':>6} {'replace':>9} {'%':>6}  "
           f"{'copy MiB/s':>10}  {'repl. MiB/s':>11} {'repl. s':>7} {'x alone':>7} {'under way s':>11}")
    print(hdr)
    print("-" * len(hdr))
    for p in profiles:
        by = {c: [r for r in rows if r["profile"] == p and r["condition"] == c]
              for c in ("normal", "emulated", "replace")}
        ni, nn = med(by["normal"], "iops")
        ei, en = med(by["emulated"], "iops")
        ri, rn = med(by["replace"], "iops")
        wi, _ = med(by["replace"], "iops_while_replacing")
        nl, _ = med(by["normal"], "p99_us")
        el, _ = med(by["emulated"], "p99_us")
        rl, _ = med(by["replace"], "p99_us")
        copy, _ = med(by["emulated"], "copy_mib_s")
        rate, _ = med(by["replace"], "replace_copy_mib_s")
        secs, _ = med(by["replace"], "replace_s")
        busy, _ = med(by["replace"], "replace_busy_s")
        bad = sum(1 for c in by.values() for r in c if r["status"] != "ok" or r["note"])
        print(f"{p:<17} {f'{nn}/{en}/{rn}':>5} {f(ni, ',.0f'):>11} {f(ei, ',.0f'):>9} {pct(ei, ni):>5} "
              f"{f(ri, ',.0f'):>9} {pct(ri, ni):>5} {f(wi, ',.0f'):>11} {pct(wi, ni):>5}  "
              f"{f(nl, ',.0f'):>13} {f(el, ',.0f'):>9} {pct(el, nl):>6} {f(rl, ',.0f'):>9} {pct(rl, nl):>6}  "
              f"{f(copy, '.0f'):>10}  {f(rate, '.0f'):>11} {f(secs, '.1f'):>7} {times(secs, alone_s):>7} {f(busy, '.0f'):>11}"
              + (f"  ({bad} runs with notes, see the CSV)" if bad else ""))
    if al:
        s, n = alone_s, len([r for r in al if r["status"] == "ok"])
        v = [float(r["replace_s"]) for r in al if r["status"] == "ok"]
        print(f"\nreplace with no foreground load: {f(s, '.1f')} s median of {n} "
              f"({f(min(v) if v else None, '.1f')}-{f(max(v) if v else None, '.1f')} s)"
              + (f", copying {alone_rate:.0f} MiB/s" if alone_rate is not None else ""))
    print()
    print("while repl.: the workload's mean IOPS over the measured seconds the replace was under way")
    print("repl. MiB/s: what the replace wrote to its new device a second over those seconds (the")
    print("  disks' writes less the members' and the workload's own); repl. s: the replace's whole")
    print("  duration (the run waits for it; past the measured phase it runs with no load); x alone:")
    print("  of the replace's duration with no foreground load; under way s: the measured seconds it")
    print("  was seen under way (of --runtime)")

cmd, rest = sys.argv[1], sys.argv[2:]
{"record": record, "alone": alone, "redo": redo, "summary": summary}[cmd](rest)
PYEOF
}

print_machine() {
    echo "== machine"
    echo "cpu:        $(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -1) ($(nproc) cores online)"
    echo "memory:     $(awk '/^MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
    echo "kernel:     $(uname -r)"
    echo "disk:       $(findmnt -n -o SOURCE,FSTYPE -T "$WORK" | head -1) under $WORK"
    echo "raid1:      btrfs -d raid1 -m raid1 on ${LOOPS[0]} ${LOOPS[1]} (spare ${LOOPS[2]}), loop direct-io on, $LOOP_SIZE each"
    echo "btrfs:      $(btrfs --version | head -1)"
    echo "storbench:  $("$STORBENCH" --version 2>&1 | head -1) ($STORBENCH)"
    echo "load avg:   $(cut -d' ' -f1-3 /proc/loadavg) at start"
    echo "settings:   runs=$RUNS runtime=${RUNTIME}s ramp=${RAMP}s file=$FILE_SIZE emulated='$EMULATED' replace-rate=$REPLACE_RATE"
    echo "profiles:   $PROFILES"
    echo "csv:        $CSV"
    echo
}

# --summarize: the table of a past run, its rows read again from its raw output.
summarize_only() {
    [[ -f $SUMMARIZE && -d ${SUMMARIZE%.csv}.raw ]] ||
        die "--summarize needs a CSV of this script with its .raw directory beside it"
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/rebuild-cost.XXXXXX")
    trap 'rm -rf -- "$WORK"' EXIT
    write_helper
    python3 "$HELPER" redo "$SUMMARIZE"
    python3 "$HELPER" summary "$SUMMARIZE" | tee "${SUMMARIZE%.csv}.summary.txt"
}

main() {
    parse_args "$@"
    if [[ -n $SUMMARIZE ]]; then
        summarize_only
        return
    fi
    check_tools
    setup_dirs
    make_raid1
    prepare
    print_machine
    local round profile cond
    for (( round = 1; round <= RUNS; round++ )); do
        echo "== round $round of $RUNS"
        for profile in ${PROFILES//,/ }; do
            for cond in ${CONDITIONS//,/ }; do
                run_one "$profile" "$cond" "$round"
            done
        done
        [[ ,$CONDITIONS, != *,replace,* ]] || replace_alone "$round"
    done
    echo
    python3 "$HELPER" summary "$CSV" | tee "${CSV%.csv}.summary.txt"
    echo "per-run numbers: $CSV"
    echo "raw output:      $RAWDIR/"
}

main "$@"
