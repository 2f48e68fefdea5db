#!/usr/bin/env bash
# compare over a month of probes (issue 30): 30 days at one probe a second
# for 4 candidates (about 10.4 M linecheck.probe/v1 records, one file a day
# per candidate, read by glob), judged over the whole recording, the
# default evening window and the 24 hours of the day. Prints compare's wall
# time and peak RSS (/usr/bin/time -v) beside `wc -l` over the same files,
# with ratios, and the peak RSS per record against the windows' own size
# (24 bytes a probe).
#   bench/evening/run.sh [DAYS]          (default 30)
#   BASE_BIN=/path/to/old/linecheck bench/evening/run.sh   also times that binary on the same files
# Exits 1 when the peak RSS passes the goal, 4 times the windows' own size
# plus 64 MiB (96 bytes a record): the windows are 24 bytes a probe, the
# whole window's RTTs 8 more (the histogram's samples), and Go's collector
# lets the heap grow to twice what is live before it collects (GOGC=100).
# Holding each record, as compare did before, cost 344 bytes a record.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$PATH"
days=${1:-30}
command -v /usr/bin/time >/dev/null || { echo "bench/evening: /usr/bin/time is not installed (apt-get install time)" >&2; exit 2; }
TMP=$(mktemp -d /tmp/lc-bench-evening.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
echo "== build (no -race), commit $(git rev-parse --short HEAD), load average $(cut -d' ' -f1-3 /proc/loadavg)"
LC=${LINECHECK_BIN:-}
if [ -z "$LC" ]; then go build -o "$TMP/linecheck" ./cmd/linecheck; LC=$TMP/linecheck; fi
go build -o "$TMP/gen" ./bench/evening/gen
echo "== generate $days days × 4 candidates at 1 probe/s"
"$TMP/gen" -dir "$TMP/rec" -days "$days" -offers "$PWD/samples/offers.yaml"
files=("$TMP"/rec/*.ndjson)
bytes=$(cat "${files[@]}" | wc -c)
echo "   ${#files[@]} files, $((bytes / 1048576)) MiB"

# measure NAME CMD...: runs CMD under /usr/bin/time -v, output to $TMP/NAME.out;
# sets SECS and RSS_KB.
measure() {
  local name=$1
  shift
  sync
  cat "${files[@]}" >/dev/null # the page cache holds the files for every run alike
  /usr/bin/time -v "$@" >"$TMP/$name.out" 2>"$TMP/$name.time" || true
  SECS=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$TMP/$name.time")
  RSS_KB=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$TMP/$name.time")
}

measure wc wc -l "${files[@]}"
records=$(tail -1 "$TMP/wc.out" | awk '{ print $1 }')
wc_s=$SECS wc_kb=$RSS_KB
measure compare "$LC" compare --offline --format json -o "$TMP/result.json" "$TMP/rec/c.yaml"
cmp_s=$SECS cmp_kb=$RSS_KB
grep -q '"recommended"' "$TMP/result.json" || { echo "compare wrote no result:"; cat "$TMP/compare.time"; exit 2; }
jq_line() { command -v jq >/dev/null && jq -r "$1" "$TMP/result.json" || true; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
per_rec() { awk -v kb="$1" -v n="$records" 'BEGIN { printf "%.1f", kb * 1024 / n }'; }
echo
echo "== $records records, $days days, 4 candidates"
printf '  %-28s %8s s  %8s MiB  %7s B/record\n' "wc -l" "$wc_s" "$((wc_kb / 1024))" "$(per_rec "$wc_kb")"
printf '  %-28s %8s s  %8s MiB  %7s B/record   time %s× wc, RSS %s× wc\n' "linecheck compare --offline" "$cmp_s" "$((cmp_kb / 1024))" "$(per_rec "$cmp_kb")" "$(ratio "$cmp_s" "$wc_s")" "$(ratio "$cmp_kb" "$wc_kb")"
if [ -n "${BASE_BIN:-}" ]; then
  measure base "$BASE_BIN" compare --offline --format json -o "$TMP/base.json" "$TMP/rec/c.yaml"
  printf '  %-28s %8s s  %8s MiB  %7s B/record   time %s× wc, RSS %s× wc\n' "BASE_BIN compare" "$SECS" "$((RSS_KB / 1024))" "$(per_rec "$RSS_KB")" "$(ratio "$SECS" "$wc_s")" "$(ratio "$RSS_KB" "$wc_kb")"
  if cmp -s <(grep -v '"generated"' "$TMP/base.json") <(grep -v '"generated"' "$TMP/result.json"); then echo "  the two results are the same"; else echo "  the two results DIFFER"; fi
fi
echo "  windows' own size: 24 B a probe = $((records * 24 / 1048576)) MiB"
jq_line '.candidates[] | "  \(.name): sla \(.sla.pass); evening loss \(.windows[0].loss), p95 \(.windows[0].rtt_p95_ms) ms"'
goal_kb=$(( (records * 96 + 64 * 1048576) / 1024 ))
if [ "$cmp_kb" -gt "$goal_kb" ]; then
  echo; echo "goal missed: peak RSS $((cmp_kb / 1024)) MiB > 4 × the windows' 24 B a probe + 64 MiB = $((goal_kb / 1024)) MiB"; exit 1
fi
echo; echo "goal met: peak RSS $((cmp_kb / 1024)) MiB <= 4 × the windows' 24 B a probe + 64 MiB = $((goal_kb / 1024)) MiB"
