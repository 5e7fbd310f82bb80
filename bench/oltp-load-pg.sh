#!/usr/bin/env bash
# Bulk load into PostgreSQL: storbench's streaming load (generate + COPY FROM STDIN, no files)
# against psql's \copy of the same data set from DS3's CSV files (written once beforehand by
# `storbench oltp gen`), into the same empty tables. Interleaved runs; the rows phase only (the
# indexes, keys and statistics that follow are the same SQL for both and are left out).
#
# Usage: bench/oltp-load-pg.sh [--size S] [--runs 5] [--url postgres://postgres@127.0.0.1:5432]
#   Needs psql and a server where the user may create databases. Creates and drops the
#   databases sb_loadbench, sb_loadbench_pristine and psql_loadbench.
set -euo pipefail
size=S runs=5 url=postgres://postgres@127.0.0.1:5432
while [ $# -gt 0 ]; do
  case $1 in
    --size) size=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --url) url=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."
cargo build --release -q
bin=$PWD/target/release/storbench
schema=crates/bench/src/db/postgres
csv=/dev/shm/storbench-load-bench-$size
rm -rf "$csv"
"$bin" oltp gen --db-size "$size" --out "$csv" >/dev/null
pg() { psql "$url/postgres" -XAtq -v ON_ERROR_STOP=1 "$@"; }
drop_all() { for d in sb_loadbench sb_loadbench_pristine psql_loadbench; do pg -c "DROP DATABASE IF EXISTS $d WITH (FORCE)"; done; }
copy_script() {
  local f t
  for t in categories:prod/categories.csv products:prod/prod.csv inventory:prod/inv.csv \
           customers:cust/us_cust.csv customers:cust/row_cust.csv membership:membership/membership.csv \
           reviews:reviews/reviews.csv reviews_helpfulness:reviews/review_helpfulness.csv; do
    echo "\\copy ${t%%:*} FROM '$csv/${t#*:}' WITH (FORMAT text, DELIMITER ',')"
  done
  for m in jan feb mar apr may jun jul aug sep oct nov dec; do
    for f in orders orderlines cust_hist; do
      echo "\\copy $f FROM '$csv/orders/${m}_$f.csv' WITH (FORMAT text, DELIMITER ',')"
    done
  done
}
copy_script > "$csv.copy.sql"
out=$(mktemp)
for r in $(seq 1 "$runs"); do
  drop_all
  line=$("$bin" oltp load --db-size "$size" --url "$url/sb_loadbench")
  sb=$(sed -E 's/.*\(rows ([0-9.]+) s.*/\1/' <<<"$line")
  drop_all
  pg -c "CREATE DATABASE psql_loadbench"
  psql "$url/psql_loadbench" -XAtq -v ON_ERROR_STOP=1 -f "$schema/schema.sql" -f "$schema/schema_ds3.sql"
  start=$(date +%s.%N)
  psql "$url/psql_loadbench" -XAtq -v ON_ERROR_STOP=1 -f "$csv.copy.sql"
  ps=$(echo "$(date +%s.%N) - $start" | bc)
  echo "$sb $ps" >> "$out"
  echo "run $r: storbench rows phase ${sb} s, psql \\copy ${ps} s" >&2
done
drop_all
rm -rf "$csv" "$csv.copy.sql"
python3 - "$out" "$size" <<'PY'
import statistics, sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1])]
sb = statistics.median(r[0] for r in rows); ps = statistics.median(r[1] for r in rows)
print(f"--db-size {sys.argv[2]}, {len(rows)} interleaved runs, medians (range):")
print(f"  storbench oltp load (generate + COPY): {sb:6.2f} s ({min(r[0] for r in rows):.2f}-{max(r[0] for r in rows):.2f})")
print(f"  psql \\copy of the CSV files:          {ps:6.2f} s ({min(r[1] for r in rows):.2f}-{max(r[1] for r in rows):.2f})")
print(f"  ratio storbench / psql: {sb / ps:.2f}")
PY
rm -f "$out"
