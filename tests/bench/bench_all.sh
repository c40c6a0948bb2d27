#!/usr/bin/env bash
# Every benchmark figure in one table (prints figures; never a pass/fail test).
#
#   tests/bench/bench_all.sh BUILD_DIR [--compare OTHER_BUILD_DIR] [--quick] [--keep DIR]
#
# Runs, one after the other, with this checkout's scripts against BUILD_DIR's binaries:
#   bench_apply.sh    2,000 projects x 3 domains, 2 workflows each (~38k writes), standalone emulator
#   bench_git.sh      1k- and 10k-document repositories: poll, push -> applied, one-file change,
#                     full reconcile, plan --git, validate
#   bench_register.sh 200 real pyflyte packages
#   bench_oci_pull.sh a 50 MiB layer from a loopback docker-registry, flytecd vs curl
# Each script appends its figures (tests/bench/lib.sh `figure`) to a file; this prints them as one
# markdown table with their inputs and the issue-24 goal, and the ratios that matter (flytecd's
# write rate vs the same server's raw rate, one-file change vs full reconcile, flytecd vs curl).
# With --compare the other build runs first, then BUILD_DIR, and the table gains a column per
# build and their ratio (BUILD_DIR / OTHER: below 1 is faster for times, higher is better for
# rates). --quick shrinks the inputs (500 projects, 50 packages, 3 pulls) for a smoke run. Each
# script's full output is kept in the --keep directory (default: a temporary one, printed).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="" other="" quick=0 keep=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --compare) other="$(cd "${2:?--compare needs a build directory}" && pwd)"; shift 2 ;;
    --quick) quick=1; shift ;;
    --keep) keep="${2:?--keep needs a directory}"; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) [[ -z "$build" ]] || { echo "bench_all.sh: unexpected argument '$1'" >&2; exit 2; }
       build="$(cd "$1" && pwd)"; shift ;;
  esac
done
[[ -n "$build" ]] || { echo "usage: bench_all.sh BUILD_DIR [--compare OTHER_BUILD_DIR] [--quick]" >&2; exit 2; }
out="${keep:-$(mktemp -d /tmp/flytecd-bench-all.XXXXXX)}"
mkdir -p "$out"
if [[ $quick == 1 ]]; then projects=500 packages=50 pulls=3; else projects=2000 packages=200 pulls=5; fi

run_all() {  # name build -> $out/<name>.tsv, logs $out/<name>-<bench>.log
  local name="$1" dir="$2"
  export FLYTECD_FIGURES="$out/$name.tsv"
  : > "$FLYTECD_FIGURES"
  echo "== $name: $dir ($(git -C "$dir/.." rev-parse --short HEAD 2>/dev/null || echo '?'))" >&2
  local b
  for b in "apply:bench_apply.sh $dir $projects 2" "git:bench_git.sh $dir" \
           "register:bench_register.sh $dir $packages" "oci:bench_oci_pull.sh $dir $pulls 50"; do
    local label="${b%%:*}" cmd="${b#*:}" t0=$SECONDS
    # shellcheck disable=SC2086  # the command line is split on purpose
    if bash "$here"/$cmd > "$out/$name-$label.log" 2>&1; then
      echo "   $label: $((SECONDS - t0)) s" >&2
    else
      echo "   $label: FAILED after $((SECONDS - t0)) s (its figures are missing; see $out/$name-$label.log)" >&2
    fi
  done
  unset FLYTECD_FIGURES
}

# One raw client for both trees (the newest: an older one may lack --in-flight): it measures the
# server, and the server is what differs.
export FLYTECD_BENCH_RPC="$build/tests/flytecd_bench_rpc"
# The other tree's apply runs once (its write-rate ratio is not compared); this tree's ratio is
# the median of bench_apply.sh's pairs.
[[ -n "$other" ]] && FLYTECD_BENCH_PAIRS=1 run_all other "$other"
run_all this "$build"

python3 - "$out" "$build" "$other" "$(nproc)" <<'EOF'
import csv, os, sys
out, build, other, cpus = sys.argv[1:5]

def load(name):
    path = os.path.join(out, name + ".tsv")
    figs = {}
    if os.path.exists(path):
        for row in csv.reader(open(path), delimiter="\t"):
            if len(row) >= 3:
                figs[row[0]] = (row[1], row[2], row[3] if len(row) > 3 else "")
    return figs

# The issue-24 goal of a figure, where it has one.
goals = {
    "cold apply": "<= 5 s",
    "cold apply peak RSS": "<= 150 MiB",
    "cold apply write rate": ">= 0.9 x raw at the same concurrency",
    "cold apply write rate, running steps": ">= 0.9 x raw at the same concurrency",
    "running steps vs raw mix, median of pairs": ">= 0.9",
    "emulator raw write rate, 64 in flight": ">= 10,000/s",
    "no-change apply": "<= 1.5 s",
    "one-file change reconcile, webhook, 10k documents": "<= 0.05 x full reconcile",
    "push -> applied, webhook, 10k documents": "<= 300 ms",
    "plan --git (markdown)": "<= 0.5 s",
    "validate": "<= 0.7 s",
    "no-change poll, r10k, file": "keep (0.23 ms)",
    "no-change poll, r10k, http": "keep (3.55 ms)",
    "OCI pull, flytecd": "keep (<= 1.1 x curl)",
    "cold registration": "keep (~11 s)",
    "no-change reconcile": "keep (0.07 s)",
}
this, prev = load("this"), load("other") if other else {}

def num(v):
    try:
        return float(v)
    except ValueError:
        return None

# Derived ratios.
full = num(this.get("full reconcile, 10k documents", ("", "", ""))[0])
one = num(this.get("one-file change reconcile, webhook, 10k documents", ("", "", ""))[0])
derived = []
if full and one is not None:
    derived.append(("one-file change / full reconcile, 10k documents", f"{one / full:.3f}", "x",
                    "targeted pass vs startup full reconcile"))

names = list(this) + [n for n in prev if n not in this]
print(f"flytecd benchmarks: {build}" + (f" vs {other}" if other else "") + f", {cpus} CPUs")
print()
if other:
    print("| figure | other | this | this / other | input | goal |")
    print("|---|---:|---:|---:|---|---|")
else:
    print("| figure | value | input | goal |")
    print("|---|---:|---|---|")
for n in names:
    v, unit, note = this.get(n, ("-", "", ""))
    g = goals.get(n, "")
    if other:
        pv, punit, pnote = prev.get(n, ("-", unit, ""))
        a, b = num(v), num(pv)
        ratio = f"{a / b:.2f}" if a is not None and b else "-"
        print(f"| {n} | {pv} {punit} | {v} {unit} | {ratio} | {note or pnote} | {g} |")
    else:
        print(f"| {n} | {v} {unit} | {note} | {g} |")
for n, v, unit, note in derived:
    print(f"| {n} | " + ("- | " if other else "") + f"{v} {unit} | " + ("- | " if other else "") +
          f"{note} | {goals.get('one-file change reconcile, webhook, 10k documents', '')} |")
EOF
echo
echo "logs and figures: $out"
