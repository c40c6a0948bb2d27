#!/usr/bin/env bash
# Scale benchmark for reconciling overrides (prints figures; never a pass/fail test).
#
#   tests/bench/bench_apply.sh [BUILD_DIR] [PROJECTS] [WORKFLOWS_PER_PROJECT]
#
# Generates a repository (default 2,000 projects x 3 domains: 2,000 project, 6,000 project-domain
# and 4,000 workflow scopes, 2-4 attribute types each), starts a standalone emulator on loopback,
# and measures with /usr/bin/time: a cold `flytecd apply`, a no-change apply, then the raw unary RPC
# rate of the same emulator with a minimal client loop (flytecd_bench_rpc): 64 calls in flight on
# gRPC's callback client (as flytecd's apply), also for the apply's own mix of writes (projects
# registered, overrides by scope), 8 and 1 blocking threads.
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
# The raw client: FLYTECD_BENCH_RPC when set (bench_all.sh --compare measures both trees' servers
# with one client), else this build's.
rpc_client="${FLYTECD_BENCH_RPC:-$build/tests/flytecd_bench_rpc}"
rpc_rate() {  # calls, then --threads T or --in-flight F -> prints the client's output, sets $rate
  "$rpc_client" "127.0.0.1:$port" --calls "$@" | tee "$work/rpc"
  rate=$(grep UpdateWorkflowAttributes "$work/rpc" | sed -n "s/.* \([0-9]*\) calls\/s.*/\1/p")
}
input="$projects projects x 3 domains, $((projects * wf)) workflows"
args=(apply --repo "$work/repo" --state-dir "$work/state" --admin-endpoint "127.0.0.1:$port" --insecure --log-level warn)
measure "cold apply" "$build/flytecd" "${args[@]}"
cold_s=$secs
cp "$work/out" "$work/out.cold"
write_s=$(sed -n 's/.*(running steps \([0-9.e+-]*\) s).*/\1/p' "$work/out" | tail -1)
writes=$(grep -c '  ok$' "$work/out" || true)
figure "cold apply" "$secs" s "$input, $writes writes"
figure "cold apply peak RSS" "$((rss / 1024))" MiB "$input"
measure "no-change apply" "$build/flytecd" "${args[@]}"
figure "no-change apply" "$secs" s "$input"
echo "cold apply issued $writes write steps (one RPC each)"
# flytecd keeps admin.maxInFlight (64) steps in flight through gRPC's callback client: the raw
# callback client with 64 in flight is its peer. The 8-thread blocking client is kept for history.
rpc_rate 40000 --in-flight 64
raw64=$rate
figure "emulator raw write rate, 64 in flight" "$raw64" "calls/s" "UpdateWorkflowAttributes, callback client"
rpc_rate 20000 --threads 8
figure "emulator raw write rate, 8 threads" "$rate" "calls/s" "UpdateWorkflowAttributes, blocking client"
rpc_rate 5000 --threads 1
figure "emulator raw write rate, 1 thread" "$rate" "calls/s" "UpdateWorkflowAttributes"
# The same server taking the apply's own mix of writes, each kind at 64 in flight on the raw
# client (as many calls of a kind as the apply made): the projects it registered, and its
# override writes by scope (project, project-domain, workflow). Time = the sum of each kind's
# calls over its rate; rate = the writes over that time.
mix_rate() {  # COLD_OUTPUT [quiet] -> sets $mix_n, $mix_s
  mix_s=0 mix_n=0
  local kind n r
  for kind in register-project project project-domain workflow; do
    n=$(awk -v k="$kind" '
      /^\+ create project / { if (k == "register-project") c++; next }
      /^[+~] (create|update) override / { s = split($4, a, "/");
        if ((s == 1 && k == "project") || (s == 2 && k == "project-domain") || (s == 3 && k == "workflow")) c++ }
      END { print c + 0 }' "$1")
    [[ $n -gt 0 ]] || continue
    "$rpc_client" "127.0.0.1:$port" --calls "$n" --in-flight 64 --rpc "$kind" > "$work/rpc"
    [[ -n "${2:-}" ]] || grep 'in flight' "$work/rpc"
    r=$(grep 'in flight' "$work/rpc" | sed -n "s/.* \([0-9]*\) calls\/s.*/\1/p")
    mix_s=$(awk -v t="$mix_s" -v n="$n" -v r="$r" 'BEGIN { printf "%.6f", t + (r > 0 ? n / r : 0) }')
    mix_n=$((mix_n + n))
  done
}
mix_rate "$work/out.cold"
raw_mix=$(awk -v n="$mix_n" -v t="$mix_s" 'BEGIN { printf "%.0f", (t > 0 ? n / t : 0) }')
echo "raw, the apply's mix of $mix_n writes at 64 in flight: ${mix_s} s, ${raw_mix} calls/s"
figure "emulator raw write rate, the apply's mix, 64 in flight" "$raw_mix" "calls/s" "$mix_n writes: projects registered, overrides by scope, each kind at its own rate"
flytecd_rate=$(awk -v w="$writes" -v s="$cold_s" 'BEGIN { printf "%.0f", (s > 0 ? w / s : 0) }')
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", (b > 0 ? a / b : 0) }'; }
figure "cold apply write rate" "$flytecd_rate" "calls/s" "whole command (load, observe, plan, 2 rounds): $(ratio "$flytecd_rate" "$raw64") raw at 64 in flight"
if [[ -n "$write_s" ]]; then
  # The same writes over the time the apply spent running steps (its `running steps` figure).
  step_rate=$(awk -v w="$writes" -v s="$write_s" 'BEGIN { printf "%.0f", (s > 0 ? w / s : 0) }')
  figure "cold apply write rate, running steps" "$step_rate" "calls/s" "${write_s} s of steps: $(ratio "$step_rate" "$raw64") raw at 64 in flight, $(ratio "$step_rate" "$raw_mix") raw of the same mix"
fi
# One pair (a cold apply, then the raw client on its mix) swings with the machine: on a busy
# 2-core host the same tree's ratio ranged 0.6-1.3 within minutes. So the ratio is also taken
# over FLYTECD_BENCH_PAIRS pairs (default 3: the run above and two more), each on a fresh
# emulator and state, the apply and its raw peer back to back; the figure is their median, with
# every pair's ratio beside it.
pairs="${FLYTECD_BENCH_PAIRS:-3}"
if [[ -n "$write_s" && "$pairs" -gt 1 ]]; then
  ratios=$(awk -v a="$step_rate" -v b="$raw_mix" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')
  for _ in $(seq 2 "$pairs"); do
    kill "$emu_pid" 2>/dev/null || true
    wait "$emu_pid" 2>/dev/null || true
    rm -rf "$work/state" "$work"/admin.db*
    bench_emulator "$build/flytecd"
    args=(apply --repo "$work/repo" --state-dir "$work/state" --admin-endpoint "127.0.0.1:$port" --insecure --log-level warn)
    "$build/flytecd" "${args[@]}" > "$work/out.pair" 2>&1 || { cat "$work/out.pair"; exit 1; }
    pair_s=$(sed -n 's/.*(running steps \([0-9.e+-]*\) s).*/\1/p' "$work/out.pair" | tail -1)
    pair_w=$(grep -c '  ok$' "$work/out.pair" || true)
    mix_rate "$work/out.pair" quiet
    r=$(awk -v w="$pair_w" -v s="$pair_s" -v n="$mix_n" -v t="$mix_s" \
      'BEGIN { printf "%.3f", (s > 0 && n > 0 ? (w / s) / (n / t) : 0) }')
    echo "pair: flytecd $pair_w writes in ${pair_s} s of steps, raw mix $mix_n in ${mix_s} s: ${r}x"
    ratios="$ratios $r"
  done
  median=$(tr ' ' '\n' <<< "$ratios" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
  echo "running steps vs raw of the same mix, $pairs pairs: $ratios (median $median)"
  figure "running steps vs raw mix, median of pairs" "$median" "x" "$pairs pairs of (cold apply, raw mix) on fresh emulators: $ratios"
fi
