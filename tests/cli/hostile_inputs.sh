#!/usr/bin/env bash
# Issue 10: hostile and unlucky inputs, run the way a user runs flytecd.
#  1. a 30,000-character version / 60,000-character oci:// host / https:// URL crashed validate,
#     plan --git, get overrides and get registrations with SIGSEGV (std::regex recursion) and
#     crash-looped `flytecd run`: now each is exit 1 with file:line, and the daemon stays up;
#  3. a document file replaced by a symlink was skipped ("valid: 0 files") and apply archived
#     the project it declared: now it is read, and a link leaving the repository is an error.
# Usage: hostile_inputs.sh FLYTECD_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
say() { echo "$*"; }
expect_rc() {  # name, want, command...
  local name="$1" want="$2"; shift 2
  local out rc
  out="$("$@" 2>&1)"; rc=$?
  if [[ $rc -ne $want ]]; then bad "$name: exit $rc, expected $want"; printf '%s\n' "$out" | head -c 2000; echo
  else say "ok $name (exit $rc)"; fi
  LAST="$out"
}
long() { head -c "$1" /dev/zero | tr '\0' "$2"; }

repo="$tmp/repo"
cp -r "$src/repo-layout-example" "$repo"
cat > "$repo/registrations/hostile.yaml" <<YAML
apiVersion: flytecd/v1
kind: WorkflowRegistration
metadata: {name: hostile}
project: flytesnacks
domain: development
version: "$(long 30000 v)"
package: packages/flytesnacks-core.tgz
---
apiVersion: flyte.backend/v1
kind: FlyteRegistration
metadata: {name: hostile-op}
spec:
  workflowProject: flytesnacks
  workflowDomain: development
  workflowVersion: "$(long 30000 w)!"
  workflowPackageUri: team/wf
---
apiVersion: flytecd/v1
kind: WorkflowRegistration
metadata: {name: hostile-host}
project: flytesnacks
domain: development
version: v1
package: oci://$(long 60000 h)/flyte/core:v1
---
apiVersion: flytecd/v1
kind: WorkflowRegistration
metadata: {name: hostile-url}
project: flytesnacks
domain: development
version: v1
package: https://$(long 60000 u)/p.tgz
YAML

expect_rc "validate with 30k version and 60k host/URL" 1 "$bin" validate "$repo"
grep -q 'registrations/hostile.yaml:6:' <<<"$LAST" || bad "validate does not name hostile.yaml:6"
[[ ${#LAST} -lt 20000 ]] || bad "validate echoed the long values (${#LAST} bytes of output)"
expect_rc "get overrides on the same repository" 1 "$bin" get overrides -p flytesnacks --repo "$repo"
expect_rc "get registrations on the same repository" 1 "$bin" get registrations --repo "$repo" --state-dir "$tmp/state-get"

# plan --git: base is the example, head adds the hostile file.
git_env=(env -i PATH="$PATH" HOME="$tmp" GIT_CONFIG_NOSYSTEM=1 LC_ALL=C)
gitrepo="$tmp/git"
mkdir -p "$gitrepo"
cp -r "$src/repo-layout-example/." "$gitrepo/"
( cd "$gitrepo" && "${git_env[@]}" git init -q -b main && "${git_env[@]}" git add -A &&
  "${git_env[@]}" git -c user.name=t -c user.email=t@e commit -q -m base &&
  cp "$repo/registrations/hostile.yaml" registrations/ && "${git_env[@]}" git add -A &&
  "${git_env[@]}" git -c user.name=t -c user.email=t@e commit -q -m hostile ) || bad "git setup"
expect_rc "plan --git on a head with the hostile file" 1 "${git_env[@]}" "$bin" plan --git "$gitrepo" --base main~1 --head main

# The daemon on the hostile repository: the revision is rejected, the process stays up.
hport="$(free_port)"
FLYTECD_HTTP_LISTEN="127.0.0.1:$hport" "$bin" run --repo "$repo" --state-dir "$tmp/state-run" \
  --log-level warn > "$tmp/run.log" 2>&1 &
daemon=$!; pids+=($daemon)
status=""
for _ in $(seq 1 100); do
  status="$(curl -fsS "http://127.0.0.1:$hport/api/v1/status" 2>/dev/null)" && [[ "$status" == *hostile* ]] && break
  sleep 0.2
done
if ! kill -0 "$daemon" 2>/dev/null; then bad "flytecd run died on the hostile revision"; cat "$tmp/run.log" | head -c 3000
else
  [[ "$status" == *hostile.yaml* ]] && say "ok run: status reports the rejected revision" || { bad "run: status does not name hostile.yaml"; echo "$status" | head -c 2000; }
  code="$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$hport/healthz")"
  [[ "$code" == 200 ]] && say "ok run: /healthz 200" || bad "run: /healthz $code"
fi
kill "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null

# Symlinks: a project file replaced by a link to a shared copy is read and applied.
links="$tmp/links"
cp -r "$src/repo-layout-example" "$links"
mkdir -p "$links/.shared"
mv "$links/projects/data-eng/project.yaml" "$links/.shared/data-eng.yaml"
ln -s ../../.shared/data-eng.yaml "$links/projects/data-eng/project.yaml"
expect_rc "validate with a symlinked project file" 0 "$bin" validate "$links"
want="$("$bin" validate "$src/repo-layout-example" | tail -1 | grep -o '[0-9]* documents')"
grep -q "$want" <<<"$LAST" && say "ok symlinked file counted ($want)" || bad "symlink: expected $want, got: $LAST"
expect_rc "apply the example (the project file still a file)" 0 "$bin" apply --repo "$src/repo-layout-example" --state-dir "$tmp/state-links"
expect_rc "apply with the project file now a symlink" 0 "$bin" apply --repo "$links" --state-dir "$tmp/state-links"
grep -q 'delete project' <<<"$LAST" && bad "apply archived a project declared through a symlink"
ln -s ../../../outside.yaml "$links/projects/legacy-reports/escape.yaml"
expect_rc "validate with a symlink leaving the repository" 1 "$bin" validate "$links"
grep -q "symlink 'projects/legacy-reports/escape.yaml'" <<<"$LAST" && say "ok escaping link named" || bad "escaping link not named: $LAST"
expect_rc "apply with a symlink leaving the repository refuses before writing" 1 "$bin" apply --repo "$links" --state-dir "$tmp/state-links"
grep -q 'archive\|delete' <<<"$LAST" && bad "apply wrote with an invalid revision"
exit $fail
