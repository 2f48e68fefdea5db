#!/usr/bin/env bash
# bench/bill/run.sh — the `linecheck bill` benchmark (issue 2, "Performance").
#
# Generates a year of 5-minute samples for 100 interfaces in one CSV with an
# interface column (~10.5 M rows, ~500 MB), then times, in this one run and on
# the same warm file:
#   linecheck bill --period 2026-06 --format json big.csv    (per interface)
#   /usr/bin/python3 bench/bill/p95.py big.csv 2026-06         (pandas, same 95th)
#   wc -l big.csv                                               (the floor of reading it)
# prints wall / CPU / max RSS (/usr/bin/time -v) and the ratios, and checks that
# linecheck's and pandas' 95th values agree for every interface.
#
# Targets: ≥ 10× faster than pandas, ≤ 10× the time of wc -l, memory bounded by
# one period of the series billed (not by the file).
#
#   bench/bill/run.sh                 # defaults
#   RUNS=5 IFACES=100 bench/bill/run.sh
# The machine is shared: each command runs RUNS times (interleaved) and the
# fastest run is reported.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$PATH"

DIR=${BENCH_DIR:-${TMPDIR:-/tmp}/linecheck-bench-bill}
IFACES=${IFACES:-100}
PERIOD=${PERIOD:-2026-06}
RUNS=${RUNS:-3}
mkdir -p "$DIR"
CSV="$DIR/year2026-${IFACES}if.csv"

go build -o "$DIR/linecheck" ./cmd/linecheck
go build -o "$DIR/gen" ./bench/bill/gen
if [ ! -s "$CSV" ]; then
  echo "generating $CSV …" >&2
  "$DIR/gen" -year 2026 -ifaces "$IFACES" > "$CSV.tmp"
  mv "$CSV.tmp" "$CSV"
fi
cat "$CSV" > /dev/null # warm the page cache: every command reads from memory

# measure NAME CMD… : run CMD under /usr/bin/time -v, keep the fastest run.
measure() {
  local name=$1; shift
  /usr/bin/time -v -o "$DIR/$name.time.new" "$@" > "$DIR/$name.out.new"
  local new old
  new=$(wall "$DIR/$name.time.new")
  old=$( [ -s "$DIR/$name.time" ] && wall "$DIR/$name.time" || echo 1e9 )
  if awk -v a="$new" -v b="$old" 'BEGIN{exit !(a < b)}'; then
    mv "$DIR/$name.time.new" "$DIR/$name.time"; mv "$DIR/$name.out.new" "$DIR/$name.out"
  else
    rm -f "$DIR/$name.time.new" "$DIR/$name.out.new"
  fi
}
wall() { awk -F': ' '/Elapsed \(wall clock\)/{n=split($2,p,":"); s=0; for(i=1;i<=n;i++) s=s*60+p[i]; print s}' "$1"; }
field() { awk -F': ' -v k="$2" 'index($0,k){print $2}' "$1"; }

rm -f "$DIR"/*.time "$DIR"/*.out
for _ in $(seq "$RUNS"); do
  measure linecheck "$DIR/linecheck" bill --period "$PERIOD" --format json "$CSV"
  measure pandas /usr/bin/python3 bench/bill/p95.py "$CSV" "$PERIOD"
  measure wc wc -l "$CSV"
done
# For information: without --period linecheck parses every row fully and keeps
# the latest calendar month per interface (here December).
measure linecheck-latest "$DIR/linecheck" bill --format json "$CSV"

rows=$(awk '{print $1}' "$DIR/wc.out")
size=$(stat -c %s "$CSV")
printf '\ninput: %s — %s rows, %.0f MB, %s interfaces, period %s; %s cores; fastest of %s runs\n\n' \
  "$CSV" "$rows" "$(echo "$size / 1000000" | bc -l)" "$IFACES" "$PERIOD" "$(nproc)" "$RUNS"
printf '%-34s %9s %9s %9s %10s\n' command wall_s user_s sys_s maxrss_MB
for n in linecheck pandas wc linecheck-latest; do
  f="$DIR/$n.time"
  label=$n
  case $n in
    linecheck) label="linecheck bill --period $PERIOD" ;;
    pandas) label="pandas p95.py" ;;
    wc) label="wc -l" ;;
    linecheck-latest) label="linecheck bill (latest month)" ;;
  esac
  printf '%-34s %9.2f %9.2f %9.2f %10.0f\n' "$label" "$(wall "$f")" "$(field "$f" 'User time')" \
    "$(field "$f" 'System time')" "$(echo "$(field "$f" 'Maximum resident set size') / 1024" | bc -l)"
done
lc=$(wall "$DIR/linecheck.time"); pd=$(wall "$DIR/pandas.time"); wcl=$(wall "$DIR/wc.time")
awk -v lc="$lc" -v pd="$pd" -v wc="$wcl" 'BEGIN {
  if (wc < 0.01) wc = 0.01   # /usr/bin/time resolution
  printf "\npandas / linecheck = %.1fx   (target >= 10x: %s)\n", pd/lc, (pd/lc >= 10 ? "met" : "MISSED")
  printf "linecheck / wc -l  = %.1fx   (target <= 10x: %s)\n", lc/wc, (lc/wc <= 10 ? "met" : "MISSED")
}'

# The 95th values must agree, interface by interface.
/usr/bin/python3 - "$DIR/linecheck.out" "$DIR/pandas.out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
lc = {s["name"]: s for s in doc.get("series", [doc])}
pd = json.load(open(sys.argv[2]))
bad = []
for name, want in pd.items():
    got = lc.get(name)
    if got is None:
        bad.append(f"{name}: missing from linecheck"); continue
    if got["samples"]["present"] != want["samples"]:
        bad.append(f"{name}: {got['samples']['present']} samples, pandas {want['samples']}")
    for k in ("in_bps", "out_bps"):
        a, b = got["p95"][k], want[k]
        if abs(a - b) > 1e-9 * max(abs(a), abs(b)):
            bad.append(f"{name} {k}: linecheck {a}, pandas {b}")
if len(lc) != len(pd):
    bad.append(f"{len(lc)} series from linecheck, {len(pd)} from pandas")
if bad:
    print("95th values DISAGREE:\n  " + "\n  ".join(bad[:20])); sys.exit(1)
first = sorted(pd)[0]
print(f"95th values agree for all {len(pd)} interfaces (nearest-rank, e.g. {first}: "
      f"in {pd[first]['in_bps']:.2f} bit/s, out {pd[first]['out_bps']:.2f} bit/s)")
PY
