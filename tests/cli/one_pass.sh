#!/usr/bin/env bash
# Issue 11 acceptance: `apply`, one `run` reconcile and `plan --live`, on the same Git remote,
# configuration and starting state, show the same plan (one reconcile pass behind all three).
# A change on main drops a file of overrides, changes a value and bumps a registration's version;
# three copies of one state directory (embedded emulator + ledger, the example applied) each meet
# it through a different command. Their plans (steps with action, key and reason; drift;
# unmanaged; summary; registrations) must be equal.
# Usage: one_pass.sh FLYTECD_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
git_remote

config() {  # config NAME [extra yaml lines]
  cat > "$tmp/$1.yaml" <<YAML
stateDir: $tmp/$1
interval: 1h
git: {url: "file://$tmp/remote.git", ref: main}
$2
YAML
}
config s0 ""
"$bin" apply --config "$tmp/s0.yaml" --log-level warn > "$tmp/s0.log" 2>&1 || { bad "first apply"; tail -20 "$tmp/s0.log"; }

# The change under test.
g rm -q projects/data-eng/staging.yaml || bad "git rm"
sed -i 's/limits: {cpu: "16", memory: 64Gi, gpu: "1"}/limits: {cpu: "24", memory: 64Gi, gpu: "1"}/' "$tmp/work/projects/ml-training/overrides.yaml"
sed -i 's/^version: main-4f2c1ab/version: main-5e3d2bc/' "$tmp/work/registrations/data-eng.yaml"
g add -A && g commit -q -m "drop data-eng staging, raise ml-training cpu limit, bump data-eng" &&
  g push -q "$tmp/remote.git" main:main || bad "git change"

for s in plan apply run; do cp -a "$tmp/s0" "$tmp/$s"; done
config plan ""
config apply ""
hport="$(free_port)"
config run "http: {listen: \"127.0.0.1:$hport\"}"

"$bin" plan --live --config "$tmp/plan.yaml" -o json --log-level warn > "$tmp/plan.json" 2> "$tmp/plan.err"; rc=$?
[[ $rc -eq 2 ]] && ok "plan --live: changes (exit 2)" || { bad "plan --live: exit $rc"; cat "$tmp/plan.err"; }
"$bin" apply --config "$tmp/apply.yaml" -o json --log-level warn > "$tmp/apply.json" 2> "$tmp/apply.err"; rc=$?
[[ $rc -eq 0 ]] && ok "apply: converged (exit 0)" || { bad "apply: exit $rc"; cat "$tmp/apply.err"; head -c 3000 "$tmp/apply.json"; }
"$bin" run --config "$tmp/run.yaml" --log-level warn > "$tmp/run.log" 2>&1 &
pids+=($!)
status() { curl -fsS "http://127.0.0.1:$hport/api/v1/status" 2>/dev/null; }
for _ in $(seq 1 300); do status | grep -q '"lastSync"' && break; sleep 0.2; done
status > "$tmp/status.json" || bad "no status"

python3 - "$tmp/plan.json" "$tmp/apply.json" "$tmp/status.json" <<'PY' || fail=1
import json, sys
plan = json.load(open(sys.argv[1]))
apply = json.load(open(sys.argv[2]))
run = json.load(open(sys.argv[3]))["lastSync"]["plan"]
def view(p):
    return {
        "steps": [(s["action"], s["key"], s["reason"], s["drift"]) for s in p["steps"]],
        "drift": [(d["key"], d["detail"]) for d in p["drift"]],
        "unmanaged": p["unmanaged"],
        "summary": p["summary"],
        "revision": p["revision"],
        "registrations": [(r["key"], r["version"], r["digest"], r["activate"]) for r in p["registrations"]],
        "registrationChanges": p["registrationChanges"],
    }
views = {"plan --live": view(plan), "apply": view(apply), "run": view(run)}
ref = views["plan --live"]
ok = True
for name, v in views.items():
    for k in ref:
        if v[k] != ref[k]:
            ok = False
            print(f"FAIL {name} differs from plan --live in {k}:\n  {v[k]}\n  vs {ref[k]}")
steps = ref["steps"]
want = [("delete", "override/data-eng/staging"), ("update", "override/ml-training")]
for action, prefix in want:
    if not any(s[0] == action and s[1].startswith(prefix) for s in steps):
        ok = False
        print(f"FAIL the plan has no {action} of {prefix}*: {steps}")
if not ref["registrationChanges"] or not any(r[1] == "main-5e3d2bc" for r in ref["registrations"]):
    ok = False
    print(f"FAIL the plan does not register main-5e3d2bc: {ref['registrations']}")
bumped = [r for r in plan["registrations"] if r["version"] == "main-5e3d2bc"]
if not bumped or (bumped[0].get("previous") or {}).get("version") != "main-4f2c1ab":
    ok = False
    print(f"FAIL the version bump does not say what it replaces (previous): {bumped}")
if ok:
    print(f"ok apply, run and plan --live show the same plan ({len(steps)} steps, "
          f"{len(ref['registrations'])} registrations): {ref['summary']}")
sys.exit(0 if ok else 1)
PY
exit $fail
