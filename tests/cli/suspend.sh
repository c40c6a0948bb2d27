#!/usr/bin/env bash
# Suspend and resume a running daemon with the CLI (issue 13): `flytecd run` on a Git remote,
# `flytecd suspend --reason maintenance`; a commit is then polled and planned but not executed
# and an out-of-band change are polled, planned and reported but not executed (status -o json
# shows the plan and the drift with its values; FlyteAdmin unchanged: `plan --live` still shows both);
# a restart stays suspended; `flytecd resume` reconciles at once and applies it.
# Usage: suspend.sh FLYTECD_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
unset FLYTECD_SYNC_TOKEN

start_emulator

git_remote
hport="$(free_port)"
printf 'tok-%s\n' "$RANDOM$RANDOM" > "$tmp/token"
daemon_config 1h
cli=(--config "$tmp/flytecd.yaml")
status_json() { "$bin" status "${cli[@]}" -o json 2>/dev/null; }

# Unreachable: one line naming the URL, exit 1.
out="$("$bin" status --server "http://127.0.0.1:$(free_port)" 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && grep -q 'is `flytecd run` listening there' <<<"$out" && ok "status of no daemon: exit 1 with a hint" || bad "status unreachable: exit $rc: $out"

start_daemon
wait_for 'd.get("lastSync",{}).get("outcome")=="success" and d["lastSync"]["mode"]=="execute"' \
  && ok "daemon converged on the example" || { bad "daemon did not converge"; tail -20 "$tmp/run.log"; }
"$bin" status "${cli[@]}" > "$tmp/status.txt" 2>&1; rc=$?
[[ $rc -eq 0 ]] && grep -q '^suspended:  no' "$tmp/status.txt" && ok "status: exit 0, not suspended" || bad "status: exit $rc: $(cat "$tmp/status.txt")"

# The token comes from a file or the environment; without it the daemon refuses.
out="$("$bin" suspend --server "http://127.0.0.1:$hport" --reason x 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && grep -q 'token is missing' <<<"$out" && ok "suspend without a token: exit 1, says so" || bad "suspend without token: exit $rc: $out"
out="$(FLYTECD_SYNC_TOKEN=wrong "$bin" suspend --server "http://127.0.0.1:$hport" 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && grep -q 'token is wrong' <<<"$out" && ! grep -q wrong.*wrong <<<"$out" && ok "suspend with a wrong token: exit 1" || bad "suspend with wrong token: exit $rc: $out"
# $USER unset (a systemd unit, a container): the suspension names the OS account, not "unknown".
out="$(env -u USER "$bin" suspend --server "http://127.0.0.1:$hport" --token-file "$tmp/token" --reason maintenance 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && ok "flytecd suspend --reason maintenance" || bad "suspend: exit $rc: $out"
wait_for 'd["suspended"]["reason"]=="maintenance"' && ok "status: suspended with the reason" || bad "status not suspended: $(status_json | head -c 600)"
me="$(id -un)"
wait_for "d['suspended']['by'].startswith('$me@')" && ok "without \$USER the suspension is by the OS account ($me)" || bad "suspended by: $(status_json | jq_ 'd["suspended"]["by"]')"
grep -q '^flytecd_suspended 1' <<<"$(curl -fsS "http://127.0.0.1:$hport/metrics")" && ok "flytecd_suspended 1" || bad "metric flytecd_suspended not 1"

# A commit while suspended: polled, planned, not executed.
sed -i 's/maxParallelism: 4$/maxParallelism: 7/' "$tmp/work/projects/ml-training/development.yaml"
g commit -q -am "ml-training development: maxParallelism 7" && g push -q "$tmp/remote.git" main:main || bad "git commit"
head_rev="$(g rev-parse HEAD)"
FLYTECD_SYNC_TOKEN="$(cat "$tmp/token")" "$bin" sync "${cli[@]}" > /dev/null || bad "flytecd sync"
wait_for "d.get('revision')=='$head_rev' and d['lastSync']['revision']=='$head_rev'" \
  && ok "suspended daemon polled the new commit" || bad "new commit not seen: $(status_json | head -c 600)"
st="$(status_json)"
[[ "$(jq_ 'd["lastSync"]["mode"]' <<<"$st")" == plan ]] && ok "lastSync.mode is plan" || bad "lastSync mode: $(jq_ 'd["lastSync"]' <<<"$st" | head -c 400)"
[[ "$(jq_ 'len(d["lastSync"]["plan"]["steps"])>0 and d["lastSync"]["outcome"]=="success"' <<<"$st")" == True ]] \
  && ok "status shows the planned step" || bad "no planned steps: $(jq_ 'd["lastSync"]' <<<"$st" | head -c 600)"
grep -q 'maxParallelism' <<<"$st" && ok "the plan names the changed field" || bad "plan has no maxParallelism"
"$bin" status "${cli[@]}" > "$tmp/status.txt" 2>&1
[[ -n "${SUSPEND_TEST_VERBOSE:-}" ]] && cat "$tmp/status.txt"
grep -q 'SUSPENDED since .*: maintenance' "$tmp/status.txt" && grep -q 'planned only' "$tmp/status.txt" \
  && ok "status text says SUSPENDED and planned only" || bad "status text: $(cat "$tmp/status.txt")"
grep -q 'SUSPENDED' "$tmp/run.log" && ok "the log says SUSPENDED" || bad "no SUSPENDED in the log"

# An out-of-band change while suspended (another flytecd, its own ledger, writes FlyteAdmin):
# observed and reported with its values, not reverted.
mkdir -p "$tmp/oob"; cp -r "$example/." "$tmp/oob/"
sed -i 's/projectQuotaCpu: "16"/projectQuotaCpu: "64"/' "$tmp/oob/projects/ml-training/development.yaml"
"$bin" apply --repo "$tmp/oob" --state-dir "$tmp/oob-state" "${target[@]}" > "$tmp/oob.log" 2>&1 || bad "out-of-band apply: $(tail -5 "$tmp/oob.log")"
FLYTECD_SYNC_TOKEN="$(cat "$tmp/token")" "$bin" sync "${cli[@]}" > /dev/null || bad "flytecd sync (drift)"
wait_for "any(c.get('path','').endswith('projectQuotaCpu') and c.get('live')=='64' and c.get('git')=='16' for x in d['drift'] for c in x.get('changes',[]))" \
  && ok "suspended: out-of-band change reported as drift with its values (64 -> 16)" || bad "drift not reported: $(status_json | jq_ 'd["drift"]' | head -c 600)"
[[ "$(status_json | jq_ 'all(not x["reverted"] and x["revertOnResume"] for x in d["drift"]) and d["lastSync"]["mode"]=="plan"')" == True ]] \
  && ok "suspended: drift left in place" || bad "drift reverted while suspended"
"$bin" status "${cli[@]}" > "$tmp/status.txt" 2>&1
grep -q 'projectQuotaCpu: live "64", Git "16"' "$tmp/status.txt" && ok "status text shows the drift values" || bad "status text drift: $(cat "$tmp/status.txt")"

# FlyteAdmin unchanged; a restart stays suspended.
stop_daemon
"$bin" plan --live "${cli[@]}" "${target[@]}" > "$tmp/plan.log" 2>&1; rc=$?
[[ $rc -eq 2 ]] && grep -q 'maxParallelism' "$tmp/plan.log" && grep -q 'projectQuotaCpu' "$tmp/plan.log" && ok "plan --live still shows the change and the drift (nothing written)" || { bad "plan --live while suspended: exit $rc"; head -30 "$tmp/plan.log"; }
[[ -f "$tmp/state/suspended.json" ]] && ok "suspension persisted in the state directory" || bad "no suspended.json"
start_daemon
wait_for 'd.get("suspended",{}) and d["suspended"]["reason"]=="maintenance" and d.get("lastSync",{}).get("mode")=="plan"' \
  && ok "after a restart the daemon is still suspended (plan only)" || { bad "restart lost the suspension: $(status_json | head -c 600)"; tail -20 "$tmp/run.log"; }

# Resume: reconciles at once and applies the commit.
out="$(FLYTECD_SYNC_TOKEN="$(cat "$tmp/token")" "$bin" resume "${cli[@]}" 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && ok "flytecd resume" || bad "resume: exit $rc: $out"
wait_for "d['suspended'] is None and d['lastSync']['mode']=='execute' and d['lastSync']['outcome']=='success' and d['lastSync']['revision']=='$head_rev'" \
  && ok "resume applied the commit (and reverted the drift) at once" || { bad "not applied after resume: $(status_json | head -c 800)"; tail -20 "$tmp/run.log"; }
grep -q '^flytecd_suspended 0' <<<"$(curl -fsS "http://127.0.0.1:$hport/metrics")" && ok "flytecd_suspended 0" || bad "metric flytecd_suspended not 0"
[[ ! -e "$tmp/state/suspended.json" ]] && ok "resume removed the suspension file" || bad "suspended.json left"
stop_daemon
"$bin" plan --live "${cli[@]}" "${target[@]}" > "$tmp/plan2.log" 2>&1; rc=$?
[[ $rc -eq 0 ]] && ok "FlyteAdmin equals the commit after resume (plan --live exit 0)" || { bad "plan --live after resume: exit $rc"; head -30 "$tmp/plan2.log"; }
[[ -n "${SUSPEND_TEST_VERBOSE:-}" ]] && grep -i 'suspend\|resume' "$tmp/run.log"
exit $fail
