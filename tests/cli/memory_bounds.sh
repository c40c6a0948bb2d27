#!/usr/bin/env bash
# Issue 27 items 5 and 6: inputs within the size limits that balloon in memory, run the way a user
# runs flytecd, each under /usr/bin/time (peak RSS of that process alone):
#  1. a 3.8 MB file of 26,000 small documents: refused at document 1,001 (file:line, the limit
#     named), quickly, within 64 MiB + 20x the file (it took 900 MB: every tree was built first);
#  2. a 3.8 MB file of 1,000 documents x 1,896 nodes (907 MB, 8.7 s): refused by the per-file node
#     bound within the same memory bound, and its first 200 documents accepted within it;
#  3. a package whose _2.pb holds 4,000,000 empty workflow nodes (an 8 KB .tgz; 573 MB in apply)
#     and its 1,000,000-node variant (2 KB): refused before decoding by `compile`, by
#     `validate --packages` and by `apply` (against the emulator), each within 100 MiB.
# Usage: memory_bounds.sh FLYTECD_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
command -v python3 >/dev/null || { echo "FAIL python3 is needed to generate the inputs"; exit 1; }
[[ -x /usr/bin/time ]] || { echo "FAIL /usr/bin/time is needed to measure peak RSS"; exit 1; }

# measure NAME WANT_RC MAX_MIB MAX_SECONDS command...: runs it, checks exit code, RSS and time.
measure() {
  local name="$1" want="$2" max_mib="$3" max_s="$4"; shift 4
  local rc=0
  /usr/bin/time -f "%e %M" -o "$tmp/time" timeout 120 "$@" >"$tmp/out" 2>&1 || rc=$?
  read -r secs kib < <(tail -1 "$tmp/time")
  local mib=$((kib / 1024))
  echo "$name: exit $rc, ${secs} s, peak RSS ${mib} MiB (at most ${max_mib} MiB)"
  [[ $rc -eq $want ]] || { bad "$name: exit $rc, expected $want"; head -c 3000 "$tmp/out"; echo; }
  ((mib <= max_mib)) || bad "$name: peak RSS ${mib} MiB > ${max_mib} MiB"
  awk -v s="$secs" -v m="$max_s" 'BEGIN { exit !(s <= m) }' || bad "$name: ${secs} s > ${max_s} s"
}
expect_out() {  # name, fixed string
  grep -qF -- "$2" "$tmp/out" || { bad "$1: output lacks: $2"; head -c 3000 "$tmp/out"; echo; }
}

# --- 1, 2: YAML -------------------------------------------------------------------------------
python3 "$src/tests/cli/yaml_bombs.py" "$tmp" || bad "yaml_bombs.py failed"
goal() { echo $(((64 + 20 * $(stat -c %s "$1") / 1048576))); }

many="$tmp/many/projects.yaml"
# Document 1,001 starts on line 1 + 1,000 x 5 (four lines and a separator each).
measure "validate 26,000 documents" 1 "$(goal "$many")" 5 "$bin" validate "$tmp/many"
expect_out "validate 26,000 documents" "projects.yaml:5001"
expect_out "validate 26,000 documents" "at most 1000 documents per file"

wide="$tmp/wide/overrides.yaml"
# 1,896,000 nodes: over the per-file node bound, refused by the streaming pass before any tree.
measure "validate 1,000 x 1,896 nodes" 1 "$(goal "$wide")" 5 "$bin" validate "$tmp/wide"
expect_out "validate 1,000 x 1,896 nodes" "overrides.yaml:"
expect_out "validate 1,000 x 1,896 nodes" "error[too_many_nodes]"
expect_out "validate 1,000 x 1,896 nodes" "at most 1000000 nodes per file"

# The first 200 of those documents (379,200 nodes, 740 KB) are within every bound: accepted, and
# converted one at a time within the same bound (before: every tree at once, ~200 MB).
mkdir -p "$tmp/fits"
awk '/^---$/ { n++ } n < 200' "$wide" > "$tmp/fits/overrides.yaml"
measure "validate 200 x 1,896 nodes" 0 "$(goal "$tmp/fits/overrides.yaml")" 20 "$bin" validate "$tmp/fits"
expect_out "validate 200 x 1,896 nodes" "valid: 1 files, 200 documents"

# 520 files of one such document each (985,920 nodes, within the revision's budget): every value
# is accepted and kept for the revision's life, so the bound is on what a kept value costs
# (a protobuf message per list element: 80.6 MiB; kept in wire form: ~30 MiB). The largest file
# sets the goal.
measure "validate 520 files x 1,896 nodes" 0 "$(goal "$tmp/split/p0000.yaml")" 120 \
  "$bin" validate "$tmp/split"
expect_out "validate 520 files x 1,896 nodes" "valid: 520 files, 520 documents"

# --- 3: protobuf decode bombs -----------------------------------------------------------------
python3 "$src/tests/cli/decode_bomb.py" "$tmp/bomb4m.tgz" 4000000 || bad "decode_bomb.py failed"
python3 "$src/tests/cli/decode_bomb.py" "$tmp/bomb1m.tgz" 1000000 || bad "decode_bomb.py failed"
echo "bombs: $(stat -c %s "$tmp/bomb4m.tgz") and $(stat -c %s "$tmp/bomb1m.tgz") bytes compressed"
for b in bomb4m bomb1m; do
  measure "compile $b.tgz" 1 100 10 "$bin" compile "$tmp/$b.tgz"
  expect_out "compile $b.tgz" "000_bomb.wf_2.pb (as flyteidl.admin.WorkflowSpec): decoding it would take about"
  expect_out "compile $b.tgz" "bytes per byte of protobuf (a decode bomb"
  lines=$(wc -l < "$tmp/out")
  ((lines <= 3)) || bad "compile $b.tgz printed $lines lines"
done

repo="$tmp/repo"
mkdir -p "$repo/packages" "$repo/registrations"
cp "$tmp/bomb4m.tgz" "$repo/packages/bomb.tgz"
cat > "$repo/project.yaml" <<'YAML'
apiVersion: flytecd/v1
kind: Project
id: bench
name: bench
YAML
cat > "$repo/registrations/bomb.yaml" <<'YAML'
apiVersion: flytecd/v1
kind: WorkflowRegistration
metadata: {name: bomb}
project: bench
domain: development
version: v1
package: packages/bomb.tgz
activate: none
YAML
measure "validate --packages (bomb)" 1 100 10 "$bin" validate --packages "$repo"
expect_out "validate --packages (bomb)" "registrations/bomb.yaml:1"
expect_out "validate --packages (bomb)" "bytes per byte of protobuf"

start_emulator || bad "the emulator did not listen on $eport"
measure "apply (bomb)" 1 100 30 "$bin" apply --repo "$repo" --state-dir "$tmp/state" \
  --admin-endpoint "127.0.0.1:$eport" --insecure --log-level warn
expect_out "apply (bomb)" "bytes per byte of protobuf"

((fail == 0)) && echo "all memory bounds hold"
exit "$fail"
