#!/usr/bin/env bash
# bench/serve/exposition.sh — serve's start-up and /metrics scrapes with two
# builds side by side (issue 34): BEFORE (the anchor, by default the
# hand-written text exposition of commit BEFORE_REV) and AFTER (this tree,
# client_golang's registry and promhttp), at 10 k, 40 k and 100 k targets.
#
# For each size it writes a candidates file of N one-target candidates on
# 127.0.0.0/8 (loopback only: 127.a.b.c, no .0 or .255) and, for each build
# in turn, starts `linecheck serve` with probing slowed to a trickle
# (--rate 50 --count 1 --trace-every 0, the pacing of bench/serve/run.sh) and
# measures the CPU seconds (user + system, /proc/PID/stat) from the start
# until its first /metrics answer is complete (that answer must hold every
# target's linecheck_target_up). Then both servers run at once and are
# scraped in turn, SCRAPES times each (or until SCRAPE_BUDGET seconds per
# build and size have gone, at least 5 scrapes), so that both see the same
# load on a shared machine: the p99 (nearest rank) of the scrape times, the
# CPU seconds serve spent per scrape, and its peak RSS (VmHWM) at the end.
#
# Goals (issue 34: "not what users would notice"): at 100 k targets AFTER
# takes at most 1.5× BEFORE's CPU seconds to its first answer, and its p99
# scrape is at most 2× BEFORE's or under 1 s. The script exits 1 when one is
# missed.
#
#   bench/serve/exposition.sh
#   SIZES="10000 40000" SCRAPES=20 bench/serve/exposition.sh
#   BEFORE=/tmp/linecheck-old AFTER=/tmp/linecheck-new bench/serve/exposition.sh
#   SCRAPE_ACCEPT='application/openmetrics-text;version=1.0.0' bench/serve/exposition.sh
#
# Needs curl, awk, git, the Go toolchain. Root or not (serve runs with
# --user ''). Loopback only.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$PATH"

DIR=${BENCH_DIR:-${TMPDIR:-/tmp}/linecheck-bench-exposition}
SIZES=${SIZES:-10000 40000 100000}
SCRAPES=${SCRAPES:-50}
SCRAPE_BUDGET=${SCRAPE_BUDGET:-240}
BEFORE_REV=${BEFORE_REV:-d2e53c2}
PORT=${PORT:-19641}
ACCEPT=${SCRAPE_ACCEPT:-*/*}
mkdir -p "$DIR"

if [ -z "${BEFORE:-}" ]; then
	# The anchor is built from the commit before the switch, out of a
	# plain copy of its tree (no second worktree).
	rm -rf "$DIR/before-src" && mkdir -p "$DIR/before-src"
	git archive "$BEFORE_REV" | tar -x -C "$DIR/before-src"
	(cd "$DIR/before-src" && go build -o "$DIR/linecheck-before" ./cmd/linecheck)
	BEFORE=$DIR/linecheck-before
fi
if [ -z "${AFTER:-}" ]; then
	go build -o "$DIR/linecheck-after" ./cmd/linecheck
	AFTER=$DIR/linecheck-after
fi

gen() { # gen N FILE
	awk -v n="$1" 'BEGIN {
		print "candidates:"
		for (i = 0; i < n; i++) {
			h = i % 254 + 1; net = int(i / 254)
			printf "  - name: c%d\n    targets: [{addr: 127.%d.%d.%d}]\n", i, int(net / 256) % 256, net % 256, h
		}
	}' >"$2"
}

cpu() { # cpu PID: user + system seconds
	local st
	read -r -a st <"/proc/$1/stat"
	awk -v u="${st[13]}" -v s="${st[14]}" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", (u + s) / hz }'
}
hwm() { awk '/^VmHWM:/ { printf "%.0f", $2 / 1024 }' "/proc/$1/status"; }
# scrape PORT OUT: prints the seconds the whole answer took, or "failed"
# when it did not come whole (serve cuts a response after its 30 s write
# timeout).
scrape() {
	local t
	# Only a regular file is removed (a stale first answer must not be
	# read again); never /dev/null, which the timing scrapes write to.
	if [ -f "$2" ] && [ ! -L "$2" ]; then rm -f -- "$2"; fi
	if t=$(curl -sf -H "Accept: $ACCEPT" --max-time 600 -o "$2" -w '%{time_total}' "http://127.0.0.1:$1/metrics"); then
		echo "$t"
	else
		echo failed
	fi
}
# p99 (nearest rank) in ms; a failed scrape ranks above every answer, and
# a p99 that falls on one is ">30000" (serve's write timeout).
p99() { sed 's/^failed$/inf/' | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "-"; exit } i = int(0.99 * NR); if (i < 0.99 * NR) i++; if (v[i] == "inf") print ">30000"; else printf "%.0f", v[i] * 1000 }'; }

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

declare -A PID UP P99 PER RSS N FIRSTFAIL LISTEN DEAD
# start NAME BIN PORT N FILE: starts serve, waits for its first complete
# /metrics answer, records the CPU seconds until then.
start() {
	local name=$1 bin=$2 port=$3 n=$4 f=$5 log="$DIR/serve-$1-$4.log" t0 got
	"$bin" serve --config "$f" --listen "127.0.0.1:$port" --rate 50 --count 1 --trace-every 0 --user '' 2>"$log" &
	PID[$name]=$!
	PIDS+=("$!")
	t0=$(date +%s)
	until grep -q 'http://' "$log"; do
		kill -0 "${PID[$name]}" 2>/dev/null || { echo "$name: serve exited (see $log)" >&2; exit 2; }
		[ $(($(date +%s) - t0)) -lt 300 ] || { echo "$name: not listening after 300 s" >&2; exit 2; }
		sleep 0.02
	done
	LISTEN[$name]=$(cpu "${PID[$name]}")
	# The first complete answer: a scrape cut by the write timeout is
	# tried again (its CPU seconds count), 3 times at most; a build that
	# never answers whole has no figure ("-") and is not scraped again.
	FIRSTFAIL[$name]=0 DEAD[$name]=0
	while [ "$(scrape "$port" "$DIR/first-$name.txt")" = failed ]; do
		FIRSTFAIL[$name]=$((FIRSTFAIL[$name] + 1))
		if [ "${FIRSTFAIL[$name]}" -ge 3 ]; then
			UP[$name]=- DEAD[$name]=1
			return 0
		fi
	done
	UP[$name]=$(cpu "${PID[$name]}")
	got=$(grep -c '^linecheck_target_up{' "$DIR/first-$name.txt" || true)
	[ "$got" -eq "$n" ] || { echo "$name at $n targets: first scrape holds $got target_up series" >&2; exit 2; }
}

fail=0
printf '%8s  %-7s %10s %14s %13s %14s %9s %8s %7s\n' targets build "CPU listen" "CPU s to 1st" "p99 scrape" "CPU s/scrape" "peak RSS" scrapes failed
for n in $SIZES; do
	f="$DIR/cand$n.yaml"
	[ -s "$f" ] || gen "$n" "$f"
	start before "$BEFORE" "$PORT" "$n" "$f"
	start after "$AFTER" $((PORT + 1)) "$n" "$f"
	: >"$DIR/t-before" && : >"$DIR/t-after"
	c0b=$(cpu "${PID[before]}") c0a=$(cpu "${PID[after]}") t0=$(date +%s) k=0
	while [ "$k" -lt "$SCRAPES" ]; do
		[ "${DEAD[before]}" = 1 ] || scrape "$PORT" /dev/null >>"$DIR/t-before"
		[ "${DEAD[after]}" = 1 ] || scrape $((PORT + 1)) /dev/null >>"$DIR/t-after"
		k=$((k + 1))
		if [ "$k" -ge 5 ] && [ $(($(date +%s) - t0)) -ge $((2 * SCRAPE_BUDGET)) ]; then break; fi
	done
	for b in before after; do
		P99[$b]=$(p99 <"$DIR/t-$b")
		[ "${DEAD[$b]}" = 0 ] || P99[$b]='>30000' 
		c0=$c0b
		if [ $b = after ]; then c0=$c0a; fi
		PER[$b]=$(awk -v a="$(cpu "${PID[$b]}")" -v z="$c0" -v k="$k" -v d="${DEAD[$b]}" 'BEGIN { if (d == 1) print "-"; else printf "%.3f", (a - z) / k }')
		RSS[$b]=$(hwm "${PID[$b]}")
		nf=$(grep -c failed "$DIR/t-$b" || true)
		printf '%8d  %-7s %10s %14s %10s ms %14s %6s MiB %8d %7s\n' "$n" "$b" "${LISTEN[$b]}" "${UP[$b]}" "${P99[$b]}" "${PER[$b]}" "${RSS[$b]}" "$k" "$nf+${FIRSTFAIL[$b]}"
	done
	r() { awk -v a="$1" -v b="$2" 'BEGIN { if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && b > 0) printf "%.2f", a / b; else print "-" }'; }
	ru=$(r "${UP[after]}" "${UP[before]}") rp=$(r "${P99[after]}" "${P99[before]}")
	printf '%8d  %-7s %9s× %13s× %12s× %13s× %8s× %8s\n' "$n" after/before "$(r "${LISTEN[after]}" "${LISTEN[before]}")" "$ru" "$rp" "$(r "${PER[after]}" "${PER[before]}")" "$(r "${RSS[after]}" "${RSS[before]}")" ""
	if [ "$n" = 100000 ]; then
		if awk -v r="$ru" 'BEGIN { exit !(r > 1.5) }'; then echo "  missed: CPU to the first answer ${ru}× (goal ≤ 1.5×)"; fail=1; fi
		if awk -v r="$rp" -v p="${P99[after]}" 'BEGIN { exit !((r == "-" && p ~ />/) || (r > 2 && p >= 1000)) }'; then echo "  missed: p99 scrape ${rp}× and ${P99[after]} ms (goal ≤ 2× or under 1 s)"; fail=1; fi
	fi
	cleanup
	PIDS=()
done
exit $fail
