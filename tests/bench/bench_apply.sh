#!/usr/bin/env bash
# Scale benchmark for reconciling overrides (prints figures; never a pass/fail test).
#
#   tests/bench/bench_apply.sh [BUILD_DIR] [PROJECTS] [WORKFLOWS_PER_PROJECT]
#
# Generates a repository (default 2,000 projects x 3 domains: 2,000 project, 6,000 project-domain
# and 4,000 workflow scopes, 2-4 attribute types each), starts a standalone emulator on loopback,
# and measures with /usr/bin/time: a cold `flytecd apply`, a no-change apply, then the raw unary RPC
# rate of the same emulator with a minimal client loop (flytecd_bench_rpc).
set -euo pipefail
build="${1:-build}"; projects="${2:-2000}"; wf="${3:-2}"
work="$(mktemp -d /tmp/flytecd-bench.XXXXXX)"
trap 'kill "${emu_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
"$build/tests/flytecd_gen_repo" "$work/repo" --projects "$projects" --workflows-per-project "$wf"
bench_emulator "$build/flytecd"
measure() {  # label, command...
  local label="$1"; shift
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" > "$work/out" 2>&1 || { cat "$work/out"; exit 1; }
  read -r secs rss < "$work/time"
  echo "$label: wall ${secs} s, peak RSS $((rss / 1024)) MiB"
  tail -2 "$work/out"
}
args=(apply --repo "$work/repo" --state-dir "$work/state" --admin-endpoint "127.0.0.1:$port" --insecure --log-level warn)
measure "cold apply" "$build/flytecd" "${args[@]}"
writes=$(grep -c '  ok$' "$work/out" || true)
measure "no-change apply" "$build/flytecd" "${args[@]}"
echo "cold apply issued $writes write steps (one RPC each)"
"$build/tests/flytecd_bench_rpc" "127.0.0.1:$port" --calls 20000 --threads 8
"$build/tests/flytecd_bench_rpc" "127.0.0.1:$port" --calls 5000 --threads 1
