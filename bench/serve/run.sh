#!/usr/bin/env bash
# bench/serve/run.sh — serve's start-up against the number of targets (issue 20).
#
# Writes candidates files of N one-target candidates on 127.0.0.0/8 (loopback
# only: 127.a.b.c, no .0 or .255), starts `linecheck serve` on each with
# probing slowed to a trickle (--rate 50, --count 1, no traces), and times
# from the start until serve listens, then checks that /-/healthy answers and
# (up to SCRAPE_MAX targets, default 40000) that /metrics has every target's
# linecheck_target_up series (the scrape is timed apart: it is not start-up). Start-up was roughly quadratic (10 k targets
# 1.3 s, 20 k 3.7 s, 100 k not listening after 60 s): judging each
# candidate's SLA scanned every target, and every fourth address read the
# interfaces again.
#
# Goals: doubling the targets costs at most 2.6× the CPU seconds until serve
# listens (10k→20k, 20k→40k; CPU, not wall time, as the machine may be
# shared), and 100 k targets listen within 60 s. The script exits 1 when one
# is missed.
#
#   bench/serve/run.sh
#   SIZES="10000 20000 40000 100000" BENCH_DIR=/tmp/lcs bench/serve/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$PATH"

DIR=${BENCH_DIR:-${TMPDIR:-/tmp}/linecheck-bench-serve}
SIZES=${SIZES:-10000 20000 40000 100000}
PORT=${PORT:-19611}
mkdir -p "$DIR"
go build -o "$DIR/linecheck" ./cmd/linecheck

gen() { # gen N FILE
	awk -v n="$1" 'BEGIN {
		print "candidates:"
		for (i = 0; i < n; i++) {
			# 254 hosts per /24 under 127.0.0.0/8, never .0 or .255
			h = i % 254 + 1; net = int(i / 254)
			printf "  - name: c%d\n    targets: [{addr: 127.%d.%d.%d}]\n", i, int(net / 256) % 256, net % 256, h
		}
	}' >"$2"
}

declare -A T S C
fail=0
for n in $SIZES; do
	f="$DIR/cand$n.yaml"
	[ -s "$f" ] || gen "$n" "$f"
	start=$(date +%s.%N)
	"$DIR/linecheck" serve --config "$f" --listen "127.0.0.1:$PORT" --rate 50 --count 1 --trace-every 0 2>"$DIR/serve$n.log" &
	pid=$!
	ok=0
	# Listening is announced on stderr (after the file is read, the
	# targets set up and the port bound); then one scrape must show every
	# target, timed on its own.
	while kill -0 "$pid" 2>/dev/null; do
		if [ "$(echo "$(date +%s.%N) - $start > 60" | bc)" = 1 ]; then break; fi
		if grep -q 'http://' "$DIR/serve$n.log"; then
			end=$(date +%s.%N)
			# CPU seconds (user + system) spent until then: on a shared
			# machine the wall time also measures the neighbours.
			read -r -a st <"/proc/$pid/stat"
			C[$n]=$(echo "scale=2; (${st[13]} + ${st[14]}) / $(getconf CLK_TCK)" | bc)
			code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$PORT/-/healthy" || true)
			case "$code" in 200 | 503) ok=1 ;; esac
			S[$n]=-
			if [ "$ok" = 1 ] && [ "$n" -le "${SCRAPE_MAX:-40000}" ]; then
				# A scrape of N targets is N× the series (an RTT histogram
				# each): it is timed and checked up to SCRAPE_MAX targets.
				t0=$(date +%s.%N)
				got=$(curl -s --max-time 120 "http://127.0.0.1:$PORT/metrics" | grep -c '^linecheck_target_up{' || true)
				S[$n]=$(printf '%.2f s' "$(echo "$(date +%s.%N) - $t0" | bc)")
				[ "$got" -eq "$n" ] || ok=0
			fi
			break
		fi
		sleep 0.02
	done
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	if [ "$ok" != 1 ]; then
		echo "$n targets: not listening within 60 s, or a scrape without every target (see $DIR/serve$n.log)"
		fail=1
		continue
	fi
	T[$n]=$(echo "$end - $start" | bc)
	printf '%7d targets: listening after %.2f s (%.2f CPU s), /-/healthy answers; the first scrape (every target): %s\n' "$n" "${T[$n]}" "${C[$n]}" "${S[$n]}"
done
for n in $SIZES; do
	m=$((n * 2))
	if [ -n "${C[$n]:-}" ] && [ -n "${C[$m]:-}" ]; then
		r=$(echo "scale=2; ${C[$m]} / ${C[$n]}" | bc)
		printf '%7d → %d targets: %.2f× the CPU time to listen (goal ≤ 2.6)\n' "$n" "$m" "$r"
		if [ "$(echo "$r > 2.6" | bc)" = 1 ]; then fail=1; fi
	fi
done
exit $fail
