#!/usr/bin/env bash
# Registration benchmark (prints figures; never a pass/fail test).
#
#   tests/bench/bench_register.sh [BUILD_DIR] [PACKAGES]
#
# One project with PACKAGES (default 200) WorkflowRegistration documents, each registering the
# real flytesnacks-core archive (39 tasks, 21 workflows, 24 launch plans + a fast source) under
# its own version (activate: none, so versions do not take activation from each other). A
# standalone emulator runs in its own process (SQLite file), so flytecd's peak RSS is its own.
# Measures a cold `flytecd apply` (wall, write RPCs per second, peak RSS) and a no-change apply.
set -euo pipefail
build="${1:-build}"; n="${2:-200}"
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
fixture="$src/repo-layout-example/packages/flytesnacks-core.tgz"
work="$(mktemp -d /tmp/flytecd-bench-reg.XXXXXX)"
trap 'kill "${emu_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mkdir -p "$work/repo/packages" "$work/repo/registrations"
cp "$fixture" "$work/repo/packages/"
bench_registrations "$n" core 3 packages/flytesnacks-core.tgz > "$work/repo/registrations/core.yaml"

bench_emulator "$build/flytecd"

args=(apply --repo "$work/repo" --state-dir "$work/state" --admin-endpoint "127.0.0.1:$port"
      --insecure --log-level warn)
measure() {  # label, command...
  local label="$1"; shift
  /usr/bin/time -f "%e %U %M" -o "$work/time" "$@" > "$work/out" 2>&1 || { tail -20 "$work/out"; exit 1; }
  read -r secs user rss < "$work/time"
  local rpcs; rpcs=$(sed -n 's/^registrations: .* \([0-9]*\) write RPCs$/\1/p' "$work/out")
  local rate; rate=$(awk -v r="$rpcs" -v s="$secs" 'BEGIN { printf "%.0f", (s > 0 ? r / s : 0) }')
  echo "$label: $n packages, wall ${secs} s (user CPU ${user} s), ${rpcs} write RPCs = ${rate}/s, flytecd peak RSS $((rss / 1024)) MiB"
  grep '^registrations:' "$work/out"
  figure "$label" "$secs" s "$n packages, ${rpcs} write RPCs (${rate}/s), peak RSS $((rss / 1024)) MiB"
}
measure "cold registration" "$build/flytecd" "${args[@]}"
measure "no-change reconcile" "$build/flytecd" "${args[@]}"
