#!/usr/bin/env bash
# bench/multipath/run.sh - linecheck trace --multipath beside scamper tracelb on the
# same netlab ECMP labs, in one run (issue 21, "A benchmark reports probes used and wall
# time against scamper tracelb on the same lab"). Needs root (network namespaces, raw sockets).
#
#   bench/multipath/run.sh            both parts
#   bench/multipath/run.sh probes     probes used and wall time, 2-branch, 3-branch and nested labs, 95 and 99 %
#   bench/multipath/run.sh miss       200 linecheck runs (different starting flows) per lab at 95 %: share that miss a path,
#                                     and runs that report a link the lab does not have
#   ROUNDS=5 MISS_RUNS=200 ...        rounds per figure (median), runs of the miss part
#   LINECHECK_BIN=path ...            use a prebuilt linecheck instead of building ./cmd/linecheck
#
# Traffic goes only to the 10.77.0.0/16 addresses of netlab labs (internal/testkit/netlab) that this
# script builds and removes with labctl (stopped by PID). Goals, checked at the end: linecheck
# uses no more probes than tracelb at the same confidence (its flow-map discovery,
# probes_used - per_packet_probes: tracelb does no per-packet check), and the share of runs that miss a
# path stays within the stopping rule's bound (1 - confidence^splits: one split on the diamonds,
# two on the nested lab), and no run reports a link the lab does not have. Exit 1 when one is
# missed, 2 on a setup error.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$PATH"
. bench/lib.sh
bench_lab_lock bench/multipath/run.sh "$@"
bench_anchors bench/multipath/run.sh scamper:scamper sc_warts2json:scamper jq:jq

parts=${1:-all}
ROUNDS=${ROUNDS:-5}
MISS_RUNS=${MISS_RUNS:-200}
MISSED=()
TMP=$(mktemp -d /tmp/linecheck-bench-multipath.XXXXXX)
LABPID=""
cleanup() {
  if [ -n "$LABPID" ]; then kill "$LABPID" 2>/dev/null || true; wait "$LABPID" 2>/dev/null || true; fi
  rm -rf "$TMP"
}
trap cleanup EXIT

bench_build
# The help is read whole before it is searched: `grep -q` quits at its first match, and
# under pipefail the writer's SIGPIPE would fail the test on a linecheck that has the flag.
help=$("$LC" trace --help)
if [[ $help != *--multipath* ]]; then
  echo "bench/multipath/run.sh: this linecheck has no trace --multipath" >&2; exit 2
fi
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(uname -r), scamper $(dpkg-query -W -f='${Version}' scamper 2>/dev/null || echo '?')"

median() { sort -g | awk '{a[NR] = $1} END {if (NR == 0) print "-"; else if (NR % 2) print a[(NR + 1) / 2]; else printf "%g\n", (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
now() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.4f", (b - a) / 1e9}'; }


# The labs: name, prefix, server, splitting routers, labctl arguments.
LABS=(
  "2-branch|lcbm2|10.77.4.2|1|-hops 4 -topology diamond2 -hash l4"
  "3-branch|lcbm3|10.77.4.2|1|-hops 4 -topology diamond3 -hash l4"
  "nested|lcbmn|10.77.5.2|2|-hops 5 -topology nested -hash l4"
)

bench_probes() {
  echo
  echo "== probes used and wall time: linecheck trace --multipath -U vs scamper tracelb -P udp-dport, $ROUNDS rounds, medians"
  echo "   (tracelb as users run it: 250 ms between probes; and with -W 15, the shortest wait it accepts, 150 ms)"
  printf '%-9s %4s %10s %8s %8s %10s %10s %10s %12s %10s %12s %10s\n' lab conf lc_probes lc_disc lc_pp lc_wall_s lb_probes lb_wall_s lbW15_wall_s probes_x wall_x wallW15_x
  local spec name prefix dst splits args conf r
  for spec in "${LABS[@]}"; do
    IFS='|' read -r name prefix dst splits args <<<"$spec"
    # shellcheck disable=SC2086
    lab_up -prefix "$prefix" $args
    local c=${prefix}c
    for conf in 95 99; do
      : >"$TMP/lp"; : >"$TMP/ld"; : >"$TMP/lpp"; : >"$TMP/lw"; : >"$TMP/sp"; : >"$TMP/sw"; : >"$TMP/sw15"
      for r in $(seq 1 "$ROUNDS"); do
        local t0 t1
        t0=$(now)
        ip netns exec "$c" "$LC" trace --multipath -U --confidence "$conf" --timeout 500ms --format json "$dst" >"$TMP/lc.json"
        t1=$(now)
        jq '.multipath.probes_used' "$TMP/lc.json" >>"$TMP/lp"
        jq '.multipath.per_packet_probes' "$TMP/lc.json" >>"$TMP/lpp"
        jq '.multipath.probes_used - .multipath.per_packet_probes' "$TMP/lc.json" >>"$TMP/ld"
        secs "$t0" "$t1" >>"$TMP/lw"; echo >>"$TMP/lw"
        t0=$(now)
        ip netns exec "$c" scamper -p 1000 -O warts -o "$TMP/lb.warts" -I "tracelb -P udp-dport -c $conf $dst"
        t1=$(now)
        secs "$t0" "$t1" >>"$TMP/sw"; echo >>"$TMP/sw"
        sc_warts2json "$TMP/lb.warts" | jq -r 'select(.type == "tracelb") | .probec' >>"$TMP/sp"
        t0=$(now)
        ip netns exec "$c" scamper -p 1000 -O warts -o "$TMP/lb15.warts" -I "tracelb -P udp-dport -W 15 -c $conf $dst"
        t1=$(now)
        secs "$t0" "$t1" >>"$TMP/sw15"; echo >>"$TMP/sw15"
      done
      local lp ld lpp lw sp sw sw15
      lp=$(median <"$TMP/lp"); ld=$(median <"$TMP/ld"); lpp=$(median <"$TMP/lpp"); lw=$(grep . "$TMP/lw" | median); sp=$(median <"$TMP/sp"); sw=$(grep . "$TMP/sw" | median); sw15=$(grep . "$TMP/sw15" | median)
      printf '%-9s %4s %10s %8s %8s %10s %10s %10s %12s %10s %12s %10s\n' "$name" "$conf" "$lp" "$ld" "$lpp" "$lw" "$sp" "$sw" "$sw15" \
        "$(ratio "$ld" "$sp")" "$(ratio "$lw" "$sw")" "$(ratio "$lw" "$sw15")"
      awk -v a="$ld" -v b="$sp" 'BEGIN{exit !(a <= b)}' ||
        MISSED+=("$name -c $conf: linecheck's discovery $ld probes ($lp with the per-packet check's $lpp), tracelb $sp (medians of $ROUNDS)")
    done
    lab_down
  done
  echo "lc_probes: every probe linecheck sent (probes_used) = lc_disc (flow-map discovery) + lc_pp (per-packet check, which tracelb does not do)"
  echo "probes_x: lc_disc / lb_probes (goal: <= 1.00); wall_x: linecheck / tracelb; the same starting flows are not used (each tool picks its source port)"
}

# miss: MISS_RUNS linecheck runs at 95 % (each from its own source port, so other flows);
# a run misses a path when it reports fewer interfaces than the lab has.
bench_miss() {
  echo
  echo "== miss rate: $MISS_RUNS runs of linecheck trace --multipath -U --confidence 95 per lab"
  printf '%-9s %6s %8s %10s %10s %14s %12s\n' lab runs missed share bound median_probes false_links
  local spec name prefix dst splits args
  for spec in "${LABS[@]}"; do
    IFS='|' read -r name prefix dst splits args <<<"$spec"
    # shellcheck disable=SC2086
    lab_up -prefix "$prefix" $args
    local want
    # interfaces per TTL on the lab's paths (labctl prints "path N: addr addr ...")
    want=$(grep '^path ' "$TMP/lab.out" | cut -d: -f2 | awk '{for (i = 1; i <= NF; i++) print i, $i}' | sort -u | wc -l)
    # the lab's links: consecutive addresses of each path, "TTL from to"
    grep '^path ' "$TMP/lab.out" | cut -d: -f2 | awk '{for (i = 1; i < NF; i++) print i, $i, $(i + 1)}' | sort -u >"$TMP/links"
    local missed=0 wrong=0 i n
    : >"$TMP/mp"
    for i in $(seq 1 "$MISS_RUNS"); do
      ip netns exec "${prefix}c" "$LC" trace --multipath -U --timeout 500ms --format json "$dst" >"$TMP/lc.json"
      n=$(jq '[.multipath.nodes[] | select(.address != "" and .address != null) | "\(.ttl) \(.address)"] | unique | length' "$TMP/lc.json")
      jq '.multipath.probes_used' "$TMP/lc.json" >>"$TMP/mp"
      [ "$n" -lt "$want" ] && missed=$((missed + 1))
      jq -r '.links[] | "\(.ttl) \(.from) \(.to)"' "$TMP/lc.json" | sort -u >"$TMP/lclinks"
      [ -n "$(comm -23 "$TMP/lclinks" "$TMP/links")" ] && wrong=$((wrong + 1))
    done
    local share bound
    share=$(awk -v m="$missed" -v n="$MISS_RUNS" 'BEGIN{printf "%.3f", m / n}')
    bound=$(awk -v k="$splits" 'BEGIN{printf "%.3f", 1 - 0.95 ^ k}')
    printf '%-9s %6s %8s %10s %10s %14s %12s\n' "$name" "$MISS_RUNS" "$missed" "$share" "$bound" "$(median <"$TMP/mp")" "$wrong"
    [ "$wrong" = 0 ] || MISSED+=("$name: $wrong of $MISS_RUNS runs reported a link the lab does not have")
    # Binomial slack: the bound is an expectation; allow 2 standard deviations over it.
    awk -v s="$share" -v b="$bound" -v n="$MISS_RUNS" 'BEGIN{exit !(s <= b + 2 * sqrt(b * (1 - b) / n))}' ||
      MISSED+=("$name: $missed of $MISS_RUNS runs missed a path (bound $bound)")
    lab_down
  done
  echo "bound = 1 - 0.95^splits (splitting routers on the lab); a run misses when it reports fewer interfaces than the lab has;"
  echo "false_links: runs with a link in links[] that no path of the lab has (goal: 0)"
}

case $parts in
  all) bench_probes; bench_miss ;;
  probes) bench_probes ;;
  miss) bench_miss ;;
  *) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
bench_verdict
