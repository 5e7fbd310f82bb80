#!/usr/bin/env bash
# Storage work per DS3 call and per order, by the servers' own counters: storbench's calls
# beside DS3's own SQL, replayed with the same parameters on the same data set
# (`storbench oltp fidelity`). PostgreSQL: pg_stat_database (commits, blocks hit and read,
# tuples) and WAL bytes; MariaDB/MySQL: Innodb_rows_*, Handler_read_*, Com_commit, buffer pool
# requests and reads, redo bytes (Innodb_lsn_current).
#
# Usage: bench/oltp-fidelity.sh --ds3 DIR [--size 10MB] [--orders 500] [--repeat 3] [--json]
#          [--pg postgres://postgres@127.0.0.1:5432] [--my mysql://root@127.0.0.1:3306]
#   DIR: a checkout of github.com/dvdstore/ds3 (its ds3/ directory, which holds pgsqlds3/).
#   Loads the size into database sb_fidelity on each server unless it is loaded there already
#   (creates it; PostgreSQL also sb_fidelity_pristine), and leaves it as loaded.
set -euo pipefail
size=10MB orders=500 repeat=3 ds3= json=
pg=postgres://postgres@127.0.0.1:5432 my=mysql://root@127.0.0.1:3306
while [ $# -gt 0 ]; do
  case $1 in
    --ds3) ds3=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --orders) orders=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --json) json=--json; shift ;;
    --pg) pg=$2; shift 2 ;;
    --my) my=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$ds3" ] || { echo "give --ds3 DIR, a checkout of github.com/dvdstore/ds3 (see --help)" >&2; exit 2; }
cd "$(dirname "$0")/.."
cargo build --release -q
bin=$PWD/target/release/storbench
for url in "$pg/sb_fidelity" "$my/sb_fidelity"; do
  # Load only when the database does not hold this size already (a run on it then refuses).
  if ! "$bin" oltp check --url "$url" >/dev/null 2>&1; then
    "$bin" oltp load --url "$url" --db-size "$size" >/dev/null
  fi
  echo "== ${url%%://*}: $orders orders at $size"
  "$bin" oltp fidelity --url "$url" --db-size "$size" --orders "$orders" --repeat "$repeat" --ds3-source "$ds3" $json
done
