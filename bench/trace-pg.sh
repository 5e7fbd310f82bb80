#!/usr/bin/env bash
# trace-pg.sh: DVD Store on PostgreSQL captured at the block layer, then replayed and
# synthesised on another device, each figure side by side (issue 27's acceptance).
#
#  1. Two loop devices over files (--size each): A holds an ext4 filesystem with a private
#     PostgreSQL instance (initdb as the postgres user, its own port and socket directory).
#  2. `storbench oltp load` then `storbench oltp run --capture=A` against it: the run records
#     device A's requests over its measured phase into its bundle (after the load, checkpoint).
#  3. `storbench replay-trace` of that trace on device B, as recorded, with --check: B's own
#     capture compared with the trace (requests, read share, sizes within 2 %, rate within 5 %).
#  4. `storbench io --like` the trace on device B, capturing itself, compared the same way.
# Prints each fingerprint's figures side by side. Runs as root. Leaves nothing behind.
#
# Usage: STORBENCH=target/release/storbench bench/trace-pg.sh [--size 2G] [--db-size 100MB]
#        [--run 60] [--threads 8]

set -euo pipefail
SB=${STORBENCH:-target/release/storbench}
SIZE=2G DB_SIZE=100MB RUN=60 THREADS=8 PORT=55433
while [ $# -gt 0 ]; do
  case $1 in
    --size) SIZE=$2; shift 2 ;;
    --db-size) DB_SIZE=$2; shift 2 ;;
    --run) RUN=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)
WORK=$(mktemp -d /var/tmp/trace-pg.XXXXXX)
chmod 755 "$WORK"
A="" B=""
cleanup() {
  [ -d "$WORK/mnt/pg" ] && runuser -u postgres -- "$BIN/pg_ctl" -D "$WORK/mnt/pg" -m immediate stop >/dev/null 2>&1 || true
  mountpoint -q "$WORK/mnt" && umount "$WORK/mnt"
  [ -n "$A" ] && losetup -d "$A"
  [ -n "$B" ] && losetup -d "$B"
  rm -rf "$WORK"
}
trap cleanup EXIT
truncate -s "$SIZE" "$WORK/a.img" "$WORK/b.img"
A=$(losetup --find --show "$WORK/a.img")
B=$(losetup --find --show "$WORK/b.img")
mkfs.ext4 -q "$A"
mkdir -p "$WORK/mnt" && mount "$A" "$WORK/mnt" && chmod 755 "$WORK/mnt"
mkdir "$WORK/mnt/pg" "$WORK/sock" && chown postgres "$WORK/mnt/pg" "$WORK/sock"
runuser -u postgres -- "$BIN/initdb" -D "$WORK/mnt/pg" -A trust >/dev/null
runuser -u postgres -- "$BIN/pg_ctl" -D "$WORK/mnt/pg" -l "$WORK/sock/log" -w \
  -o "-p $PORT -k $WORK/sock -c listen_addresses=127.0.0.1 -c max_connections=100" start >/dev/null
runuser -u postgres -- psql -h "$WORK/sock" -p "$PORT" -qc "create database ds3"
URL="postgres://postgres@127.0.0.1:$PORT/ds3"
echo "loading DS3 ($DB_SIZE) into PostgreSQL on $A"
"$SB" oltp load --url "$URL" --db-size "$DB_SIZE" >"$WORK/load.log" 2>&1 || { tail -5 "$WORK/load.log" >&2; exit 1; }
runuser -u postgres -- psql -h "$WORK/sock" -p "$PORT" -qc checkpoint
sync

echo "a ${RUN}s DVD Store run ($THREADS threads) capturing its own requests on $A (--capture)"
"$SB" oltp run --url "$URL" --db-size "$DB_SIZE" --n-threads "$THREADS" --run-time "${RUN}s" --warmup-time 0 --no-reset --settle-time 0 \
  --capture="$A" --output-dir "$WORK/run" >"$WORK/run.log" 2>&1 || { tail -5 "$WORK/run.log" >&2; exit 1; }
cp "$WORK"/run/*/bg1.sbtrace "$WORK/pg.sbtrace"

echo "replaying the trace on $B as recorded, with its own capture"
"$SB" replay-trace "$WORK/pg.sbtrace" --target "$B" --allow-device --force --check --json --power none \
  --output-dir "$WORK/replay" >"$WORK/replay-run.json" 2>/dev/null || true
cp "$WORK"/replay/*/bg1.sbtrace "$WORK/replay.sbtrace"

echo "io --like the trace on $B, capturing itself"
"$SB" io --like "$WORK/pg.sbtrace" --target "$B" --allow-device --force --ramp 0 --power none --capture \
  --output-dir "$WORK/like" >"$WORK/like.log" 2>&1 || { tail -5 "$WORK/like.log" >&2; exit 1; }
cp "$WORK"/like/*/bg1.sbtrace "$WORK/like.sbtrace"

for t in pg replay like; do "$SB" fingerprint "$WORK/$t.sbtrace" --json >"$WORK/$t.json"; done
python3 - "$WORK" <<'PY'
import json, sys
w = sys.argv[1]
f = {t: json.load(open(f"{w}/{t}.json")) for t in ("pg", "replay", "like")}
def data(x): return x["reads"] + x["writes"]
def rate(x): return data(x) / x["duration_s"] if x["duration_s"] else 0
def share(x, size): return x["size_histogram"].get(str(size), 0) / max(data(x), 1)
sizes = sorted(f["pg"]["size_histogram"], key=lambda s: -f["pg"]["size_histogram"][s])[:3]
rows = [("reads and writes", data), ("read share", lambda x: x["read_fraction"]),
        ("rate (IOPS)", rate), ("sequential share", lambda x: x["sequential_fraction"]),
        ("flushes", lambda x: x["flushes"]), ("mean queue depth", lambda x: x["mean_queue_depth"]),
        ("burstiness", lambda x: x["burstiness"]), ("peak IOPS", lambda x: x["peak_iops"]),
        ("footprint MiB", lambda x: x["footprint_bytes"] / 2**20)]
rows += [(f"hot set {p} MiB", lambda x, p=p: x["hot_set_bytes"][p] / 2**20) for p in ("p50", "p90", "p99")]
rows += [(f"{int(s)//1024} KiB share", lambda x, s=s: share(x, s)) for s in sizes]
print(f"{'figure':<20}{'captured':>14}{'replayed':>14}{'diff':>9}{'io --like':>14}{'diff':>9}")
for name, fn in rows:
    a, b, c = fn(f["pg"]), fn(f["replay"]), fn(f["like"])
    d = lambda y: f"{(y - a) / a * 100:+.1f}%" if a else "-"
    print(f"{name:<20}{a:>14.3f}{b:>14.3f}{d(b):>9}{c:>14.3f}{d(c):>9}")
check = json.load(open(f"{w}/replay-run.json"))["results"]["trace"].get("check") or {}
print("replay --check:", "pass" if check.get("pass") else "FAIL",
      "; ".join(f"{x['name']} {x['distance']:.2f} {x['unit']}" for x in check.get("figures", [])))
PY
