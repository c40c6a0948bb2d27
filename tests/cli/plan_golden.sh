#!/usr/bin/env bash
# `flytecd plan --git` on a crafted two-revision history, compared with committed goldens
# (markdown and json). Usage: plan_golden.sh FLYTECD_BINARY SOURCE_DIR  (UPDATE_GOLDEN=1 rewrites)
set -euo pipefail
bin="$1"; src="$2"; golden="$src/tests/golden"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
git() { command git -c user.name=t -c user.email=t@example.com -c init.defaultBranch=main -c commit.gpgsign=false "$@"; }
# Fixed dates, so the commit ids the output names are the same on every run.
export GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z"
git init -q "$work/repo"
cp -r "$src/repo-layout-example" "$work/repo/flyte"
git -C "$work/repo" add -A && git -C "$work/repo" commit -qm base && git -C "$work/repo" branch -q base
git -C "$work/repo" checkout -q -b change
f="$work/repo/flyte/projects/flytesnacks/development.yaml"
# Change a project-domain value that workflow scopes inherit, add a project, drop a registration.
sed -i 's/maxParallelism: 5$/maxParallelism: 9/' "$f"
cat >> "$work/repo/flyte/projects/flytesnacks/project.yaml" <<'YAML'
---
apiVersion: flytecd/v1
kind: Project
id: new-team
name: New team
YAML
sed -i '1,/^---$/d' "$work/repo/flyte/registrations/ml-training.yaml"
git -C "$work/repo" add -A && git -C "$work/repo" commit -qm change
fail=0
for fmt in markdown json; do
  set +e
  out="$("$bin" plan --git "$work/repo" --path flyte --base base --head change -o "$fmt" --state-dir "$work/state" 2>"$work/stderr")"
  rc=$?
  set -e
  [[ $rc -eq 2 ]] || { echo "FAIL plan -o $fmt exited $rc (want 2)"; echo "$out"; cat "$work/stderr"; fail=1; }
  name="plan-review.$([[ $fmt == json ]] && echo json || echo md)"
  if [[ "${UPDATE_GOLDEN:-}" == 1 ]]; then printf '%s\n' "$out" > "$golden/$name"; echo "updated $name"; continue; fi
  if diff -u "$golden/$name" <(printf '%s\n' "$out"); then echo "ok $name"; else echo "FAIL $name differs"; fail=1; fi
done
# Identical revisions: exit 0.
"$bin" plan --git "$work/repo" --path flyte --base change --head change --state-dir "$work/state" >/dev/null || { echo "FAIL same revision did not exit 0"; fail=1; }
exit $fail
