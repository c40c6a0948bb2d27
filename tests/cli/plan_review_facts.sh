#!/usr/bin/env bash
# Issue 24 (`plan --git` of a 45-file change in a 10k-document repository <= 0.5 s): the PR view
# parses the files that differ and the files of the projects they touch, with the facts of
# earlier reviews (projects per file, by path and content id) kept in the state directory. What
# it prints must be what the review of the whole revisions prints. Each change below is reviewed
# with no facts kept (whole revisions) and with them (partial), in every output format: stdout and
# exit code must be the same, and the debug log must say which way it was loaded.
# Usage: plan_review_facts.sh FLYTECD_BINARY SOURCE_DIR GEN_REPO_BINARY
set -uo pipefail
bin="$1"; src="$2"; gen="$3"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export HOME="$tmp/home" GIT_CONFIG_NOSYSTEM=1 LC_ALL=C GIT_TERMINAL_PROMPT=0
mkdir -p "$HOME"
git() { command git -c user.name=t -c user.email=t@example.com -c init.defaultBranch=main -c commit.gpgsign=false "$@"; }

# The example repository (platform defaults, registrations of repository packages) and 40
# generated projects, 7 documents a file.
r="$tmp/r"
cp -r "$src/repo-layout-example" "$r"
"$gen" "$r/generated" --projects 40 --docs-per-file 7 > /dev/null || bad "gen_repo"
( cd "$r" && git init -q && git add -A && git commit -qm base ) || bad "git setup"

# review NAME WAY: reviews HEAD~1..HEAD whole (a fresh state directory) and partial (a state
# directory warmed by one review of the same change), compares the two in every format, and
# checks the warm one was loaded WAY ("partial" or "whole").
n=0
review() {
  local name="$1" way="$2" fmt base head
  base="$(git -C "$r" rev-parse HEAD~1)"; head="$(git -C "$r" rev-parse HEAD)"
  n=$((n + 1))
  local warm="$tmp/warm-$n"
  "$bin" plan --git "$r" --base "$base" --head "$head" --state-dir "$warm" > /dev/null 2>&1
  for fmt in text markdown json; do
    local cold="$tmp/cold-$n-$fmt" rc_cold rc_warm
    "$bin" plan --git "$r" --base "$base" --head "$head" -o "$fmt" --state-dir "$cold" \
      --log-level debug > "$tmp/whole.out" 2> "$tmp/whole.err"; rc_cold=$?
    "$bin" plan --git "$r" --base "$base" --head "$head" -o "$fmt" --state-dir "$warm" \
      --log-level debug > "$tmp/partial.out" 2> "$tmp/partial.err"; rc_warm=$?
    grep -q "whole revisions (no facts kept from an earlier review)" "$tmp/whole.err" ||
      bad "$name: a fresh state directory was not loaded whole: $(grep -o "review of .*" "$tmp/whole.err")"
    if [[ $rc_cold -ne $rc_warm ]]; then
      bad "$name ($fmt): exit $rc_cold whole, $rc_warm partial"; cat "$tmp/partial.err"
    elif ! cmp -s "$tmp/whole.out" "$tmp/partial.out"; then
      bad "$name ($fmt): the partial review prints something else"
      diff "$tmp/whole.out" "$tmp/partial.out" | head -20
    else
      ok "$name ($fmt): the same output and exit code ($rc_cold)"
    fi
    local said; said="$(grep -o "review of .*" "$tmp/partial.err" | head -1)"
    case "$way" in
      partial) [[ $said == *"projects touched"* ]] || bad "$name: loaded '$said', expected a partial load" ;;
      whole) [[ $said == *"whole revisions"* ]] || bad "$name: loaded '$said', expected whole revisions" ;;
    esac
  done
  echo "   $name: $said"
}
commit() { git -C "$r" add -A && git -C "$r" commit -qm "$1"; }

# 1. One value in one generated file.
f="$(cd "$r" && ls generated/*.yaml | sed -n 3p)"
perl -0pi -e 's/maxParallelism: (\d+)/"maxParallelism: " . ($1 + 7)/e' "$r/$f"; commit "one value"
review "one value changed" partial
# 2. A new file: a new project and its override.
cat > "$r/generated/new.yaml" <<'YAML'
apiVersion: flytecd/v1
kind: Project
id: brand-new
name: brand-new
---
apiVersion: flytecd/v1
kind: Overrides
project: brand-new
domain: staging
spec:
  workflowExecutionConfig: {maxParallelism: 3}
YAML
commit "new file"; review "a file added" partial
# 3. A generated file removed (its projects' documents elsewhere stay).
git -C "$r" rm -q "$(cd "$r" && ls generated/*.yaml | sed -n 5p)"; commit "removed"
review "a file removed" partial
# 4. Documents moved from one file to another: nothing changes.
g="$(cd "$r" && ls generated/*.yaml | sed -n 7p)"
git -C "$r" mv "$g" "${g%.yaml}-moved.yaml"; commit "moved"
review "a file renamed" partial
# 5. A value of an example project next to its platform defaults (the example's own files).
sed -i 's/maxParallelism: 5$/maxParallelism: 6/' "$r/projects/flytesnacks/development.yaml"; commit "example"
review "an example project's value" partial
# 6. Platform defaults: every project resolves against them.
sed -i '0,/memory: 1Gi/s//memory: 2Gi/' "$r/platform/defaults.yaml"; commit "platform"
review "platform defaults changed" whole
# 7. An invalid head: a scope defined twice, the other definition in a file the change leaves
#    (the error is reported at the later file, the new one: an error in a file the change leaves
#    makes the review load both revisions whole).
python3 - "$r/$f" "$r/generated/zz-dup.yaml" <<'PY'
import sys
docs = open(sys.argv[1]).read().split("\n---\n")
open(sys.argv[2], "w").write(next(d for d in docs if "kind: Overrides" in d) + "\n")
PY
commit "duplicate scope"; review "a scope defined twice across files" partial
git -C "$r" reset -q --hard HEAD~1
# 8. A registration name declared in a second file.
cat > "$r/generated/reg.yaml" <<'YAML'
apiVersion: flytecd/v1
kind: WorkflowRegistration
metadata: {name: flytesnacks-core-development}
project: brand-new
domain: development
version: v9
package: oci://registry.example.com/x:v9
YAML
commit "duplicate registration"; review "a registration name declared twice" whole
git -C "$r" reset -q --hard HEAD~1
# 9. A repository package replaced, no document changed: its registrations are reviewed.
cp "$src/repo-layout-example/packages/valid-register.tgz" "$r/packages/flytesnacks-core.tgz"
commit "package"; review "a repository package replaced" partial

exit $fail
