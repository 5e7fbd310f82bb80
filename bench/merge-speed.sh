#!/usr/bin/env bash
# merge-speed.sh: how long `storbench merge` takes, and how much memory, on the shards of a
# large run (issue 26: "Merging 100 shards of a 10-minute run takes under 1 s").
#
# It makes a template bundle with a 2-second null-engine io run, then COUNT shard bundles of a
# run of SECONDS one-second intervals from it (crates/bench/examples/merge_shards.rs: the
# template's start, end and series row; per interval four histograms as io writes them, the
# reads over a few hundred distinct HDR buckets; four shards a host), and times the merge of
# all of them RUNS times with /usr/bin/time -v: wall time and maximum resident memory, each
# run's and the median. Release builds.
#
# Usage: bench/merge-speed.sh [--shards N] [--seconds S] [--runs R] [--dir DIR]
#        (defaults: 100 shards, 600 s, 5 runs, a new directory under /tmp, removed at the end)

set -euo pipefail

shards=100 seconds=600 runs=5 dir=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --shards) shards="$2"; shift 2 ;;
        --seconds) seconds="$2"; shift 2 ;;
        --runs) runs="$2"; shift 2 ;;
        --dir) dir="$2"; shift 2 ;;
        -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "merge-speed.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
if [[ -z "$dir" ]]; then
    dir="$(mktemp -d /tmp/merge-speed.XXXXXX)"
    trap 'rm -rf "$dir"' EXIT
fi
cargo build --release -q -p storbench
cargo build --release -q -p storbench-bench --example merge_shards
bin="$root/target/release/storbench"

"$bin" io --engine null --ramp 0 --rate-iops 2000 --size 1M --runtime 2s --output-dir "$dir/template" >/dev/null 2>&1
template="$(ls -d "$dir"/template/*/ | head -1)"
"$root/target/release/examples/merge_shards" "$template" "$dir/shards" "$shards" "$seconds"
echo "shards: $shards of $seconds s, $(du -sh "$dir/shards" | cut -f1) on disk"

walls=() rss=()
for run in $(seq 1 "$runs"); do
    rm -rf "$dir/merged"
    /usr/bin/time -v "$bin" merge "$dir"/shards/shard* --out "$dir/merged" --json \
        >/dev/null 2>"$dir/time.txt" || { cat "$dir/time.txt" >&2; exit 1; }
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}' "$dir/time.txt")
    kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$dir/time.txt")
    echo "run $run: wall $wall s, max RSS $((kb / 1024)) MiB"
    walls+=("$wall") rss+=("$kb")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
echo "median of $runs: wall $(median "${walls[@]}") s, max RSS $(( $(median "${rss[@]}") / 1024 )) MiB"
