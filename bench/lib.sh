# bench/lib.sh - what the bench scripts that run netlab labs (bench/multipath,
# bench/probe) share: the root check and lab lock, the anchors, the builds, a
# lab's start and stop, and the verdict. Sourced after the script's
# `cd "$(dirname "$0")/../.."`, so the working directory is the repository
# root. The script sets TMP (its scratch folder), LABPID="" (stopped by its
# cleanup) and MISSED=() (the goals missed).

# bench_lab_lock SCRIPT ARGS...: exit 2 unless root; otherwise run SCRIPT (its
# path from the repository root) again, with ARGS, under the lab lock that the
# test suites' labs hold too, unless this run already holds it.
bench_lab_lock() {
  local script=$1
  shift
  [ "$(id -u)" = 0 ] || { echo "$script: needs root" >&2; exit 2; }
  if [ -z "${LC_LAB_LOCKED:-}" ]; then LC_LAB_LOCKED=1 exec flock /tmp/lc-lab.lock "$PWD/$script" "$@"; fi
}

# bench_anchors SCRIPT COMMAND:PACKAGE...: installs from Debian the packages
# of the commands that are missing, then exits 2 when one is still missing.
bench_anchors() {
  local script=$1 t
  shift
  local need=()
  for t in "$@"; do
    command -v "${t%%:*}" >/dev/null || need+=("${t#*:}")
  done
  if [ ${#need[@]} -gt 0 ]; then
    echo "== installing the anchors: ${need[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  fi
  for t in "$@"; do
    command -v "${t%%:*}" >/dev/null || { echo "$script: ${t%%:*} is not installed" >&2; exit 2; }
  done
}

# bench_build: builds linecheck (unless LINECHECK_BIN names one) and labctl
# into $TMP; LC is the linecheck to run.
bench_build() {
  echo "== build (no -race)"
  LC=${LINECHECK_BIN:-}
  if [ -z "$LC" ]; then go build -o "$TMP/linecheck" ./cmd/linecheck; LC=$TMP/linecheck; fi
  go build -o "$TMP/labctl" ./internal/testkit/netlab/labctl
}

# lab_up ARGS...: starts `labctl ARGS...` in the background (its PID in
# LABPID, for the script's cleanup) and waits for "ready"; exit 2 when the
# lab does not come up.
lab_up() {
  "$TMP/labctl" "$@" >"$TMP/lab.out" 2>"$TMP/lab.err" &
  LABPID=$!
  for _ in $(seq 1 200); do
    grep -q '^ready' "$TMP/lab.out" && return 0
    kill -0 "$LABPID" 2>/dev/null || { cat "$TMP/lab.err" >&2; exit 2; }
    sleep 0.05
  done
  echo "lab did not come up" >&2; exit 2
}
lab_down() { kill "$LABPID"; wait "$LABPID" 2>/dev/null || true; LABPID=""; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

# bench_verdict: prints the goals in MISSED and exits 1 when there are any.
bench_verdict() {
  echo
  if [ ${#MISSED[@]} -gt 0 ]; then
    printf 'goal missed: %s\n' "${MISSED[@]}"
    exit 1
  fi
  echo "every goal met"
}
