#!/usr/bin/env bash
# bench/probe/run.sh - linecheck ping and trace beside their anchors, in one run
# (issue 3, "Performance"). Needs root (network namespaces, raw sockets).
#
#   bench/probe/run.sh            all three parts
#   bench/probe/run.sh ping       1,000 loopback targets x 10 probes vs fping
#   bench/probe/run.sh trace      whole-process trace on an 8-hop lab path, without and with 20 ms
#                                 injected delay, vs traceroute -n -q 1 (and mtr); linecheck --help
#   bench/probe/run.sh rtt        RTT accuracy vs iputils ping on an 8-hop lab path without delay
#   LINECHECK_BIN=path ...        use a prebuilt linecheck instead of building ./cmd/linecheck
#
# Traffic goes only to 127.0.0.0/8 inside a namespace of its own and to the
# 10.77.0.0/16 addresses of a netlab lab (internal/testkit/netlab) that this script
# builds and removes. Processes are stopped by PID.
#
# Goals (issue 14), checked at the end: ping CPU <= 0.8 x fping with no false
# loss; trace no slower than traceroute -n -q 1, without and with delay. The
# script exits 1 when one is missed, 2 on a setup error.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$PATH"
. bench/lib.sh
bench_lab_lock bench/probe/run.sh "$@"
# The anchors, from Debian, when missing.
bench_anchors bench/probe/run.sh fping:fping traceroute:traceroute mtr:mtr-tiny ping:iputils-ping jq:jq /usr/bin/time:time

parts=${1:-all}
MISSED=()   # goals missed, printed at the end
TMP=$(mktemp -d /tmp/linecheck-bench-probe.XXXXXX)
LABPID=""
PINGNS=lcbpping
cleanup() {
  if [ -n "$LABPID" ]; then kill "$LABPID" 2>/dev/null || true; wait "$LABPID" 2>/dev/null || true; fi
  ip netns del "$PINGNS" 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT

bench_build
# For the trace part, two builds that are not what a user gets from
# `go build` (measured beside it, never judged): static and stripped, and an
# empty Go program, the start-up floor of any Go binary.
CGO_ENABLED=0 go build -ldflags="-s -w" -o "$TMP/linecheck-static" ./cmd/linecheck
mkdir -p "$TMP/empty"
printf 'module emptygo\n\ngo 1.22\n' >"$TMP/empty/go.mod"
printf 'package main\n\nfunc main() {}\n' >"$TMP/empty/main.go"
(cd "$TMP/empty" && go build -o "$TMP/emptygo" .)
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(uname -r), fping $(fping -v 2>&1 | awk '{print $NF}'), $(mtr --version)"

# timed CMD... : runs CMD, stdout to $TMP/out, stderr to $TMP/err, and sets
# WALL, USER, SYS (seconds) from /usr/bin/time.
timed() {
  local t0 t1
  t0=$(date +%s%N)
  /usr/bin/time -o "$TMP/time" -f "%e %U %S" "$@" >"$TMP/out" 2>"$TMP/err" || true
  t1=$(date +%s%N)
  read -r _ USER SYS < <(tail -1 "$TMP/time")
  # /usr/bin/time's wall clock has 10 ms steps; a trace takes tens of ms.
  WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.4f", (b - a) / 1e9}')
}


bench_ping() {
  echo
  echo "== ping: 1,000 loopback targets x 10 probes, 100 ms per target, 1,000 pps overall"
  ip netns del "$PINGNS" 2>/dev/null || true
  ip netns add "$PINGNS"
  ip -n "$PINGNS" link set lo up
  local targets=() i
  for i in $(seq 0 999); do targets+=("127.1.$((i / 250)).$((i % 250 + 1))"); done
  printf '%s\n' "${targets[@]}" >"$TMP/targets"
  for range in "1 0" "0 2147483647"; do
    ip netns exec "$PINGNS" sysctl -qw net.ipv4.ping_group_range="$range"
    if [ "$range" = "1 0" ]; then mode="ping_group_range '1 0' (the root namespace default): both on raw sockets"
    else mode="ping_group_range open: linecheck on ICMP datagram sockets, fping (root) on raw"; fi
    echo "-- $mode"
    timed ip netns exec "$PINGNS" "$LC" ping --format json --count 10 --interval 100ms --timeout 1s --rate 1000 "${targets[@]}"
    local lw=$WALL lu=$USER ls=$SYS
    local lsent lrecv
    lsent=$(jq '[.results[].sent] | add' "$TMP/out")
    lrecv=$(jq '[.results[].recv] | add' "$TMP/out")
    timed ip netns exec "$PINGNS" fping -C 10 -p 100 -i 1 -t 1000 -q "${targets[@]}"
    local fw=$WALL fu=$USER fs=$SYS
    # fping -C prints "addr : rtt rtt - rtt ..." on stderr; "-" is a lost probe.
    local flost fsent
    fsent=$(awk -F' : ' 'NF==2 {n += split($2, a, " ")} END {print n+0}' "$TMP/err")
    flost=$(awk -F' : ' 'NF==2 {c = split($2, a, " "); for (i = 1; i <= c; i++) if (a[i] == "-") n++} END {print n+0}' "$TMP/err")
    printf '%-10s %8s %8s %8s %10s %8s %10s\n' tool wall_s user_s sys_s cpu_s sent false_loss
    printf '%-10s %8s %8s %8s %10s %8s %10s\n' linecheck "$lw" "$lu" "$ls" "$(awk -v a="$lu" -v b="$ls" 'BEGIN{print a+b}')" "$lsent" "$((lsent - lrecv))"
    printf '%-10s %8s %8s %8s %10s %8s %10s\n' fping "$fw" "$fu" "$fs" "$(awk -v a="$fu" -v b="$fs" 'BEGIN{print a+b}')" "$fsent" "$flost"
    local rcpu
    rcpu=$(ratio "$(awk -v a="$lu" -v b="$ls" 'BEGIN{print a+b}')" "$(awk -v a="$fu" -v b="$fs" 'BEGIN{print a+b}')")
    echo "ratio linecheck/fping: wall $(ratio "$lw" "$fw"), cpu $rcpu (goal: cpu <= 0.80, no false loss)"
    awk -v r="$rcpu" 'BEGIN{exit !(r != "n/a" && r <= 0.80)}' || MISSED+=("ping cpu ${rcpu}x fping ($range)")
    [ "$((lsent - lrecv))" = 0 ] && [ "$lsent" = 10000 ] || MISSED+=("ping: linecheck sent $lsent, lost $((lsent - lrecv)) ($range)")
  done
  ip netns del "$PINGNS"
}

# median of numbers on stdin
median() { sort -g | awk '{a[NR] = $1} END {if (NR % 2) print a[(NR + 1) / 2]; else printf "%.6f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

# trace_lab NAME ARGS... : one lab, 15 interleaved rounds of the floor (true),
# linecheck --help, linecheck trace and traceroute -n -q 1 (wall time of the
# whole process under ip netns exec), medians and the ratio to traceroute.
trace_lab() {
  local name=$1; shift
  lab_up "$@"
  local prefix dst=10.77.8.2 c
  prefix=$(awk '{for (i = 1; i < NF; i++) if ($i == "-prefix") print $(i + 1)}' <<<"$*")
  c=${prefix}c
  ip netns exec "$c" ping -n -c 20 -i 0.05 $dst >"$TMP/ping.txt"
  local rtt tool r
  rtt=$(grep -o 'time=[0-9.]*' "$TMP/ping.txt" | cut -d= -f2 | median)
  echo "-- $name: path RTT (iputils ping median) $rtt ms"
  local tools="floor emptygo help linecheck static traceroute"
  for tool in $tools; do : >"$TMP/w_$tool"; done
  for r in $(seq 1 15); do
    for tool in $tools; do
      case $tool in
        floor) timed ip netns exec "$c" true ;;
        emptygo) timed ip netns exec "$c" "$TMP/emptygo" ;;
        help) timed ip netns exec "$c" "$LC" --help ;;
        linecheck) timed ip netns exec "$c" "$LC" trace --format json --cycles 1 $dst
                   [ "$(jq '.hops | length' "$TMP/out")" = 9 ] || { echo "linecheck trace: not 9 hops" >&2; cat "$TMP/out" "$TMP/err" >&2; } ;;
        static) timed ip netns exec "$c" "$TMP/linecheck-static" trace --format json --cycles 1 $dst
                   [ "$(jq '.hops | length' "$TMP/out")" = 9 ] || { echo "linecheck (static) trace: not 9 hops" >&2; cat "$TMP/out" "$TMP/err" >&2; } ;;
        traceroute) timed ip netns exec "$c" traceroute -n -q 1 $dst
                   [ "$(grep -c '^ *[0-9]' "$TMP/out")" = 9 ] || echo "traceroute: not 9 hops" >&2 ;;
      esac
      echo "$WALL" >>"$TMP/w_$tool"
    done
  done
  local f e h l st t
  f=$(median <"$TMP/w_floor"); e=$(median <"$TMP/w_emptygo"); h=$(median <"$TMP/w_help"); l=$(median <"$TMP/w_linecheck")
  st=$(median <"$TMP/w_static"); t=$(median <"$TMP/w_traceroute")
  printf '%-58s %10s\n' "command (under ip netns exec)" "median_s"
  printf '%-58s %10s\n' "true (the floor)" "$f" "an empty Go program (any Go binary's start-up)" "$e" "linecheck --help" "$h" \
    "linecheck trace --format json --cycles 1" "$l" "  the same, CGO_ENABLED=0 -ldflags='-s -w' (not judged)" "$st" "traceroute -n -q 1" "$t"
  local rt
  rt=$(ratio "$l" "$t")
  echo "ratio linecheck trace/traceroute $rt (goal <= 1.00); above the floor: linecheck $(awk -v a="$l" -v b="$f" 'BEGIN{printf "%.4f", a-b}') s, traceroute $(awk -v a="$t" -v b="$f" 'BEGIN{printf "%.4f", a-b}') s, linecheck --help $(awk -v a="$h" -v b="$f" 'BEGIN{printf "%.4f", a-b}') s, an empty Go program $(awk -v a="$e" -v b="$f" 'BEGIN{printf "%.4f", a-b}') s"
  awk -v r="$rt" 'BEGIN{exit !(r != "n/a" && r <= 1.00)}' || MISSED+=("trace ${rt}x traceroute ($name)")
  if [ "$name" = "20 ms delay" ]; then
    : >"$TMP/w_mtr"
    for r in 1 2 3; do
      timed ip netns exec "$c" mtr -r -c 1 -n $dst
      [ "$(grep -c '|--' "$TMP/out")" = 9 ] || echo "mtr: not 9 hops" >&2
      echo "$WALL" >>"$TMP/w_mtr"
    done
    echo "mtr -r -c 1 -n: $(tr '\n' ' ' <"$TMP/w_mtr")s, ratio linecheck/mtr $(ratio "$l" "$(median <"$TMP/w_mtr")")"
  fi
  lab_down
}

bench_trace() {
  echo
  echo "== trace: whole process on an 8-hop lab path, 15 interleaved rounds, median wall time"
  trace_lab "no added delay" -prefix lcbptz -hops 8
  trace_lab "20 ms delay" -prefix lcbptr -hops 8 -tun 4 -delay 20ms
  startup_cpu
}

# startup_cpu: CPU time and page faults of start-up alone (perf stat -r 50,
# no namespace), which a loaded machine disturbs less than wall time.
startup_cpu() {
  if ! command -v perf >/dev/null; then echo "(perf not installed: no start-up CPU figures)"; return; fi
  echo "-- start-up CPU, perf stat -r 50 (task-clock ms, page faults)"
  local name cmd
  while IFS='|' read -r name cmd; do
    # shellcheck disable=SC2086
    perf stat -x, -r 50 -e task-clock,page-faults $cmd 2>&1 >/dev/null |
      awk -F, -v n="$name" '/task-clock/{t=$1} /page-faults/{p=$1} END{printf "%-44s %8.2f ms %6d faults\n", n, t, p}'
  done <<EOF2
linecheck --help|$LC --help
linecheck --help (CGO_ENABLED=0, -s -w)|$TMP/linecheck-static --help
an empty Go program|$TMP/emptygo
traceroute --help|traceroute --help
EOF2
}

bench_rtt() {
  echo
  echo "== RTT accuracy: 8-hop lab path, no injected delay, linecheck ping and iputils ping at the same time, 3 rounds of 500 probes at 10 ms"
  lab_up -prefix lcbprt -hops 8
  local dst=10.77.8.2 c=lcbprtc round
  printf '%-6s %14s %14s %14s\n' round ping_p50_ms linecheck_p50 diff_us
  : >"$TMP/diffs"
  for round in 1 2 3; do
    ip netns exec $c ping -n -c 500 -i 0.01 $dst >"$TMP/ping.txt" &
    local pp=$!
    ip netns exec $c "$LC" ping --format json --count 500 --interval 10ms --rate 1000 $dst >"$TMP/lc.json"
    wait $pp
    local pm lm
    pm=$(grep -o 'time=[0-9.]*' "$TMP/ping.txt" | cut -d= -f2 | median)
    lm=$(jq '.results[0].rtt_ms.p50' "$TMP/lc.json")
    local d
    d=$(awk -v a="$lm" -v b="$pm" 'BEGIN{printf "%.1f", (a - b) * 1000}')
    echo "$d" >>"$TMP/diffs"
    printf '%-6s %14s %14.6f %14s\n' "$round" "$pm" "$lm" "$d"
  done
  echo "median difference: $(median <"$TMP/diffs") us (target: |diff| < 50 us; ping prints 3 decimals, so +-0.5 us of rounding)"
  lab_down
}

case $parts in
  all) bench_ping; bench_trace; bench_rtt ;;
  ping) bench_ping ;;
  trace) bench_trace ;;
  rtt) bench_rtt ;;
  *) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
bench_verdict
