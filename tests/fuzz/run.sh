#!/usr/bin/env bash
# Runs every libFuzzer target of a -DFLYTECD_FUZZ=ON build for SECONDS each on its seed corpus,
# after replaying the saved crashers in tests/fuzz/regressions/<target>/. Seeds are copied into a
# temporary working corpus, so nothing is written into the tree. Fails when any target crashes,
# leaks, hangs (-timeout) or runs out of memory; the failing input is kept under
# BUILD_DIR/fuzz-artifacts/<target>/ and its reproduction command printed.
#
#   tests/fuzz/run.sh BUILD_DIR SECONDS [TARGET...]    (default: every target)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "${1:?usage: run.sh BUILD_DIR SECONDS [TARGET...]}" && pwd)"
seconds="${2:?usage: run.sh BUILD_DIR SECONDS [TARGET...]}"
shift 2
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(documents package_ref package_archive oci_manifest oci_auth git_url webhook http_request)
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
artifacts="$build/fuzz-artifacts"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:detect_stack_use_after_return=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$root/tests/lsan.supp:print_suppressions=0}"
if [[ -x /usr/lib/llvm-14/bin/llvm-symbolizer ]]; then
  export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer
fi

# Copies files into a flat seed directory, naming each after its path (unique, readable).
add_seeds() {
  local dest="$1"
  shift
  local f
  for f in "$@"; do
    [[ -f "$f" ]] || continue
    local rel="${f#"$root"/}"
    cp "$f" "$dest/${rel//\//__}"
  done
}

seed_corpus() {
  local target="$1" dest="$2"
  mkdir -p "$dest"
  add_seeds "$dest" "$root/tests/fuzz/corpus/$target"/*
  case "$target" in
    documents)
      add_seeds "$dest" "$root"/tests/corpus/bad/*/*.yaml
      while IFS= read -r -d '' f; do add_seeds "$dest" "$f"; done \
        < <(find "$root/repo-layout-example" -name '*.yaml' -print0)
      ;;
    package_archive) add_seeds "$dest" "$root"/repo-layout-example/packages/*.tgz ;;
  esac
}

# Longest input to generate. libFuzzer's default (the largest seed, at least 4096 bytes) never
# reaches the lengths where a recursive matcher or parser runs out of stack, so the text parsers
# may grow to 64 KiB; the HTTP head stops a little past the listener's 16 KiB limit.
max_len_for() {
  case "$1" in
    documents | package_ref | oci_manifest | oci_auth | git_url) echo 65536 ;;
    http_request) echo 20000 ;;
    *) echo 0 ;;  # libFuzzer's default
  esac
}

# Peak RSS a target may reach (MiB): its memory property (tests/fuzz/memory_property.hpp, which
# each target also checks on its own heap per input) over the longest input it is given, plus
# 512 MiB for ASan's redzones, its quarantine (256 MiB) and libFuzzer's corpus.
#   documents:       1 KiB per input byte + 16 MiB (the loader holds one document's tree at a time)
#   package_archive: one 8 MiB member + twice the 64 MiB decode bound + 16 MiB (compressed input:
#                    the reader limits the fuzzer sets, not the input size, bound it)
rss_limit_for() {
  local asan=512
  case "$1" in
    documents) echo $((asan + ((1024 * $(max_len_for documents)) >> 20) + 16)) ;;
    package_archive) echo $((asan + 8 + 2 * 64 + 16)) ;;
    *) echo 2048 ;;
  esac
}

passed=0
failed=0
summary=()
for t in "${targets[@]}"; do
  bin="$build/tests/fuzz/fuzz_$t"
  if [[ ! -x "$bin" ]]; then
    echo "fuzz: $t: $bin not built (cmake --build $build --target flytecd_fuzz)" >&2
    failed=$((failed + 1))
    summary+=("$t: NOT BUILT")
    continue
  fi
  mkdir -p "$work/$t" "$artifacts/$t"
  log="$work/$t/log"

  # 1. Every input that once crashed this target must now pass.
  regressions=()
  if [[ -d "$root/tests/fuzz/regressions/$t" ]]; then
    while IFS= read -r -d '' f; do regressions+=("$f"); done \
      < <(find "$root/tests/fuzz/regressions/$t" -type f ! -name '*.md' -print0 | sort -z)
  fi
  if ((${#regressions[@]})); then
    if ! "$bin" -timeout=25 -rss_limit_mb="$(rss_limit_for "$t")" "${regressions[@]}" >"$log" 2>&1; then
      tail -n 60 "$log"
      echo "fuzz: $t: FAILED on a saved regression input (tests/fuzz/regressions/$t/)"
      failed=$((failed + 1))
      summary+=("$t: FAILED (regression input)")
      continue
    fi
  fi

  # 2. Fuzz for the time budget, growing a scratch copy of the seeds.
  corpus="$work/$t/corpus"
  seed_corpus "$t" "$corpus"
  seeds=$(find "$corpus" -type f | wc -l)
  rc=0
  "$bin" -max_total_time="$seconds" -max_len="$(max_len_for "$t")" -timeout=25 -rss_limit_mb="$(rss_limit_for "$t")" \
    -print_final_stats=1 \
    -artifact_prefix="$artifacts/$t/" "$corpus" >"$log" 2>&1 || rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  rate=$((${execs:-0} / seconds))
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || true)
  after=$(find "$corpus" -type f | wc -l)
  line="$t: ${execs:-?} executions in ${seconds}s (${rate}/s), coverage ${cov:-?} edges, corpus $seeds -> $after inputs"
  if ((rc != 0)); then
    grep -E 'ERROR: |SUMMARY: |runtime error|Test unit written|Base64' "$log" | head -n 20 || true
    tail -n 80 "$log"
    crash=$(ls -t "$artifacts/$t"/ 2>/dev/null | head -1 || true)
    echo "fuzz: $line: FAILED (exit $rc)"
    [[ -n "$crash" ]] && echo "fuzz: reproduce with: $bin $artifacts/$t/$crash"
    failed=$((failed + 1))
    summary+=("$line: FAILED")
  else
    echo "fuzz: $line: ok"
    passed=$((passed + 1))
    summary+=("$line: ok")
  fi
done

echo "== fuzz summary"
printf '  %s\n' "${summary[@]}"
echo "fuzz: $passed passed, $failed failed"
((failed == 0))
