#!/usr/bin/env bash
# Issue 11: every command takes its documents from the same configuration.
#  * `plan --live --config flytecd.yaml` ignored git.url and planned the current directory
#    (from an empty directory it planned to archive 4 projects and delete 49 overrides);
#  * `plan --git R --base B --head H --live` compared live state with the current directory,
#    not with H.
# Usage: source_config.sh FLYTECD_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
git_remote
mkdir -p "$tmp/cwd"
g checkout -q -b pr && g rm -q projects/data-eng/staging.yaml && g commit -q -m "drop data-eng staging overrides" &&
  g push -q "$tmp/remote.git" pr:pr || bad "git setup"
cat > "$tmp/flytecd.yaml" <<YAML
stateDir: $tmp/state
git: {url: "file://$tmp/remote.git", ref: main}
YAML
cd "$tmp/cwd"  # an empty current directory: nothing may be read from here
out="$("$bin" plan --live --config "$tmp/flytecd.yaml" 2>&1)"; rc=$?
[[ $rc -eq 2 ]] && grep -q 'create project data-eng' <<<"$out" && ok "plan --live --config plans the Git head (exit 2, creates)" ||
  bad "plan --live --config: exit $rc: $(head -20 <<<"$out")"
grep -q 'delete project' <<<"$out" && bad "plan --live --config planned archives (the current directory?)"
out="$("$bin" apply --config "$tmp/flytecd.yaml" 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && ok "apply --config applies the Git head" || bad "apply --config: exit $rc: $(tail -20 <<<"$out")"
head_id="$("${git_env[@]}" git -C "$tmp/remote.git" rev-parse main)"
"$bin" plan --live --config "$tmp/flytecd.yaml" > "$tmp/p.log" 2>&1; rc=$?
[[ $rc -eq 0 ]] && ok "plan --live --config after apply: no changes" || { bad "plan --live after apply: exit $rc"; head -30 "$tmp/p.log"; }
out="$("$bin" plan --git "$tmp/remote.git" --base main --head pr --live --config "$tmp/flytecd.yaml" 2>&1)"; rc=$?
[[ $rc -eq 2 ]] && ok "plan --git --live exits 2" || bad "plan --git --live: exit $rc: $(tail -20 <<<"$out")"
# The live part (its summary starts with "projects:") deletes the overrides the head dropped.
grep -Eq '^projects: .*overrides: \+0 ~0 -[1-9]' <<<"$out" && ok "plan --git --live plans --head against live" ||
  bad "plan --git --live did not plan the head's deletes: $(tail -30 <<<"$out")"
grep -q 'delete project' <<<"$out" && bad "plan --git --live planned from the current directory"
exit $fail
