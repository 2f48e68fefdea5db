# bench/lib.sh - the prologue of the bench scripts that run netlab labs
# (bench/multipath, bench/probe). Sourced after the script's
# `cd "$(dirname "$0")/../.."`, so the working directory is the repository root.

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
