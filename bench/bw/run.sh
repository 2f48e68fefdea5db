#!/usr/bin/env bash
# bench/bw/run.sh — the `linecheck bw` benchmark (issue 12, "Performance").
#
# On loopback, against one stock `iperf3 -s` (127.0.0.1, a free port), in this
# one run and interleaved:
#   linecheck bw -t T [--reverse] 127.0.0.1      (our client)
#   iperf3 -c 127.0.0.1 -t T [-R]                 (iperf3's own client, the anchor)
# and, for our server, stock `iperf3 -c` against `linecheck bw --listen` beside
# `iperf3 -c` against `iperf3 -s`. Loopback has no link to fill: the rate is
# what the two processes' CPU reaches, so it shows whether our code limits a
# test. Prints Gbit/s (receiver's mean), the ratio to iperf3, and CPU seconds
# per gigabit carried (user + system of the measured process, /usr/bin/time).
#
# Exit status 1 when linecheck reaches less than MIN_RATIO (0.9) of iperf3's
# rate in any mode: then our code, not the path, limits the test.
#
#   bench/bw/run.sh                    # T=5 RUNS=3
#   T=10 RUNS=5 bench/bw/run.sh
# The machine is shared: each mode runs RUNS times, interleaved with its
# anchor, and the fastest run of each is reported.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$PATH"
command -v iperf3 >/dev/null || { echo "bench/bw: iperf3 is not installed (apt-get install iperf3)" >&2; exit 2; }

DIR=${BENCH_DIR:-${TMPDIR:-/tmp}/linecheck-bench-bw}
T=${T:-5}
RUNS=${RUNS:-3}
MIN_RATIO=${MIN_RATIO:-0.9}
mkdir -p "$DIR"
go build -o "$DIR/linecheck" ./cmd/linecheck

freeport() {
  local p
  while :; do
    p=$((20000 + RANDOM % 30000))
    ss -Htanu "sport = :$p" | grep -q . || { echo "$p"; return; }
  done
}
waitport() { for _ in $(seq 100); do ss -Hltn "sport = :$1" | grep -q LISTEN && return; sleep 0.05; done; echo "port $1 never listened" >&2; exit 2; }

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

IPORT=$(freeport)
iperf3 -s -B 127.0.0.1 -p "$IPORT" >/dev/null 2>&1 & PIDS+=($!)
LPORT=$(freeport)
"$DIR/linecheck" bw --listen "127.0.0.1:$LPORT" --format json >"$DIR/listen.json" 2>/dev/null & PIDS+=($!)
waitport "$IPORT"; waitport "$LPORT"

# run NAME KIND CMD…: KIND is lc (linecheck JSON) or ip (iperf3 -J); appends
# "NAME bps cpu_s" to results.
: > "$DIR/results"
run() {
  local name=$1 kind=$2; shift 2
  /usr/bin/time -f '%U %S' -o "$DIR/time" "$@" > "$DIR/out.json"
  python3 - "$name" "$kind" "$DIR/out.json" "$DIR/time" >> "$DIR/results" <<'PY'
import json, sys
name, kind, out, tm = sys.argv[1:5]
d = json.load(open(out))
bps = d["throughput_bps"]["mean"] if kind == "lc" else d["end"]["sum_received"]["bits_per_second"]
u, s = map(float, open(tm).read().split()[-2:])
print(name, bps, u + s)
PY
}

for _ in $(seq "$RUNS"); do
  run lc-upload   lc "$DIR/linecheck" bw -q -t "$T" -p "$IPORT" --format json 127.0.0.1
  run ip-upload   ip iperf3 -c 127.0.0.1 -p "$IPORT" -t "$T" -J
  run lc-download lc "$DIR/linecheck" bw -q -t "$T" -p "$IPORT" --reverse --format json 127.0.0.1
  run ip-download ip iperf3 -c 127.0.0.1 -p "$IPORT" -t "$T" -R -J
  # Our server against iperf3's client; the CPU is the client's, the rate is
  # what the pair reached.
  run lc-server   ip iperf3 -c 127.0.0.1 -p "$LPORT" -t "$T" -J
  run ip-server   ip iperf3 -c 127.0.0.1 -p "$IPORT" -t "$T" -J
done

python3 - "$DIR/results" "$T" "$MIN_RATIO" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
T, min_ratio = float(sys.argv[2]), float(sys.argv[3])
best = {}
for name, bps, cpu in rows:
    bps, cpu = float(bps), float(cpu)
    if name not in best or bps > best[name][0]:
        best[name] = (bps, cpu)
print(f"bench/bw: loopback, {T:.0f} s per test, best of {len(rows)//6} runs each, this machine now")
print(f"{'mode':<10} {'linecheck Gbit/s':>17} {'iperf3 Gbit/s':>14} {'ratio':>6} {'lc CPU s/Gbit':>14} {'iperf3 CPU s/Gbit':>18}")
fail = False
for mode, note in (("upload", "client sends"), ("download", "client receives"), ("server", "iperf3 -c against our --listen vs iperf3 -s")):
    lb, lc = best["lc-" + mode]; ib, ic = best["ip-" + mode]
    ratio = lb / ib
    gbits_l, gbits_i = lb * T / 1e9, ib * T / 1e9
    print(f"{mode:<10} {lb/1e9:>17.2f} {ib/1e9:>14.2f} {ratio:>6.2f} {lc/gbits_l:>14.4f} {ic/gbits_i:>18.4f}   ({note})")
    if ratio < min_ratio:
        fail = True
        print(f"  FAIL: {mode}: linecheck reaches {ratio:.2f} of iperf3 (< {min_ratio}): our code limits the test")
print("CPU s/Gbit: user+system seconds of the measured client process per gigabit it carried; for 'server' both columns are iperf3 -c's")
sys.exit(1 if fail else 0)
PY
