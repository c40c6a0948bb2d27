#!/usr/bin/env bash
# Issue 25 acceptance, the binary as a user runs it: Settings documents applied into Flyte 2's
# settings service (the embedded emulator with `flyte2: {}`, and a standalone `flytecd emulator
# --flyte2` at flyte2.endpoint); a second apply writes nothing; an out-of-band change is drift with
# both values in plan --live (exit 2, text and markdown), reverted by apply with self-heal; an
# invalid Settings document is refused with file:line and nothing is written.
# Usage: flyte2.sh FLYTECD_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

mkdir -p "$tmp/repo"
cat > "$tmp/repo/settings.yaml" <<'YAML'
apiVersion: flytecd/v1
kind: Settings
domain: development
project: flytesnacks
spec:
  run:
    defaultQueue: {state: SETTING_STATE_VALUE, stringValue: gpu}
  taskResource:
    max:
      memory: {state: SETTING_STATE_VALUE, quantityValue: 8Gi}
---
apiVersion: flytecd/v1
kind: Settings
domain: development
spec:
  security:
    serviceAccount: {state: SETTING_STATE_VALUE, stringValue: runner}
YAML

# The embedded default.
printf 'repo: %s\nstateDir: %s\nflyte2: {}\n' "$tmp/repo" "$tmp/embedded" > "$tmp/embedded.yaml"
out="$("$bin" apply --config "$tmp/embedded.yaml" --log-level warn 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && grep -q 'create settings flyte/development/flytesnacks' <<<"$out" && grep -q 'settings: +2 ~0 -0' <<<"$out" \
  && ok "embedded Flyte 2 emulator: two settings records created" || bad "embedded apply (rc $rc): $out"
grep -q 'flyte2 EMULATOR (embedded' <<<"$out" && ok "the target line names the embedded Flyte 2 emulator" || bad "target line: $out"
[[ -f "$tmp/embedded/flyte2-emulator.db" ]] && ok "its database is in the state directory" || bad "no flyte2-emulator.db"
out="$("$bin" apply --config "$tmp/embedded.yaml" --log-level warn 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && grep -q 'in sync 2' <<<"$out" && grep -q 'applied 0 steps' <<<"$out" \
  && ok "a second apply writes nothing (in sync 2)" || bad "second apply (rc $rc): $out"

# A standalone emulator at flyte2.endpoint.
fport="$(free_port)"
"$bin" emulator --flyte2 --listen "127.0.0.1:$fport" --db "$tmp/flyte2.db" > "$tmp/emulator.log" 2>&1 &
pids+=($!)
wait_port "$fport" || bad "the Flyte 2 emulator does not listen"
cfg() { printf 'repo: %s\nstateDir: %s\nflyte2: {endpoint: "dns:///127.0.0.1:%s", insecure: true}\npolicy: {selfHeal: %s}\n' "$1" "$2" "$fport" "$3" > "$4"; }
cfg "$tmp/repo" "$tmp/state" true "$tmp/flytecd.yaml"
out="$("$bin" apply --config "$tmp/flytecd.yaml" --log-level warn 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && grep -q 'target: flyte2 dns:///127.0.0.1' <<<"$out" && grep -q 'settings: +2' <<<"$out" \
  && ok "flyte2.endpoint: applied over gRPC" || bad "apply at flyte2.endpoint (rc $rc): $out"

# Out of band: another flytecd with its own state directory writes the queue "cpu".
cp -r "$tmp/repo" "$tmp/oob"
sed -i 's/stringValue: gpu/stringValue: cpu/' "$tmp/oob/settings.yaml"
cfg "$tmp/oob" "$tmp/other" true "$tmp/oob.yaml"
"$bin" apply --config "$tmp/oob.yaml" --log-level warn > "$tmp/oob.log" 2>&1 || bad "out-of-band apply: $(cat "$tmp/oob.log")"

cfg "$tmp/repo" "$tmp/state" false "$tmp/report.yaml"
out="$("$bin" plan --live --config "$tmp/report.yaml" --log-level warn 2>&1)"; rc=$?
line="$(grep 'defaultQueue.stringValue' <<<"$out")"
[[ $rc -eq 2 ]] && grep -q 'live "cpu", Git "gpu"' <<<"$line" && grep -q 'settings.yaml:7' <<<"$line" \
  && ok "plan --live: exit 2, drift with live \"cpu\", Git \"gpu\" at settings.yaml:7" || bad "plan --live (rc $rc): $out"
md="$("$bin" plan --live --config "$tmp/report.yaml" -o markdown --log-level warn 2>&1)"
grep -q 'defaultQueue.stringValue' <<<"$md" && grep -q 'cpu' <<<"$md" && grep -q 'gpu' <<<"$md" \
  && ok "plan --live -o markdown shows the field with both values" || bad "markdown: $md"
out="$("$bin" apply --config "$tmp/report.yaml" --log-level warn 2>&1)"; rc=$?
grep -qi 'drift' <<<"$out" && ok "apply with self-heal off reports the drift (rc $rc)" || bad "self-heal off apply (rc $rc): $out"
out="$("$bin" apply --config "$tmp/flytecd.yaml" --log-level warn 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && grep -q 'update settings flyte/development/flytesnacks' <<<"$out" \
  && ok "apply with self-heal reverts it" || bad "self-heal apply (rc $rc): $out"
out="$("$bin" plan --live --config "$tmp/flytecd.yaml" --log-level warn 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && grep -q 'in sync 2' <<<"$out" && ok "then in sync" || bad "after heal (rc $rc): $out"

# An invalid document: refused whole, with file:line, nothing written.
cp -r "$tmp/repo" "$tmp/bad"
sed -i 's/quantityValue: 8Gi/quantityValue: lots/' "$tmp/bad/settings.yaml"
cfg "$tmp/bad" "$tmp/state" true "$tmp/bad.yaml"
out="$("$bin" apply --config "$tmp/bad.yaml" --log-level warn 2>&1)"; rc=$?
[[ $rc -ne 0 ]] && grep -q 'settings.yaml:10' <<<"$out" && grep -q "'lots' is not a non-negative Kubernetes quantity" <<<"$out" \
  && ok "a bad quantity is refused at settings.yaml:10 (rc $rc)" || bad "bad document (rc $rc): $out"
out="$("$bin" plan --live --config "$tmp/flytecd.yaml" --log-level warn 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && ok "nothing was written by the refused revision" || bad "after refusal (rc $rc): $out"
# Projects through Flyte 2's ProjectService, beside the settings.
mkdir -p "$tmp/p2"
cp "$tmp/repo/settings.yaml" "$tmp/p2/"
cat > "$tmp/p2/project.yaml" <<'YAML'
apiVersion: flytecd/v1
kind: Project
id: ml
name: Machine learning
description: models
labels: {team: ml}
YAML
cfg "$tmp/p2" "$tmp/p2state" true "$tmp/p2.yaml"
out="$("$bin" apply --config "$tmp/p2.yaml" --log-level warn 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && grep -q 'create project ml' <<<"$out" \
  && ok "a Project document is created through ProjectService" || bad "project apply (rc $rc): $out"
out="$("$bin" apply --config "$tmp/p2.yaml" --log-level warn 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && grep -q 'applied 0 steps' <<<"$out" && grep -q 'in sync 3' <<<"$out" \
  && ok "a second apply writes nothing (the project and two records in sync)" || bad "second project apply (rc $rc): $out"
sed -i 's/description: models/description: models and features/' "$tmp/p2/project.yaml"
out="$("$bin" apply --config "$tmp/p2.yaml" --log-level warn 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && grep -q 'update project ml' <<<"$out" \
  && ok "a changed description is an UpdateProject" || bad "project update (rc $rc): $out"

# get settings: from Git, each leaf with the level that set it; --live from the records.
out="$("$bin" get settings -d development -p flytesnacks --repo "$tmp/repo" 2>&1)"; rc=$?
line="$(grep '^run.defaultQueue' <<<"$out")"; sa="$(grep '^security.serviceAccount' <<<"$out")"
[[ $rc -eq 0 ]] && grep -q '"gpu"  (project, settings.yaml:7)' <<<"$line" && grep -q '"runner"  (domain, settings.yaml:17)' <<<"$sa" \
  && ok "get settings: the project's queue and the domain's service account, each with its level" || bad "get settings (rc $rc): $out"
json="$("$bin" get settings -d development -p flytesnacks --repo "$tmp/repo" -o json 2>&1)"
python3 - "$json" <<'PY' && ok "get settings -o json: leaves with state, value and level" || bad "get settings json: $json"
import json, sys
d = json.loads(sys.argv[1])
leaves = {l["path"]: l for l in d["settings"]}
assert leaves["run.defaultQueue"]["value"] == "gpu" and leaves["run.defaultQueue"]["level"] == "project"
assert leaves["taskResource.max.memory"]["value"] == "8Gi"
assert leaves["storage.rawDataPath"]["state"] == "inherit" and leaves["storage.rawDataPath"]["level"] is None
PY
out="$("$bin" get settings -d qa --repo "$tmp/repo" 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && grep -q "domain 'qa' is not one of the configured domains" <<<"$out" \
  && ok "get settings: a domain not configured is refused" || bad "unknown domain (rc $rc): $out"
out="$("$bin" get settings -d qa --domains development,qa --repo "$tmp/repo" 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && grep -q '^run.defaultQueue *inherit' <<<"$out" \
  && ok "get settings --domains: another domain is accepted" || bad "--domains (rc $rc): $out"
out="$("$bin" get settings -p flytesnacks --repo "$tmp/repo" 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && grep -q 'needs --domain' <<<"$out" && ok "get settings: a project without a domain is refused" || bad "project without domain (rc $rc): $out"
out="$("$bin" get settings --live -d development -p flytesnacks --config "$tmp/report.yaml" --log-level warn 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && grep -q '^run.defaultQueue *"gpu"  (project, version' <<<"$out" \
  && ok "get settings --live: the record's value and version" || bad "get settings --live (rc $rc): $out"
"$bin" apply --config "$tmp/oob.yaml" --log-level warn > "$tmp/oob.log" 2>&1 || bad "out-of-band apply: $(cat "$tmp/oob.log")"
out="$("$bin" get settings --live -d development -p flytesnacks --config "$tmp/report.yaml" --log-level warn 2>&1)"; rc=$?
grep -q '^run.defaultQueue *"cpu".*≠ Git: "gpu"' <<<"$out" \
  && ok "get settings --live: an out-of-band value beside Git's" || bad "get settings --live drift (rc $rc): $out"
out="$("$bin" get settings --live -d development --repo "$tmp/repo" --state-dir "$tmp/fa" --log-level warn 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && grep -q 'holds no Flyte 2 settings' <<<"$out" \
  && ok "get settings --live against FlyteAdmin says it has no settings" || bad "get settings --live on FlyteAdmin (rc $rc): $out"

# import: the Flyte 2 target's projects and settings records (the out-of-band "cpu" is what it holds)
# as a repository, checked by a plan.
out="$("$bin" import --config "$tmp/p2.yaml" --out "$tmp/imported" --log-level warn 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && grep -q '2 settings records' <<<"$out" && grep -q 'name: Machine learning' "$tmp/imported/projects/ml/project.yaml" \
  && grep -q "stringValue: cpu" "$tmp/imported/projects/flytesnacks/settings.yaml" && grep -q 'stringValue: runner' "$tmp/imported/settings.yaml" \
  && ok "import writes Project and Settings documents from Flyte 2" || bad "import from flyte2 (rc $rc): $out $(ls -R "$tmp/imported" 2>&1)"

# convert: the example repository's Overrides as Settings, applied into the Flyte 2 emulator.
out="$("$bin" convert --to flyte2 "$src/repo-layout-example" --out "$tmp/converted" 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && grep -q 'Settings documents' <<<"$out" && grep -q 'executionQueueAttributes' <<<"$out" \
  && grep -q 'no workflow level' <<<"$out" && ok "convert --to flyte2 writes Settings and lists what has no counterpart" || bad "convert (rc $rc): $out"
out="$("$bin" validate "$tmp/converted" 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && ok "the converted repository validates" || bad "converted validate (rc $rc): $out"
printf 'repo: %s\nstateDir: %s\nflyte2: {}\n' "$tmp/converted" "$tmp/convstate" > "$tmp/conv.yaml"
out="$("$bin" apply --config "$tmp/conv.yaml" --log-level warn 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && grep -q 'create settings' <<<"$out" && ok "the converted repository applies into Flyte 2" || bad "converted apply (rc $rc): $out"
out="$("$bin" convert --to flyte2 "$src/repo-layout-example" --out "$tmp/converted" 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && grep -q 'not empty' <<<"$out" && ok "convert refuses a non-empty output directory" || bad "convert overwrite (rc $rc): $out"
# The pull-request view: a Settings change between two commits, field by field, with the head's
# file:line, in text, markdown and json; and the history of the target's passes.
mkdir -p "$tmp/pr"
cp "$tmp/repo/settings.yaml" "$tmp/pr/"
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com
git -C "$tmp/pr" init -q -b main && git -C "$tmp/pr" add -A && git -C "$tmp/pr" commit -qm base
sed -i 's/stringValue: gpu/stringValue: cpu/' "$tmp/pr/settings.yaml"
cat >> "$tmp/pr/settings.yaml" <<'YAML'
---
apiVersion: flytecd/v1
kind: Settings
spec:
  storage:
    rawDataPath: {state: SETTING_STATE_VALUE, stringValue: "s3://org/raw"}
YAML
git -C "$tmp/pr" commit -qam head
out="$("$bin" plan --git "$tmp/pr" --base main~1 --head main --log-level warn 2>&1)"; rc=$?
[[ $rc -eq 2 ]] && grep -q 'settings: +1 ~1 -0' <<<"$out" && grep -q '~ settings flyte/development/flytesnacks' <<<"$out" \
  && grep -q 'run.defaultQueue.stringValue: base "gpu", head "cpu"' <<<"$out" && grep -q '+ settings flyte//' <<<"$out" \
  && ok "plan --git: Settings changes field by field (exit 2)" || bad "plan --git text (rc $rc): $out"
md="$("$bin" plan --git "$tmp/pr" --base main~1 --head main -o markdown --log-level warn 2>&1)"
grep -q '| <code>run.defaultQueue.stringValue</code> | <code>&quot;gpu&quot;</code>\|<code>run.defaultQueue.stringValue</code>' <<<"$md" && grep -q 'settings.yaml:7' <<<"$md" \
  && ok "plan --git -o markdown: a field table with the head's file:line" || bad "plan --git markdown: $md"
js="$("$bin" plan --git "$tmp/pr" --base main~1 --head main -o json --log-level warn 2>&1)"
python3 - "$js" <<'PY' && ok "plan --git -o json: the settings items with their fields" || bad "plan --git json: $js"
import json, sys
d = json.loads(sys.argv[1])
items = {i["key"]: i for i in d["items"]}
i = items["settings/flyte/development/flytesnacks"]
assert i["kind"] == "settings" and i["action"] == "update", i
f = {x["path"]: x for x in i["fields"]}["run.defaultQueue.stringValue"]
assert f["before"] == "gpu" and f["after"] == "cpu" and f["source"] == "settings.yaml:7", f
assert items["settings/flyte//"]["action"] == "create"
PY
out="$("$bin" history --config "$tmp/flytecd.yaml" 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && grep -q 'settings/flyte/development/flytesnacks' <<<"$out" && grep -q 'defaultQueue' <<<"$out" \
  && ok "history: the settings writes with their fields" || bad "history (rc $rc): $out"
exit $fail
