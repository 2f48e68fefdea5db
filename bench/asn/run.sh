#!/usr/bin/env bash
# bench/asn/run.sh — what the bundled IP-to-AS dataset (issue 24) costs.
#
#   1. binary size: linecheck built at BASE (the commit before the dataset,
#      default c1c02c6) and at the working tree; budget: +15 MB at most;
#   2. start-up: `linecheck --version` and a `bill` run on the bundled sample
#      (samples/traffic/2026-10.csv under samples/offers.yaml), both builds, run
#      interleaved RUNS times (default 15); the median wall time and the max RSS
#      of the median run from /usr/bin/time -v; budget: no slower (the dataset is
#      read only by commands that name hops);
#   3. a command that names hops: `trace --replay` of a bundled recording, both
#      builds, and with --no-asn (bench/asn/lab.sh does the same on a live lab);
#   4. Go benchmarks of internal/asn: one lookup (budget < 1 µs) and opening the table.
#
#   bench/asn/run.sh
#   RUNS=25 BASE=<commit> bench/asn/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$PATH"
ROOT=$PWD
BASE=${BASE:-c1c02c6}
RUNS=${RUNS:-15}
DIR=${BENCH_DIR:-${TMPDIR:-/tmp}/linecheck-bench-asn}
rm -rf "$DIR/base-src" "$DIR/stub-src" && mkdir -p "$DIR/base-src" "$DIR/stub-src"
git archive "$BASE" | tar -x -C "$DIR/base-src"
(cd "$DIR/base-src" && go build -o "$DIR/linecheck-base" ./cmd/linecheck)
go build -o "$DIR/linecheck-new" ./cmd/linecheck
# "stub": this tree with a one-row dataset embedded, so that the start-up
# comparison isolates the data (main moves on: BASE lacks later commands).
tar -c --exclude=.git . | tar -x -C "$DIR/stub-src"
mkdir -p "$DIR/tiny/asn" "$DIR/tiny/cc"
echo '{"name":"@ip-location-db/asn","version":"0.0.2026061719"}' > "$DIR/tiny/asn/package.json"
echo '{"name":"@ip-location-db/asn-country","version":"0.0.2026061719"}' > "$DIR/tiny/cc/package.json"
echo '1.0.0.0,1.0.0.255,13335,x' > "$DIR/tiny/asn/asn-ipv4.csv"
echo '2001::,2001::ff,6939,y' > "$DIR/tiny/asn/asn-ipv6.csv"
echo '1.0.0.0,1.0.0.255,AU' > "$DIR/tiny/cc/asn-country-ipv4.csv"
echo '2001::,2001::ff,US' > "$DIR/tiny/cc/asn-country-ipv6.csv"
(cd "$DIR/stub-src" && go run ./internal/asn/gen -asn "$DIR/tiny/asn" -country "$DIR/tiny/cc" -out internal/asn/data >/dev/null &&
  go build -o "$DIR/linecheck-stub" ./cmd/linecheck)
# No cached copy from a user's `asn update` may take part.
export XDG_CACHE_HOME="$DIR/cache"

size() { stat -c %s "$1"; }
sb=$(size "$DIR/linecheck-base"); ss=$(size "$DIR/linecheck-stub"); sn=$(size "$DIR/linecheck-new")
printf 'binary size: base (%s) %d bytes, stub %d, new %d: +%.2f MB over base, +%.2f MB over stub (budget +15 MB)\n' \
  "$BASE" "$sb" "$ss" "$sn" "$(echo "($sn-$sb)/1000000" | bc -l)" "$(echo "($sn-$ss)/1000000" | bc -l)"

# one LABEL BIN ARGS... : one run; appends "wall_s max_rss_kib" to $DIR/times.LABEL
# (wall from bash's microsecond clock: /usr/bin/time's is 10 ms coarse).
one() {
  local label=$1; shift
  local t0=$EPOCHREALTIME
  /usr/bin/time -f '%M' -o "$DIR/t1" "$@" > /dev/null 2>&1 || true
  local t1=$EPOCHREALTIME
  echo "$(echo "$t1 - $t0" | bc -l) $(cat "$DIR/t1")" >> "$DIR/times.$label"
}
median() { # median LABEL TEXT
  sort -n "$DIR/times.$1" | awk -v n="$(wc -l < "$DIR/times.$1")" -v what="$2" \
    'NR==int((n+1)/2) { printf "%-24s median %7.1f ms, max RSS %6d KiB\n", what, $1*1000, $2 }'
}
runpair() { # runpair NAME ARGS... : base, stub and new interleaved
  local name=$1; shift
  for b in base stub new; do : > "$DIR/times.$name-$b"; done
  for _ in $(seq "$RUNS"); do
    for b in base stub new; do one "$name-$b" "$DIR/linecheck-$b" "$@"; done
  done
  for b in base stub new; do median "$name-$b" "$name $b"; done
}
runpair version --version
runpair bill bill samples/traffic/2026-10.csv --offers samples/offers.yaml
runpair trace trace --replay samples/rec/hk-bgp-forward.json
: > "$DIR/times.no-asn"
for _ in $(seq "$RUNS"); do one no-asn "$DIR/linecheck-new" trace --replay samples/rec/hk-bgp-forward.json --no-asn; done
median no-asn "trace --no-asn new"
go test -run XXX -bench 'Lookup|LookupOldForm|OpenBundled|OpenCache|Verify' -benchmem -count 3 ./internal/asn/ | grep -E '^Benchmark'
