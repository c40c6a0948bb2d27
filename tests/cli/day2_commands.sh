#!/usr/bin/env bash
# Day-2 commands on a running daemon (issue 26): `flytecd run` on a Git remote with a standalone
# emulator, self-heal off.
#  - `sync --wait` after a push returns the outcome of the pass it triggered (that revision, its
#    request number), with apply's exit code: 0 converged; 1 for a rejected revision; 2 while the
#    daemon is suspended (the pass only plans, as plan --live); 3 when no pass finishes in time;
#  - `get objects --state drifted` lists an out-of-band change with its values;
#  - `get overrides --live` shows FlyteAdmin's value beside Git's for one scope;
#  - `suspend --project ml-training` stops writes to it while flytesnacks still applies, shown in
#    status (suspendedProjects), the metrics and across a restart; `resume --project` applies it;
#  - `version` shows the client's, the daemon's and FlyteAdmin's versions, and says what it
#    cannot reach.
# Usage: day2_commands.sh FLYTECD_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
unset FLYTECD_SYNC_TOKEN

start_emulator
git_remote
push() { g commit -q -am "$1" && g push -q "$tmp/remote.git" main:main || bad "git push: $1"; }
hport="$(free_port)"
printf 'tok-%s\n' "$RANDOM$RANDOM" > "$tmp/token"
daemon_config 1h "policy: {selfHeal: false}"
cli=(--config "$tmp/flytecd.yaml")
status_json() { "$bin" status "${cli[@]}" -o json 2>/dev/null; }
sync_wait() { "$bin" sync "${cli[@]}" --wait --timeout 60s "$@" > "$tmp/sync.out" 2>&1; echo $?; }
# What FlyteAdmin holds at a scope, as get overrides --live reads it (the daemon's ledger, no lock).
live_json() { "$bin" get overrides --live -p "$1" -d development --repo "$tmp/work" --state-dir "$tmp/state" "${target[@]}" -o json 2>"$tmp/live.err"; }
live_value() {  # project, python expression over the workflowExecutionConfig attribute a
  live_json "$1" | jq_ "[a['live'] for a in d['attributes'] if a['type']=='WORKFLOW_EXECUTION_CONFIG'][0]$2"
}

start_daemon
wait_for 'd.get("lastSync",{}).get("outcome")=="success" and d["lastSync"]["mode"]=="execute"' \
  && ok "daemon converged on the example" || { bad "daemon did not converge"; tail -20 "$tmp/run.log"; }

# 1. sync --wait after a push: the pass of that request, at the new revision, apply's exit code.
sed -i 's/maxParallelism: 4$/maxParallelism: 7/' "$tmp/work/projects/ml-training/development.yaml"
push "ml-training development: maxParallelism 7"
head_rev="$(g rev-parse HEAD)"
rc=$(FLYTECD_SYNC_TOKEN="$(cat "$tmp/token")" sync_wait)
out="$(cat "$tmp/sync.out")"
[[ $rc -eq 0 && "$(tail -1 <<<"$out")" == converged ]] && grep -q "pass of $head_rev" <<<"$out" \
  && ok "sync --wait: exit 0, the pass of the pushed commit, last line 'converged'" || bad "sync --wait: exit $rc: $out"
req="$(sed -n 's/^sync request \([0-9]*\) accepted.*/\1/p' <<<"$out")"
st="$(status_json)"
[[ -n "$req" && "$(jq_ "d['lastSync']['request']>=$req and d['syncServed']>=$req and d['lastSync']['revision']=='$head_rev'" <<<"$st")" == True ]] \
  && ok "status: lastSync.request and syncServed reach the request ($req)" || bad "request $req not served: $(jq_ 'd["lastSync"]["request"], d["syncServed"]' <<<"$st")"
[[ "$(live_value ml-training "['maxParallelism']")" == 7 ]] && ok "FlyteAdmin holds the pushed value once sync --wait returns" || bad "maxParallelism not 7: $(live_json ml-training | head -c 400)"
out="$("$bin" sync --server "http://127.0.0.1:$hport" --wait 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && grep -q 'token is missing' <<<"$out" && ok "sync --wait without the token: exit 1" || bad "sync --wait without token: exit $rc: $out"

# 2. An out-of-band change (another flytecd, its own ledger): drift, left in place (self-heal off).
mkdir -p "$tmp/oob"; cp -r "$tmp/work/." "$tmp/oob/"; rm -rf "$tmp/oob/.git"
sed -i 's/projectQuotaCpu: "16"/projectQuotaCpu: "64"/' "$tmp/oob/projects/ml-training/development.yaml"
"$bin" apply --repo "$tmp/oob" --state-dir "$tmp/oob-state" "${target[@]}" > "$tmp/oob.log" 2>&1 || bad "out-of-band apply: $(tail -5 "$tmp/oob.log")"
rc=$(FLYTECD_SYNC_TOKEN="$(cat "$tmp/token")" sync_wait)
[[ $rc -eq 0 ]] && ok "sync --wait with drift left in place: exit 0 as apply (self-heal off)" || bad "sync --wait drift: exit $rc: $(cat "$tmp/sync.out")"
out="$("$bin" get objects "${cli[@]}" --state drifted 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && grep -q 'override  *ml-training  *development  *CLUSTER_RESOURCE  *drifted' <<<"$out" \
  && grep -q 'projectQuotaCpu: live "64", Git "16"' <<<"$out" && ! grep -q 'flytesnacks' <<<"$out" \
  && ok "get objects --state drifted lists the out-of-band change with its values" || bad "get objects --state drifted: exit $rc: $out"
"$bin" get objects "${cli[@]}" -o json > "$tmp/objects.json" 2>&1
[[ "$(jq_ "any(o['state']=='in-sync' and o['revision']=='$head_rev' and o['lastChange'] for o in d['objects'] if o['key']=='override/ml-training/development//WORKFLOW_EXECUTION_CONFIG')" < "$tmp/objects.json")" == True ]] \
  && ok "get objects -o json: the changed object's revision and last change" || bad "get objects json: $(head -c 600 "$tmp/objects.json")"
n_reg="$("$bin" get objects "${cli[@]}" --kind registration -p flytesnacks -o json | jq_ 'len(d["objects"])')"
[[ "$n_reg" -ge 1 ]] && ok "get objects --kind registration -p flytesnacks: $n_reg row(s)" || bad "no registration rows: $n_reg"

# 3. get overrides --live: FlyteAdmin's value beside Git's for one scope.
out="$("$bin" get overrides --live -p ml-training -d development --repo "$tmp/work" --state-dir "$tmp/state" "${target[@]}" -o text 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && grep -q '^CLUSTER_RESOURCE: differs (managed), Git projects/ml-training/development.yaml' <<<"$out" \
  && grep -q 'projectQuotaCpu: live "64", Git "16" (projects/ml-training/development.yaml:9)' <<<"$out" \
  && grep -q '^WORKFLOW_EXECUTION_CONFIG: in-sync' <<<"$out" \
  && ok "get overrides --live: live beside Git, per attribute, with the changed field" || bad "get overrides --live: exit $rc: $out"
out="$("$bin" get overrides -p ml-training -d development --repo "$tmp/work" -o text 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && ok "get overrides -o text without --live: exit 1" || bad "get overrides -o text: exit $rc"

# 4. suspend --project: ml-training is planned, not written; flytesnacks still applies.
out="$(FLYTECD_SYNC_TOKEN="$(cat "$tmp/token")" "$bin" suspend "${cli[@]}" --project ml-training --reason 'quota review' 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && grep -q 'project ml-training suspended since' <<<"$out" && ok "suspend --project ml-training" || bad "suspend --project: exit $rc: $out"
wait_for 'd["suspendedProjects"][0]["project"]=="ml-training" and d["suspendedProjects"][0]["reason"]=="quota review" and d["suspended"] is None' \
  && ok "status: suspendedProjects names it, the daemon is not suspended" || bad "status suspendedProjects: $(status_json | jq_ 'd.get("suspendedProjects")')"
grep -q '^flytecd_project_suspended{project="ml-training"} 1' <<<"$(curl -fsS "http://127.0.0.1:$hport/metrics")" \
  && grep -q '^flytecd_suspended 0' <<<"$(curl -fsS "http://127.0.0.1:$hport/metrics")" \
  && ok "metrics: flytecd_project_suspended{project=\"ml-training\"} 1, flytecd_suspended 0" || bad "project suspension metric missing"
grep -q '^suspended project: ml-training since .*: quota review' <<<"$("$bin" status "${cli[@]}" 2>&1)" && ok "status text names the suspended project" || bad "status text: $("$bin" status "${cli[@]}" 2>&1)"
sed -i 's/maxParallelism: 7$/maxParallelism: 8/' "$tmp/work/projects/ml-training/development.yaml"
sed -i 's/maxParallelism: 5$/maxParallelism: 9/' "$tmp/work/projects/flytesnacks/development.yaml"
push "ml-training 8, flytesnacks 9"
rc=$(FLYTECD_SYNC_TOKEN="$(cat "$tmp/token")" sync_wait)
last="$(tail -1 "$tmp/sync.out")"
[[ $rc -eq 0 && "$last" == "converged (suspended: project ml-training, 1 step(s) planned, not written)" ]] \
  && ok "sync --wait: converged, the suspended project's step planned, not written" || bad "sync --wait with a suspended project: exit $rc: $(cat "$tmp/sync.out")"
[[ "$(live_value flytesnacks "['maxParallelism']")" == 9 ]] && ok "flytesnacks applied (9) while ml-training is suspended" || bad "flytesnacks not applied"
[[ "$(live_value ml-training "['maxParallelism']")" == 7 ]] && ok "ml-training not written (still 7)" || bad "ml-training written while suspended: $(live_value ml-training "['maxParallelism']")"
st="$(status_json)"
[[ "$(jq_ "any(o['key']=='override/ml-training/development//WORKFLOW_EXECUTION_CONFIG' and o['state']=='pending' and 'suspended' in o.get('error','') for o in d['objects'])" <<<"$st")" == True ]] \
  && ok "status objects: ml-training's change pending, 'suspended'" || bad "status objects: $(jq_ '[o for o in d["objects"] if "ml-training" in o["key"]]' <<<"$st" | head -c 600)"
grep -q 'ml-training.*suspended: update planned, not written' <<<"$("$bin" get objects "${cli[@]}" --state pending 2>&1)" && ok "get objects --state pending shows the held step" || bad "get objects pending: $("$bin" get objects "${cli[@]}" 2>&1 | head -20)"
# Persisted: a restart keeps ml-training suspended.
stop_daemon
[[ -f "$tmp/state/suspended-projects.json" ]] && ok "project suspension persisted in the state directory" || bad "no suspended-projects.json"
start_daemon
wait_for 'd.get("lastSync",{}).get("outcome")=="success" and d["suspendedProjects"] and d["suspendedProjects"][0]["project"]=="ml-training"' \
  && ok "after a restart ml-training is still suspended" || { bad "restart lost the project suspension: $(status_json | head -c 400)"; tail -10 "$tmp/run.log"; }
[[ "$(live_value ml-training "['maxParallelism']")" == 7 ]] && ok "…and still not written after the restart" || bad "ml-training written after restart"
out="$(FLYTECD_SYNC_TOKEN="$(cat "$tmp/token")" "$bin" resume "${cli[@]}" --project ml-training 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && ok "resume --project ml-training" || bad "resume --project: exit $rc: $out"
rc=$(FLYTECD_SYNC_TOKEN="$(cat "$tmp/token")" sync_wait)
[[ $rc -eq 0 && "$(tail -1 "$tmp/sync.out")" == converged && "$(live_value ml-training "['maxParallelism']")" == 8 ]] \
  && ok "after resume --project the held change is applied (8)" || bad "resume --project: exit $rc: $(cat "$tmp/sync.out")"
[[ "$(status_json | jq_ 'd["suspendedProjects"]')" == "[]" && ! -e "$tmp/state/suspended-projects.json" ]] \
  && ! grep -q '^flytecd_project_suspended{' <<<"$(curl -fsS "http://127.0.0.1:$hport/metrics")" \
  && ok "resumed: no suspended project in status, file or metrics" || bad "resume left a project suspended"
out="$(FLYTECD_SYNC_TOKEN="$(cat "$tmp/token")" "$bin" suspend "${cli[@]}" --project 'no/such' 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && grep -q 'not a Flyte project id' <<<"$out" && ok "suspend --project with a bad id: exit 1, says why" || bad "bad project id: exit $rc: $out"

# 5. Exit 2 while suspended (the pass only plans), exit 1 for a rejected revision.
FLYTECD_SYNC_TOKEN="$(cat "$tmp/token")" "$bin" suspend "${cli[@]}" --reason hold > /dev/null || bad "suspend"
sed -i 's/maxParallelism: 9$/maxParallelism: 11/' "$tmp/work/projects/flytesnacks/development.yaml"
push "flytesnacks 11"
rc=$(FLYTECD_SYNC_TOKEN="$(cat "$tmp/token")" sync_wait)
[[ $rc -eq 2 && "$(tail -1 "$tmp/sync.out")" == "changes pending" ]] && grep -q 'SUSPENDED: planned only' "$tmp/sync.out" \
  && ok "sync --wait while suspended: exit 2, 'changes pending' (plan's verdict)" || bad "sync --wait suspended: exit $rc: $(cat "$tmp/sync.out")"
FLYTECD_SYNC_TOKEN="$(cat "$tmp/token")" "$bin" resume "${cli[@]}" > /dev/null || bad "resume"
printf 'apiVersion: flytecd/v1\nkind: Overrides\nproject: flytesnacks\nspec: {noSuchAttribute: 1}\n' > "$tmp/work/projects/flytesnacks/broken.yaml"
g add projects/flytesnacks/broken.yaml; push "an invalid document"
rc=$(FLYTECD_SYNC_TOKEN="$(cat "$tmp/token")" sync_wait)
[[ $rc -eq 1 ]] && grep -q '^not converged: revision .* is invalid .* rejected whole.*; first error: projects/flytesnacks/broken.yaml:4:' <<<"$(tail -1 "$tmp/sync.out")" \
  && ok "sync --wait on an invalid revision: exit 1 naming the file" || bad "sync --wait invalid: exit $rc: $(cat "$tmp/sync.out")"
g rm -q projects/flytesnacks/broken.yaml; push "revert the invalid document"

# Timeout: a server that accepts the request and never serves it.
fport="$(free_port)"
python3 - "$fport" > /dev/null 2>&1 <<'PY' &
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def reply(self, body):
        self.send_response(202 if self.command == "POST" else 200)
        self.send_header("Content-Type", "application/json"); self.end_headers(); self.wfile.write(body)
    def do_POST(self): self.reply(b'{"message":"sync triggered","request":5}')
    def do_GET(self): self.reply(b'{"syncServed":4,"drift":[]}')
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
pids+=($!)
for _ in $(seq 1 50); do (echo > /dev/tcp/127.0.0.1/$fport) 2>/dev/null && break; sleep 0.1; done
out="$("$bin" sync --server "http://127.0.0.1:$fport" --wait --timeout 2s 2>&1)"; rc=$?
[[ $rc -eq 3 ]] && grep -q 'timed out after 2s waiting for the pass of sync request 5' <<<"$out" \
  && ok "sync --wait --timeout 2s: exit 3 with a clear message" || bad "sync --wait timeout: exit $rc: $out"

# 6. version: client, daemon and FlyteAdmin; what cannot be reached is said, exit 0.
out="$("$bin" version "${cli[@]}" "${target[@]}" 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && grep -q '^client: *flytecd [0-9]' <<<"$out" && grep -q "^daemon: *flytecd [0-9].* at http://127.0.0.1:$hport; target flyteadmin" <<<"$out" \
  && grep -q "^flyteadmin: .*(build flytecd-emulator, built 20[0-9-]*T.*) at dns:///127.0.0.1:$eport" <<<"$out" \
  && ok "version: client, daemon and FlyteAdmin (GetVersion)" || bad "version: exit $rc: $out"
stop_daemon
out="$("$bin" version "${cli[@]}" --admin-endpoint "dns:///127.0.0.1:$(free_port)" --insecure 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && grep -q '^daemon: *unknown at .*cannot reach flytecd' <<<"$out" && grep -q '^flyteadmin: unknown at ' <<<"$out" \
  && ok "version with nothing reachable: exit 0, each part says so" || bad "version unreachable: exit $rc: $out"
exit $fail
