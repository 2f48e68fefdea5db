#!/usr/bin/env bash
# bench/serve/slowclients.sh — slow clients beside a scraper, serve against
# Prometheus's own /metrics (the anchor), in the same run (issue 37).
#
# Starts `linecheck serve` (one target, 127.0.0.1) and a Prometheus with
# nothing to scrape, both on loopback, and runs each attack of
# bench/serve/slowclients against each one's /metrics: 64 clients pipelining
# requests and never reading (one address), 160 over 40 addresses, 500 idle
# keep-alive connections and 500 silent ones (one address and 50). Beside
# every attack a scraper does 40 scrapes from 127.0.0.1. Prints, per attack,
# the scrapes answered and their p99 for both, and the p99 ratio.
#
# Goals (serve): at least 95 % of the scrapes answered and p99 under 1 s.
# The script exits 1 when one is missed.
#
#   bench/serve/slowclients.sh
#   PROMETHEUS=/usr/bin/prometheus BENCH_DIR=/tmp/lcsc bench/serve/slowclients.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$PATH"

DIR=${BENCH_DIR:-${TMPDIR:-/tmp}/linecheck-bench-slowclients}
PROM=${PROMETHEUS:-$(command -v prometheus || true)}
[ -x "$PROM" ] || { echo "slowclients.sh: prometheus is not installed (the anchor)" >&2; exit 2; }
SPORT=${SPORT:-19631}
PPORT=${PPORT:-19632}
mkdir -p "$DIR"
go build -o "$DIR/linecheck" ./cmd/linecheck
go build -o "$DIR/slowclients" ./bench/serve/slowclients

printf 'candidates:\n  - name: lo\n    targets: [{addr: 127.0.0.1}]\n' >"$DIR/c.yaml"
printf 'global: {scrape_interval: 1h}\nscrape_configs: []\n' >"$DIR/prom.yml"
"$DIR/linecheck" serve --config "$DIR/c.yaml" --listen "127.0.0.1:$SPORT" --user '' 2>"$DIR/serve.log" &
SPID=$!
"$PROM" --config.file "$DIR/prom.yml" --storage.tsdb.path "$DIR/tsdb" --web.listen-address "127.0.0.1:$PPORT" 2>"$DIR/prom.log" &
PPID_=$!
trap 'kill $SPID $PPID_ 2>/dev/null; wait $SPID $PPID_ 2>/dev/null || true' EXIT
for u in "http://127.0.0.1:$SPORT/metrics" "http://127.0.0.1:$PPORT/metrics"; do
	for _ in $(seq 100); do curl -fs -o /dev/null "$u" && break; sleep 0.2; done
done

fail=0
printf '%-46s %14s %14s %8s\n' attack "serve ok/p99" "prom ok/p99" "p99 s/p"
while read -r attack clients addrs label; do
	read -r sok sn sp99 < <("$DIR/slowclients" -url "http://127.0.0.1:$SPORT/metrics" -attack "$attack" -clients "$clients" -addrs "$addrs")
	read -r pok pn pp99 < <("$DIR/slowclients" -url "http://127.0.0.1:$PPORT/metrics" -attack "$attack" -clients "$clients" -addrs "$addrs")
	ratio=$(awk -v a="$sp99" -v b="$pp99" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
	printf '%-46s %5s/%-2s %6sms %5s/%-2s %6sms %8s\n' "$label" "$sok" "$sn" "$sp99" "$pok" "$pn" "$pp99" "$ratio"
	if [ $((sok * 100)) -lt $((sn * 95)) ] || awk -v p="$sp99" 'BEGIN { exit !(p >= 1000) }'; then
		echo "  missed: serve answered $sok of $sn, p99 ${sp99} ms (goal: 95 %, under 1000 ms)"
		fail=1
	fi
done <<'ATTACKS'
pipeline 64 1 64 pipelining, never reading, 1 address
pipeline 160 40 160 pipelining, never reading, 40 addresses
idle 500 1 500 idle keep-alive, 1 address
idle 500 50 500 idle keep-alive, 50 addresses
silent 500 1 500 silent, 1 address
silent 500 50 500 silent, 50 addresses
ATTACKS
exit $fail
