#!/usr/bin/env bash
# Issue 21: the JSON shape is published (packaging/schema/flytecd-output.schema.json) and every
# command with -o json, plus GET /api/v1/status and /api/v1/history, is validated against it on
# real output: validate (valid and invalid), apply, plan --live (in sync, and with drift left in
# place so field changes are present), history, get overrides (also --live), get registrations,
# plan --git, a running daemon's status, get objects and version. Field changes must hold JSON
# values, not JSON text in strings.
# Usage: json_schema.sh FLYTECD_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
schema="$src/packaging/schema/flytecd-output.schema.json"
# The validator: Debian's python3-jsonschema (setup-debian.sh --tests) for /usr/bin/python3, or
# a python3 earlier on PATH that has jsonschema itself.
py=""
for candidate in python3 /usr/bin/python3; do
  if "$candidate" -c 'import jsonschema' 2>/dev/null; then py="$candidate"; break; fi
done
[[ -n "$py" ]] || { echo "FAIL python3-jsonschema is missing: run packaging/setup-debian.sh --tests"; exit 1; }

# check NAME DEF FILE [typed]: FILE validates against $defs/DEF; with "typed", at least one field
# change is present and none holds a string that is itself JSON text of a string ("\"64\"").
check() {
  "$py" - "$schema" "$2" "$3" "${4:-}" <<'PY' && ok "$1 matches \$defs/$2" || bad "$1 does not match \$defs/$2"
import json, sys, jsonschema
schema, name, path, typed = sys.argv[1:5]
full = json.load(open(schema))
doc = json.load(open(path))
v = jsonschema.Draft202012Validator({"$defs": full["$defs"], "$ref": "#/$defs/" + name})
errors = sorted(v.iter_errors(doc), key=lambda e: list(e.path))
for e in errors[:5]:
    print(f"  {'/'.join(map(str, e.path))}: {e.message[:300]}")
if errors:
    sys.exit(1)
if typed:
    found = []
    def walk(x):
        if isinstance(x, dict):
            if "path" in x and "live" in x and "git" in x:
                found.append(x)
            for y in x.values(): walk(y)
        elif isinstance(x, list):
            for y in x: walk(y)
    walk(doc)
    assert found, "no field change in the output"
    for c in found:
        for side in ("live", "git"):
            val = c[side]
            assert not (isinstance(val, str) and len(val) > 1 and val[0] == '"' and val[-1] == '"'), f"{c['path']}: {side} is JSON text in a string: {val!r}"
PY
}

"$bin" validate -o json "$example" > "$tmp/validate.json" 2>/dev/null
check "validate -o json (valid)" validate "$tmp/validate.json"
"$bin" validate --require-digest -o json "$example" > "$tmp/validate-bad.json" 2>/dev/null
check "validate -o json (invalid)" validate "$tmp/validate-bad.json"

start_emulator

"$bin" apply --repo "$example" --state-dir "$tmp/s" "${target[@]}" -o json > "$tmp/apply.json" 2>/dev/null
check "apply -o json" pass "$tmp/apply.json"
"$bin" plan --live --repo "$example" --state-dir "$tmp/s" "${target[@]}" -o json > "$tmp/plan.json" 2>/dev/null
check "plan --live -o json (in sync)" pass "$tmp/plan.json"
# Out of band: another flytecd writes 64 where Git says 16; self-heal off leaves it as drift.
cp -r "$example" "$tmp/oob"
sed -i 's/projectQuotaCpu: "16"/projectQuotaCpu: "64"/' "$tmp/oob/projects/ml-training/development.yaml"
"$bin" apply --repo "$tmp/oob" --state-dir "$tmp/other" "${target[@]}" --no-prune > /dev/null 2>&1
"$bin" plan --live --repo "$example" --state-dir "$tmp/s" "${target[@]}" --no-self-heal -o json > "$tmp/drift.json" 2>/dev/null
check "plan --live -o json (drift)" pass "$tmp/drift.json" typed
python3 - "$tmp/drift.json" <<'PY' && ok "jq-style selection by value works: .drift[].changes[] | select(.live == \"64\")" || bad "no drift change with live == \"64\""
import json, sys
d = json.load(open(sys.argv[1]))
assert any(c["live"] == "64" and c["git"] == "16" for x in d["drift"] for c in x["changes"]), d["drift"]
PY
"$bin" get overrides --live -p ml-training -d development --repo "$example" --state-dir "$tmp/s" "${target[@]}" -o json > "$tmp/live-overrides.json" 2>/dev/null
check "get overrides --live -o json (drift)" getOverridesLive "$tmp/live-overrides.json" typed
"$bin" apply --repo "$example" --state-dir "$tmp/s" "${target[@]}" -o json > "$tmp/heal.json" 2>/dev/null
check "apply -o json (self-heal)" pass "$tmp/heal.json" typed
"$bin" history --state-dir "$tmp/s" -o json > "$tmp/history.json" 2>/dev/null
check "history -o json" history "$tmp/history.json" typed
"$bin" get overrides -p flytesnacks -d development --repo "$example" -o json > "$tmp/overrides.json" 2>/dev/null
check "get overrides -o json" getOverrides "$tmp/overrides.json"
"$bin" get registrations --repo "$example" --state-dir "$tmp/s" "${target[@]}" -o json > "$tmp/regs.json" 2>/dev/null
check "get registrations -o json" getRegistrations "$tmp/regs.json"

# plan --git: two commits of a copy of the example.
cp -r "$example" "$tmp/g" && (cd "$tmp/g" && git init -q -b main && git add -A && git -c user.email=t@e -c user.name=t commit -qm base &&
  sed -i 's/maxParallelism: 5/maxParallelism: 9/' projects/flytesnacks/development.yaml && rm -rf projects/data-eng registrations/data-eng.yaml &&
  git add -A && git -c user.email=t@e -c user.name=t commit -qm change) || bad "git setup"
"$bin" plan --git "$tmp/g" --base HEAD~1 --head HEAD -o json > "$tmp/review.json" 2>/dev/null
check "plan --git -o json" planGit "$tmp/review.json"
python3 - "$tmp/review.json" <<'PY' && ok "plan --git: typed field values, action words, keys as plan --live names them, reaches as scopes, a retired project's overrides listed once" || bad "plan --git JSON content"
import json, sys
r = json.load(open(sys.argv[1]))
f = [x for i in r["items"] for x in i.get("fields", []) if x["path"] == "maxParallelism"]
assert f and f[0]["before"] == 5 and f[0]["after"] == 9, f
assert {i["action"] for i in r["items"]} <= {"create", "update", "delete"}
retired = [i for i in r["items"] if i["kind"] == "project" and i["action"] == "delete"]
assert retired and retired[0].get("retiredOverrides"), retired
assert not any(i["kind"] == "override" and i["object"].startswith("data-eng") for i in r["items"]), "data-eng overrides shown one table each"
# One id scheme with plan --live, and reaches as data.
assert all(i["key"].split("/")[0] in ("override", "project", "registration") for i in r["items"]), r["items"]
mp = [i for i in r["items"] if i["kind"] == "override" and i["key"] == "override/flytesnacks/development//WORKFLOW_EXECUTION_CONFIG"]
assert mp and {"project": "flytesnacks", "domain": "development", "otherWorkflows": True} in mp[0]["reaches"], mp
PY

# A running daemon's status, with drift left in place.
hport="$(free_port)"
cat > "$tmp/flytecd.yaml" <<YAML
stateDir: $tmp/s
repo: $example
interval: 1s
admin: {endpoint: "dns:///127.0.0.1:$eport", insecure: true}
policy: {selfHeal: false}
http: {listen: "127.0.0.1:$hport"}
YAML
"$bin" apply --repo "$tmp/oob" --state-dir "$tmp/other" "${target[@]}" --no-prune > /dev/null 2>&1
"$bin" run --config "$tmp/flytecd.yaml" --log-format json > "$tmp/daemon.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 150); do curl -fsS "http://127.0.0.1:$hport/api/v1/status" 2>/dev/null | grep -q '"changes":\[{' && break; sleep 0.2; done
curl -fsS "http://127.0.0.1:$hport/api/v1/status" > "$tmp/status.json" 2>/dev/null
check "GET /api/v1/status" status "$tmp/status.json" typed
"$bin" get objects --server "http://127.0.0.1:$hport" -o json > "$tmp/objects.json" 2>/dev/null
check "get objects -o json" getObjects "$tmp/objects.json"
"$bin" version --server "http://127.0.0.1:$hport" "${target[@]}" -o json > "$tmp/version.json" 2>/dev/null
check "version -o json (client, daemon, FlyteAdmin)" version "$tmp/version.json"
"$bin" version --server "http://127.0.0.1:$(free_port)" -o json > "$tmp/version-down.json" 2>/dev/null
check "version -o json (nothing reachable)" version "$tmp/version-down.json"
curl -fsS "http://127.0.0.1:$hport/api/v1/history" > "$tmp/h2.json" 2>/dev/null
check "GET /api/v1/history" history "$tmp/h2.json"
# --log-format json: every line the daemon wrote is one JSON object with the common fields, and
# the pass's lines carry the revision.
python3 - "$tmp/daemon.log" <<'PY' && ok "--log-format json: every line is a JSON object; pass lines carry revision" || { bad "--log-format json"; head -5 "$tmp/daemon.log"; }
import json, sys
lines = [l for l in open(sys.argv[1], encoding="utf-8", errors="strict") if l.strip()]
assert lines
docs = [json.loads(l) for l in lines]
for d in docs:
    assert {"time", "level", "logger", "message"} <= d.keys(), d
assert any("revision" in d and "drift" in d["message"] for d in docs), [d["message"] for d in docs][:20]
PY
exit $fail
