#!/usr/bin/env bash
# The test suite on a loaded machine: stress-ng on every core and a disk writer beside
# `cargo test --workspace --no-fail-fast`, RUNS times, then how often each test passed.
# A test that holds only on an idle machine shows here as passing fewer than RUNS times.
#
#   bash .ci/under-load.sh [RUNS] [LOG_DIR]      # as root, after `bash .ci/run` set the machine up
#
# The writer rewrites a 1 GiB file in /var/tmp (where the tests' files are) with O_DIRECT
# 1 MiB writes, then fsyncs, over and over; stress-ng spins one CPU worker per core.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
logs=${2:-target/under-load}
mkdir -p "$logs"
command -v stress-ng >/dev/null || { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq stress-ng >/dev/null; }
export CI=true

writer_file=$(mktemp /var/tmp/storbench-load-XXXXXX)
load_pids=()
stop_load() {
  for pid in "${load_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -f "$writer_file"
}
trap stop_load EXIT

cargo test --workspace --locked --no-run >/dev/null 2>&1
stress-ng --cpu "$(nproc)" --timeout 0 >/dev/null 2>&1 &
load_pids+=($!)
( while :; do dd if=/dev/zero of="$writer_file" bs=1M count=1024 oflag=direct conv=fsync status=none; done ) &
load_pids+=($!)

for run in $(seq 1 "$runs"); do
  started=$(date +%s)
  cargo test --workspace --locked --no-fail-fast >"$logs/run$run.log" 2>&1 || true
  echo "under-load: run $run of $runs took $(( $(date +%s) - started )) s"
done

# Each test's outcome in each run: "name ok|FAILED" (a should_panic test's line says so).
cat "$logs"/run*.log | sed -nE 's/^test ([^ ]+)( - should panic)? \.\.\. (ok|FAILED)$/\1 \3/p' | sort \
  | awk -v runs="$runs" '{ seen[$1]++; if ($2 == "ok") ok[$1]++ }
      END { for (t in seen) if (ok[t] < runs) printf "%d of %d passed: %s\n", ok[t], runs, t;
            n = 0; for (t in seen) n++; printf "%d tests, each run %d times under load\n", n, runs }'
