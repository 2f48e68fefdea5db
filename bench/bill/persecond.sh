#!/usr/bin/env bash
# bench/bill/persecond.sh — memory of `linecheck bill` on per-second rows (issue 35).
#
# A month (2026-07, 31 days = 2,678,400 rows, ≈ 63 MB) and a quarter
# (2026-06..08, 92 days, ≈ 190 MB) of per-second `timestamp,in_bytes,out_bytes`
# rows. The bill is on the 5-minute grid: 8,928 slots for the month, whatever
# the rows. Each is billed as a mapped file (no period: the latest month), with
# --period 2026-07, and piped (`cat FILE | linecheck bill /dev/stdin`), and
# `wc -l` reads the same file in the same run as the anchor. Peak RSS and wall
# time come from /usr/bin/time -v.
#
# Goal: memory bounded by the grid, not by the input: the quarter piped peaks
# within 1.25× the month piped (3× the rows), and no run above 160 MB (the
# month peaked at 436-620 MB before the rows were streamed onto the grid).
# The script exits 1 when a goal is missed. LINECHECK_BASE=/path/to/linecheck
# runs an older build beside it for comparison.
#
#   bench/bill/persecond.sh
#   BENCH_DIR=/tmp/lcps LINECHECK_BASE=/tmp/linecheck-main bench/bill/persecond.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$PATH"
DIR=${BENCH_DIR:-${TMPDIR:-/tmp}/linecheck-bench-persecond}
mkdir -p "$DIR"
go build -o "$DIR/linecheck" ./cmd/linecheck

gen() { # gen FILE FROM_EPOCH SECONDS
  if [ ! -s "$1" ]; then
    echo "generating $1 …" >&2
    awk -v t0="$2" -v n="$3" 'BEGIN { print "timestamp,in_bytes,out_bytes"; srand(7)
      for (i = 0; i < n; i++) printf "%d,%d,%d\n", t0 + i, int(rand() * 125000), int(rand() * 250000) }' > "$1.tmp"
    mv "$1.tmp" "$1"
  fi
}
gen "$DIR/month.csv" 1782864000 $((31 * 86400))   # 2026-07-01
gen "$DIR/quarter.csv" 1780272000 $((92 * 86400)) # 2026-06-01
cat "$DIR"/*.csv > /dev/null # from the page cache for every command

# measure NAME CMD… : wall s and max RSS MB of one run, appended to $DIR/results
: > "$DIR/results"
measure() {
  local name=$1; shift
  /usr/bin/time -v -o "$DIR/$name.time" "$@" > "$DIR/$name.out" 2> "$DIR/$name.err" || {
    echo "$name failed:" >&2; cat "$DIR/$name.err" >&2; exit 1; }
  awk -F': ' -v n="$name" '/Elapsed \(wall clock\)/ { w = $2 } /Maximum resident/ { r = $2 / 1024 }
    END { printf "%s %s %.1f\n", n, w, r }' "$DIR/$name.time" >> "$DIR/results"
}
piped() { cat "$1" | "${@:2}" /dev/stdin; }
export -f piped

BINS=(lc)
[ -n "${LINECHECK_BASE:-}" ] && BINS+=(base)
for b in "${BINS[@]}"; do
  bin=$DIR/linecheck
  [ "$b" = base ] && bin=$LINECHECK_BASE
  for f in month quarter; do
    measure "wc-$f" wc -l "$DIR/$f.csv"
    measure "$b-$f-file" "$bin" bill --format json "$DIR/$f.csv"
    measure "$b-$f-period" "$bin" bill --format json --period 2026-07 "$DIR/$f.csv"
    measure "$b-$f-pipe" bash -c 'piped "$1" "$2" bill --format json' _ "$DIR/$f.csv" "$bin"
  done
done

rss() { awk -v n="$1" '$1 == n { print $3; exit }' "$DIR/results"; }
rows() { wc -l < "$DIR/$1.csv"; }
printf '\n%d cores, load average %s\n' "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
for f in month quarter; do
  printf '  %-12s %9d rows %6.0f MB\n' "$f.csv" "$(( $(rows $f) - 1 ))" "$(echo "$(stat -c %s "$DIR/$f.csv") / 1000000" | bc -l)"
done
printf '\n%-22s %10s %10s %14s %14s\n' run wall maxrss_MB "RSS/wc -l RSS" "rows per MB"
while read -r name w r; do
  f=${name#*-}; f=${f%%-*}
  [ "${name%%-*}" = wc ] && f=${name#wc-}
  printf '%-22s %10s %10s %14s %14.0f\n' "$name" "$w" "$r" "$(awk -v a="$r" -v b="$(rss "wc-$f")" 'BEGIN { printf "%.1f", a / b }')" \
    "$(awk -v n="$(rows "$f")" -v r="$r" 'BEGIN { print n / r }')"
done < "$DIR/results"

# The bill itself: 8,928 slots of July in every run of this build.
for n in lc-month-file lc-month-period lc-month-pipe lc-quarter-period; do
  grep -q '"n": 8928' "$DIR/$n.out" || { echo "$n: not 8928 slots of July" >&2; exit 1; }
done
MISSED=()
ratio=$(awk -v a="$(rss lc-quarter-pipe)" -v b="$(rss lc-month-pipe)" 'BEGIN { printf "%.2f", a / b }')
printf '\nquarter piped / month piped peak RSS: %s (3× the rows; goal ≤ 1.25)\n' "$ratio"
awk -v r="$ratio" 'BEGIN { exit !(r <= 1.25) }' || MISSED+=("quarter/month RSS $ratio > 1.25")
for n in lc-month-file lc-month-period lc-month-pipe lc-quarter-file lc-quarter-period lc-quarter-pipe; do
  awk -v r="$(rss $n)" 'BEGIN { exit !(r <= 160) }' || MISSED+=("$n: $(rss $n) MB > 160 MB")
done
if [ ${#MISSED[@]} -gt 0 ]; then
  printf 'goal missed: %s\n' "${MISSED[@]}"
  exit 1
fi
echo "goals met"
