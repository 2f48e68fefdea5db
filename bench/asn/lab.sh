#!/usr/bin/env bash
# bench/asn/lab.sh - what naming hops costs a whole `trace` (issue 35), beside
# traceroute in the same run. Needs root (network namespaces, raw sockets).
#
#   1. binary size: linecheck at BASE (default c802edf, the gzip form of the
#      dataset, decoded on first use) and this tree (the in-place form);
#   2. an 8-hop netlab lab (internal/testkit/netlab): RUNS interleaved rounds (default
#      15) of `traceroute -n -q 1`, `linecheck trace --format json --cycles 1`
#      of both builds and of this tree with --no-asn, whole process under
#      ip netns exec; median wall time and CPU (user+sys) per command, and the
#      ratio to traceroute; goal: linecheck trace <= 3 x traceroute (wall);
#   3. lookup-only start-up: `trace --replay` of a recording whose public hops
#      the dataset names (no network), both builds and --no-asn: CPU per run
#      (/usr/bin/time over LOOP back-to-back runs, divided) and the median
#      wall time of RUNS runs; with perf installed, perf stat -r 30;
#   4. the Go benchmarks of internal/asn: one lookup, opening the tables.
#
#   bench/asn/lab.sh
#   RUNS=25 BASE=<commit> bench/asn/lab.sh
#
# Traffic goes only to the 10.77.0.0/16 addresses of the lab this script
# builds and removes (processes stopped by PID). Exit 1 when the goal is
# missed, 2 on a setup error.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$PATH"
. bench/lib.sh
bench_lab_lock bench/asn/lab.sh "$@"
bench_anchors bench/asn/lab.sh traceroute:traceroute jq:jq /usr/bin/time:time

BASE=${BASE:-c802edf}
RUNS=${RUNS:-15}
LOOP=${LOOP:-20}
MISSED=()
TMP=$(mktemp -d /tmp/linecheck-bench-asn.XXXXXX)
LABPID=""
cleanup() {
  if [ -n "$LABPID" ]; then kill "$LABPID" 2>/dev/null || true; wait "$LABPID" 2>/dev/null || true; fi
  rm -rf "$TMP"
}
trap cleanup EXIT

bench_build
mkdir -p "$TMP/base-src"
git archive "$BASE" | tar -x -C "$TMP/base-src"
(cd "$TMP/base-src" && go build -o "$TMP/linecheck-base" ./cmd/linecheck)
# No cached copy from a user's `asn update` may take part.
export XDG_CACHE_HOME="$TMP/cache"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(uname -r)"
sb=$(stat -c %s "$TMP/linecheck-base"); sn=$(stat -c %s "$LC")
printf 'binary size: base (%s, gzip form) %d bytes, this tree (in-place form) %d bytes: %+.2f MB\n' \
  "$BASE" "$sb" "$sn" "$(echo "($sn-$sb)/1000000" | bc -l)"

# timed CMD... : runs CMD (stdout to $TMP/out) and sets WALL (bash's clock)
# and CPU (user+sys, /usr/bin/time: 10 ms steps), seconds.
timed() {
  local t0=$EPOCHREALTIME
  /usr/bin/time -o "$TMP/time" -f "%U %S" "$@" >"$TMP/out" 2>"$TMP/err" || true
  local t1=$EPOCHREALTIME
  WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.4f", b - a}')
  CPU=$(tail -1 "$TMP/time" | awk '{printf "%.2f", $1 + $2}')
}
median() { sort -g | awk '{a[NR] = $1} END {if (NR % 2) print a[(NR + 1) / 2]; else printf "%.4f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

echo
echo "== trace on an 8-hop lab path, $RUNS interleaved rounds, whole process under ip netns exec"
lab_up -prefix lcbasn -hops 8
c=lcbasnc dst=10.77.8.2
tools="traceroute new base no-asn"
for t in $tools; do : >"$TMP/w_$t"; : >"$TMP/c_$t"; done
for _ in $(seq "$RUNS"); do
  for t in $tools; do
    case $t in
      traceroute) timed ip netns exec $c traceroute -n -q 1 $dst
                  [ "$(grep -c '^ *[0-9]' "$TMP/out")" = 9 ] || echo "traceroute: not 9 hops" >&2 ;;
      new)    timed ip netns exec $c "$LC" trace --format json --cycles 1 $dst ;;
      base)   timed ip netns exec $c "$TMP/linecheck-base" trace --format json --cycles 1 $dst ;;
      no-asn) timed ip netns exec $c "$LC" trace --format json --cycles 1 --no-asn $dst ;;
    esac
    if [ "$t" != traceroute ] && [ "$(jq '.hops | length' "$TMP/out")" != 9 ]; then
      echo "linecheck ($t) trace: not 9 hops" >&2; cat "$TMP/out" "$TMP/err" >&2
    fi
    echo "$WALL" >>"$TMP/w_$t"; echo "$CPU" >>"$TMP/c_$t"
  done
done
lab_down
tw=$(median <"$TMP/w_traceroute")
printf '%-52s %10s %10s %8s\n' "command (under ip netns exec)" "median_s" "cpu_s" "/traceroute"
for t in $tools; do
  case $t in
    traceroute) what="traceroute -n -q 1" ;;
    new)    what="linecheck trace --format json --cycles 1" ;;
    base)   what="  the same at $BASE (gzip form)" ;;
    no-asn) what="  this tree with --no-asn (no dataset)" ;;
  esac
  w=$(median <"$TMP/w_$t")
  printf '%-52s %10s %10s %8s\n' "$what" "$w" "$(median <"$TMP/c_$t")" "$(ratio "$w" "$tw")"
done
rt=$(ratio "$(median <"$TMP/w_new")" "$tw")
echo "ratio linecheck trace/traceroute $rt (goal <= 3.00)"
awk -v r="$rt" 'BEGIN{exit !(r != "n/a" && r <= 3.00)}' || MISSED+=("trace ${rt}x traceroute's whole-process time")

echo
echo "== lookup-only start-up: trace --replay samples/rec/hk-bgp-forward.json (public hops named, no network)"
printf '%-44s %12s %14s\n' "build" "cpu_ms/run" "median_wall_ms"
rec=samples/rec/hk-bgp-forward.json
for b in new base no-asn; do
  case $b in
    new) bin=$LC; extra="" ;;
    base) bin=$TMP/linecheck-base; extra="" ;;
    no-asn) bin=$LC; extra="--no-asn" ;;
  esac
  # shellcheck disable=SC2016
  timed sh -c 'i=0; while [ $i -lt "$1" ]; do "$2" trace --replay "$3" $4 >/dev/null; i=$((i+1)); done' _ "$LOOP" "$bin" "$rec" "$extra"
  cpu=$(awk -v c="$CPU" -v n="$LOOP" 'BEGIN{printf "%.1f", c / n * 1000}')
  : >"$TMP/w"
  for _ in $(seq "$RUNS"); do timed "$bin" trace --replay "$rec" $extra; echo "$WALL" >>"$TMP/w"; done
  printf '%-44s %12s %14s\n' "$b${extra:+ $extra}" "$cpu" "$(awk -v w="$(median <"$TMP/w")" 'BEGIN{printf "%.1f", w * 1000}')"
done
grep -q 'AS4134\|AS4809\|AS6939' <("$LC" trace --replay "$rec") || MISSED+=("the replay names no public hop")
# perf stat, when installed: CPU (task-clock) and page faults per run, which
# a loaded machine disturbs less than wall time.
if command -v perf >/dev/null; then
  echo "-- the same, perf stat -r 30 (task-clock ms per run, page faults)"
  for b in new base no-asn; do
    case $b in
      new) cmd="$LC trace --replay $rec" ;;
      base) cmd="$TMP/linecheck-base trace --replay $rec" ;;
      no-asn) cmd="$LC trace --replay $rec --no-asn" ;;
    esac
    # shellcheck disable=SC2086
    perf stat -x, -r 30 -e task-clock,page-faults $cmd 2>&1 >/dev/null |
      awk -F, -v n="$b" '/task-clock/{t=$1} /page-faults/{p=$1} END{printf "%-44s %8.2f ms %6d faults\n", n, t, p}'
  done
fi

echo
echo "== Go benchmarks (internal/asn)"
go test -run XXX -bench 'Lookup|LookupOldForm|OpenBundled|OpenCache|Verify' -benchmem -count 3 ./internal/asn/ | grep -E '^Benchmark'
bench_verdict
