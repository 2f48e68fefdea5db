#!/usr/bin/env bash
# TUI performance: time to render one frame with 50 candidates × 30 hops, per
# screen, against the 60 Hz frame budget (16.7 ms), and the memory of a long
# run (1e6 probe messages: heap and ring sizes stay constant).
#   bench/tui/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$PATH"
echo "== frame render (frame-budget = ns/op ÷ 16.7 ms)"
go test ./tui -run '^$' -bench 'RenderFrame|ProbeBatch' -benchmem -count 1
echo "== long run: 1e6 probe messages"
go test ./tui -run 'TestMemoryBoundedOverLongRun' -count 1 -v | grep -E 'heap|ok|FAIL|PASS'
