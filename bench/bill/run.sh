#!/usr/bin/env bash
# bench/bill/run.sh — the `linecheck bill` benchmark (issue 14).
#
# Generates 92 days (2026-06-01 .. 2026-08-31) of 5-minute rows and bills one
# month (2026-07) of them, timing in this one run, on the same warm files:
#
#   epoch   100 interfaces in one CSV, unix-seconds timestamps (what most pollers write)
#   iso     the same with RFC 3339 timestamps
#   1000    1,000 interfaces in one CSV (≈ 26.5 M rows)
#   ports   the same 1,000 interfaces as 1,000 files, one per port (and --aggregate)
#   prom    the same 1,000 interfaces from a Prometheus query_range API on
#           loopback (bench/bill/promfake), --concurrency 4, --max-points 2000
#
# against DuckDB (quantile_disc per interface, all cores, @duckdb/node-api
# installed by this script into a scratch folder) and `wc -l` on the same file,
# checking that every 95th value equals DuckDB's (and the ports and Prometheus
# runs equal the single-file run). Each command runs RUNS times (default 5,
# interleaved); the median wall time is reported beside user/sys CPU and max
# RSS (of the median run), from /usr/bin/time -v.
#
# Goals (epoch, 100 interfaces): linecheck ≥ 3× faster than DuckDB and ≤ 6× the
# time of wc -l. The script exits 1 when a goal is missed or a value differs.
#
#   bench/bill/run.sh
#   RUNS=7 BENCH_DIR=/tmp/lcb bench/bill/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$PATH"
ROOT=$PWD

DIR=${BENCH_DIR:-${TMPDIR:-/tmp}/linecheck-bench-bill}
RUNS=${RUNS:-5}
PERIOD=2026-07
FROM=1782864000 # 2026-07-01T00:00:00Z
TO=1785542400   # 2026-08-01T00:00:00Z
mkdir -p "$DIR"

go build -o "$DIR/linecheck" ./cmd/linecheck
go build -o "$DIR/gen" ./bench/bill/gen
go build -o "$DIR/promfake" ./bench/bill/promfake
if [ ! -e "$DIR/duck/node_modules/@duckdb/node-api" ]; then
  echo "installing @duckdb/node-api into $DIR/duck …" >&2
  mkdir -p "$DIR/duck"
  (cd "$DIR/duck" && npm install --silent --no-audit --no-fund @duckdb/node-api >/dev/null)
fi
cp bench/bill/duckdb.mjs "$DIR/duck/duckdb.mjs"

gen() { # gen FILE ARGS… : generate once
  local f=$1; shift
  if [ ! -s "$f" ]; then
    echo "generating $f …" >&2
    "$DIR/gen" -from 2026-06-01 -days 92 "$@" > "$f.tmp" && mv "$f.tmp" "$f"
  fi
}
gen "$DIR/epoch100.csv" -ifaces 100 -epoch
gen "$DIR/iso100.csv" -ifaces 100
gen "$DIR/epoch1000.csv" -ifaces 1000 -epoch
if [ ! -e "$DIR/ports/.complete" ]; then
  echo "generating $DIR/ports/ …" >&2
  rm -rf "$DIR/ports" && mkdir -p "$DIR/ports"
  "$DIR/gen" -from 2026-06-01 -days 92 -ifaces 1000 -epoch -split "$DIR/ports" > /dev/null
  touch "$DIR/ports/.complete"
fi
PORTS=("$DIR"/ports/eth*.csv)

# Prometheus: promfake serves July of the 1,000-interface CSV.
"$DIR/promfake" -csv "$DIR/epoch1000.csv" -from $FROM -to $TO > "$DIR/promfake.addr" &
PF=$!
trap 'kill $PF 2>/dev/null || true' EXIT
for _ in $(seq 600); do [ -s "$DIR/promfake.addr" ] && break; sleep 0.2; done
[ -s "$DIR/promfake.addr" ] || { echo "promfake did not start" >&2; exit 1; }
PROM="http://$(head -1 "$DIR/promfake.addr")"

# The files are read from the page cache by every command.
cat "$DIR"/*.csv "${PORTS[@]}" > /dev/null

# run NAME CMD… : one timed run; its /usr/bin/time -v report and output kept per run.
declare -A N
run() {
  local name=$1; shift
  local k=${N[$name]:-0}
  N[$name]=$((k + 1))
  # Wall time from bash's microsecond clock around the run (/usr/bin/time's
  # own figure has 10 ms steps: wc -l takes about one of them); CPU and RSS
  # from /usr/bin/time -v. Both include /usr/bin/time's own fork and exec
  # (well under a millisecond), for every command alike.
  local t0=$EPOCHREALTIME
  /usr/bin/time -v -o "$DIR/runs/$name.$k.time" "$@" > "$DIR/runs/$name.$k.out"
  local t1=$EPOCHREALTIME
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }' > "$DIR/runs/$name.$k.wall"
}
wall() { cat "${1%.time}.wall"; }
field() { awk -F': ' -v k="$2" 'index($0,k){print $2}' "$1"; }
# median NAME : the time file of the median run (by wall time)
median() {
  local f
  for f in "$DIR/runs/$1".*.time; do echo "$(wall "$f") $f"; done | sort -n | awk '{a[NR]=$2} END {print a[int((NR+1)/2)]}'
}

rm -rf "$DIR/runs" && mkdir -p "$DIR/runs"
LC=("$DIR/linecheck" bill --period $PERIOD --format json)
DUCK=(node "$DIR/duck/duckdb.mjs")
for i in $(seq "$RUNS"); do
  echo "run $i of $RUNS …" >&2
  run lc-epoch "${LC[@]}" "$DIR/epoch100.csv"
  run duck-epoch "${DUCK[@]}" "$DIR/epoch100.csv" $PERIOD epoch
  run wc-epoch wc -l "$DIR/epoch100.csv"
  run lc-iso "${LC[@]}" "$DIR/iso100.csv"
  run duck-iso "${DUCK[@]}" "$DIR/iso100.csv" $PERIOD iso
  run wc-iso wc -l "$DIR/iso100.csv"
  run lc-1000 "${LC[@]}" "$DIR/epoch1000.csv"
  run duck-1000 "${DUCK[@]}" "$DIR/epoch1000.csv" $PERIOD epoch
  run wc-1000 wc -l "$DIR/epoch1000.csv"
  run lc-ports "${LC[@]}" "${PORTS[@]}"
  run lc-ports-agg "${LC[@]}" --aggregate "${PORTS[@]}"
  run lc-prom "${LC[@]}" --prometheus "$PROM" --query-in in --query-out out --concurrency 4 --max-points 2000
done
"${LC[@]}" --aggregate "$DIR/epoch1000.csv" > "$DIR/runs/lc-1000-agg.out"

printf '\n%d cores, load average %s (wall times are shared with it; CPU is steadier); median of %d runs (max RSS of that run)\n' "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" "$RUNS"
for t in epoch:epoch100 iso:iso100 1000:epoch1000; do
  printf '  %-15s %9s rows %6.0f MB\n' "${t#*:}.csv" "$(awk '{print $1}' "$DIR/runs/wc-${t%%:*}.0.out")" \
    "$(echo "$(stat -c %s "$DIR/${t#*:}.csv") / 1000000" | bc -l)"
done
printf '\n%-44s %8s %8s %8s %10s\n' command wall_s user_s sys_s maxrss_MB
declare -A W
for n in lc-epoch duck-epoch wc-epoch lc-iso duck-iso wc-iso lc-1000 duck-1000 wc-1000 lc-ports lc-ports-agg lc-prom; do
  f=$(median $n)
  W[$n]=$(wall "$f")
  case $n in
    lc-epoch) label="linecheck bill, 100 if, epoch" ;;
    duck-epoch) label="DuckDB quantile_disc, 100 if, epoch" ;;
    wc-epoch) label="wc -l, 100 if, epoch" ;;
    lc-iso) label="linecheck bill, 100 if, ISO" ;;
    duck-iso) label="DuckDB, 100 if, ISO" ;;
    wc-iso) label="wc -l, 100 if, ISO" ;;
    lc-1000) label="linecheck bill, 1000 if, one CSV" ;;
    duck-1000) label="DuckDB, 1000 if, one CSV" ;;
    wc-1000) label="wc -l, 1000 if, one CSV" ;;
    lc-ports) label="linecheck bill, 1000 files" ;;
    lc-ports-agg) label="linecheck bill --aggregate, 1000 files" ;;
    lc-prom) label="linecheck bill --prometheus, 1000 series" ;;
  esac
  printf '%-44s %8.3f %8.2f %8.2f %10.0f\n' "$label" "${W[$n]}" "$(field "$f" 'User time')" \
    "$(field "$f" 'System time')" "$(echo "$(field "$f" 'Maximum resident set size') / 1024" | bc -l)"
done

fail=0
ratio() { # ratio NAME A B GOAL-OP GOAL : prints A/B and checks it
  awk -v n="$1" -v a="$2" -v b="$3" -v op="$4" -v g="$5" 'BEGIN {
    r = a / b; ok = (op == ">=" ? r >= g : r <= g)
    printf "%-40s = %6.2fx   (goal %s %sx: %s)\n", n, r, op, g, (ok ? "met" : "MISSED"); exit !ok }'
}
info() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { if (b <= 0) b = 0.01; printf "%-40s = %6.2fx\n", n, a/b }'; }
echo
ratio "DuckDB / linecheck (100 if, epoch)" "${W[duck-epoch]}" "${W[lc-epoch]}" ">=" 3 || fail=1
ratio "linecheck / wc -l (100 if, epoch)" "${W[lc-epoch]}" "${W[wc-epoch]}" "<=" 6 || fail=1
info "DuckDB / linecheck (100 if, ISO)" "${W[duck-iso]}" "${W[lc-iso]}"
info "linecheck / wc -l (100 if, ISO)" "${W[lc-iso]}" "${W[wc-iso]}"
info "DuckDB / linecheck (1000 if)" "${W[duck-1000]}" "${W[lc-1000]}"
info "linecheck / wc -l (1000 if)" "${W[lc-1000]}" "${W[wc-1000]}"
cpu() { local f; f=$(median "$1"); awk -v u="$(field "$f" 'User time')" -v s="$(field "$f" 'System time')" 'BEGIN{print u+s}'; }
info "CPU: DuckDB / linecheck (100 if, epoch)" "$(cpu duck-epoch)" "$(cpu lc-epoch)"
info "CPU: DuckDB / linecheck (1000 if)" "$(cpu duck-1000)" "$(cpu lc-1000)"
info "1000 files / one CSV" "${W[lc-ports]}" "${W[lc-1000]}"
info "Prometheus / one CSV (1000 series)" "${W[lc-prom]}" "${W[lc-1000]}"

# Same 95th values: linecheck against DuckDB; 1000 files, Prometheus and
# --aggregate against the single CSV.
/usr/bin/python3 - "$DIR/runs" <<'PY' || fail=1
import json, sys, os
d = sys.argv[1]
def lc(name):
    doc = json.load(open(os.path.join(d, name)))
    return {s["name"]: s for s in doc.get("series", [doc])}
def close(a, b):  # JSON figures are rounded to 4 decimals
    return abs(a - b) <= max(1e-9 * max(abs(a), abs(b)), 1e-4)
bad = []
for tag in ("epoch", "iso", "1000"):
    got, want = lc(f"lc-{tag}.0.out"), json.load(open(os.path.join(d, f"duck-{tag}.0.out")))
    if set(got) != set(want):
        bad.append(f"{tag}: {len(got)} series from linecheck, {len(want)} from DuckDB")
    for n, w in want.items():
        g = got.get(n)
        if g is None:
            continue
        if g["samples"]["present"] != w["samples"]:
            bad.append(f"{tag} {n}: {g['samples']['present']} samples, DuckDB {w['samples']}")
        for k in ("in_bps", "out_bps"):
            if not close(g["p95"][k], w[k]):
                bad.append(f"{tag} {n} {k}: linecheck {g['p95'][k]}, DuckDB {w[k]}")
one = lc("lc-1000.0.out")
for tag in ("ports", "prom"):
    got = lc(f"lc-{tag}.0.out")
    if set(got) != set(one):
        bad.append(f"{tag}: {len(got)} series, one CSV {len(one)}")
    for n, w in one.items():
        g = got.get(n)
        if g and (g["samples"]["present"] != w["samples"]["present"] or
                  any(not close(g["p95"][k], w["p95"][k]) for k in ("in_bps", "out_bps"))):
            bad.append(f"{tag} {n}: p95 {g['p95']['in_bps']}/{g['p95']['out_bps']}, one CSV {w['p95']['in_bps']}/{w['p95']['out_bps']}")
a, b = lc("lc-ports-agg.0.out"), lc("lc-1000-agg.out")
for n in b:
    if n not in a or any(not close(a[n]["p95"][k], b[n]["p95"][k]) for k in ("in_bps", "out_bps")):
        bad.append(f"--aggregate: 1000 files {a.get(n, {}).get('p95')}, one CSV {b[n]['p95']}")
if bad:
    print("95th values DISAGREE:\n  " + "\n  ".join(bad[:20]))
    sys.exit(1)
first = sorted(one)[0]
print(f"95th values agree: linecheck = DuckDB quantile_disc for 100 (epoch, ISO) and 1000 interfaces; "
      f"1000 files, Prometheus and --aggregate = the single CSV (e.g. {first}: in {one[first]['p95']['in_bps']} bit/s)")
PY
exit $fail
