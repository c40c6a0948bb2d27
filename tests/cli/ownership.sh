#!/usr/bin/env bash
# Issue 12 acceptance, VM case: ownership survives a lost state directory.
# Two FlyteAdmins (standalone emulators) get the example applied from a Git remote. During the
# "outage" a file of overrides is deleted from Git and an override is changed by hand in
# FlyteAdmin. Then:
#  A. the ledger is lost, the state directory's applied-revision record survives;
#  B. the whole state directory is lost, and `flytecd recover --from-revision` names the commit.
# Either way: the overrides removed from Git are pruned, 0 objects flytecd created are reported
# unmanaged, registrations whose entities exist issue 0 write RPCs, and the change by hand is
# drift with its value. Without recovery (C) the old behaviour stays visible: unmanaged, left
# alone, and said so.
# Usage: ownership.sh FLYTECD_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# A target's ledger and record live in <stateDir>/targets/<slug>/ (one target per state dir here).
tdir() { local d=("$tmp/state-$1"/targets/*/); echo "${d[0]%/}"; }
git_remote
applied="$(g rev-parse HEAD)"

for c in A B C; do
  named_emulator "$c"
  cat > "$tmp/$c.yaml" <<YAML
stateDir: $tmp/state-$c
interval: 1h
git: {url: "file://$tmp/remote.git", ref: main}
admin: {endpoint: "dns:///127.0.0.1:${port[$c]}", insecure: true}
YAML
  "$bin" apply --config "$tmp/$c.yaml" --log-level warn > "$tmp/apply0-$c.log" 2>&1 || { bad "first apply ($c)"; tail -5 "$tmp/apply0-$c.log"; }
  [[ -s "$(tdir "$c")/applied-revision.json" ]] || bad "no applied-revision record after apply ($c)"
done
python3 - "$(tdir A)/applied-revision.json" "$applied" <<'PY' && ok "the record names the applied commit, nothing in flight, and is small" || bad "record content"
import json, os, sys
r = json.load(open(sys.argv[1]))
assert r["converged"] == sys.argv[2], r
assert r["inFlight"] == "", r
assert r["configFingerprint"].startswith("sha256:") and r["version"] and r["writer"], r
assert os.path.getsize(sys.argv[1]) < 1024
PY

# The outage: Git drops a file of overrides; someone changes ml-training's limits by hand (a
# second flytecd with its own state directory stands in for `flytectl update`).
g rm -q projects/data-eng/staging.yaml && g commit -q -m "drop data-eng staging" && g push -q "$tmp/remote.git" main:main || bad "git change"
mkdir -p "$tmp/byhand"; cp -r "$src/repo-layout-example/." "$tmp/byhand/"
sed -i 's/limits: {cpu: "16", memory: 64Gi, gpu: "1"}/limits: {cpu: "99", memory: 64Gi, gpu: "1"}/' "$tmp/byhand/projects/ml-training/overrides.yaml"
grep -q '"99"' "$tmp/byhand/projects/ml-training/overrides.yaml" || bad "the by-hand edit did not apply"
for c in A B C; do
  "$bin" apply --repo "$tmp/byhand" --state-dir "$tmp/byhand-state-$c" --admin-endpoint "dns:///127.0.0.1:${port[$c]}" --insecure --no-prune --log-level warn > "$tmp/byhand-$c.log" 2>&1 || bad "by-hand change ($c)"
done

rm -f "$tmp"/state-A/targets/*/ledger.db*                # A: the ledger is lost, the record survives
rm -rf "$tmp/state-B" "$tmp/state-C"             # B, C: the whole state directory is lost
out="$("$bin" recover --config "$tmp/B.yaml" --from-revision "${applied:0:12}" --log-level warn 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && ok "recover --from-revision exits 0" || bad "recover: exit $rc: $out"
grep -q "ownership rebuilt from Git at ${applied:0:12}" <<<"$out" && ok "recover says what it rebuilt" || bad "recover output: $out"
out="$("$bin" recover --config "$tmp/B.yaml" --from-revision nosuchrev --log-level warn 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && grep -q "nosuchrev" <<<"$out" && ok "recover of an unknown revision: exit 1, named" || bad "recover nosuchrev: exit $rc: $out"

for c in A B; do
  "$bin" plan --live --config "$tmp/$c.yaml" -o json --log-level warn > "$tmp/plan-$c.json" 2> "$tmp/plan-$c.err"; rc=$?
  [[ $rc -eq 2 ]] || { bad "plan --live ($c): exit $rc"; cat "$tmp/plan-$c.err"; }
  "$bin" apply --config "$tmp/$c.yaml" -o json --log-level warn > "$tmp/apply-$c.json" 2> "$tmp/apply-$c.err"; rc=$?
  [[ $rc -eq 0 ]] || { bad "apply after the loss ($c): exit $rc"; cat "$tmp/apply-$c.err"; head -c 2000 "$tmp/apply-$c.json"; }
  python3 - "$tmp/plan-$c.json" "$tmp/apply-$c.json" "$applied" "$c" <<'PY' || fail=1
import json, sys
plan, apply, applied, case = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4]
ok = True
def check(cond, what):
    global ok
    print(("ok " if cond else "FAIL ") + f"{case}: {what}")
    ok = ok and cond
own = apply["ownership"]
check(plan["ownership"]["state"] == "rebuilt" and own["state"] == "rebuilt"
      and own["fromRevision"] == applied, f"ownership rebuilt from the applied commit ({own})")
check(apply["unmanaged"] == [], f"0 objects flytecd created are unmanaged ({apply['unmanaged']})")
removed = sorted(s["key"] for s in apply["steps"] if s["action"] == "delete")
check(len(removed) == 2 and all("data-eng" in k and "staging" in k for k in removed),
      f"the two overrides removed from Git are pruned ({removed})")
drift = [d for d in apply["drift"] if "ml-training" in d["key"]]
check(len(drift) == 1 and "99" in json.dumps(drift[0]),
      f"the change by hand is drift with its value ({drift})")
regs = apply["registrations"]
check(regs and all(r["state"] == "in-sync" for r in regs),
      f"registrations are in sync ({sorted(set(r['state'] for r in regs))})")
check(apply["applied"]["registrationRpcs"] == 0,
      f"registrations issue 0 write RPCs ({apply['applied']['registrationRpcs']})")
sys.exit(0 if ok else 1)
PY
  "$bin" plan --live --config "$tmp/$c.yaml" --log-level warn > "$tmp/plan2-$c.log" 2>&1; rc=$?
  [[ $rc -eq 0 ]] && ok "$c: converged after the apply (plan --live exit 0)" || { bad "$c: plan after apply: exit $rc"; head -20 "$tmp/plan2-$c.log"; }
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r["converged"] != sys.argv[2] and not r["inFlight"] else 1)' \
    "$(tdir "$c")/applied-revision.json" "$applied" && ok "$c: the record names the new head" || bad "$c: record after apply"
done

# C: nothing to rebuild from: the old behaviour, said so.
"$bin" plan --live --config "$tmp/C.yaml" -o json --log-level warn > "$tmp/plan-C.json" 2> "$tmp/plan-C.err"
python3 - "$tmp/plan-C.json" <<'PY' && ok "C: no ledger, no record: the two removed overrides are unmanaged and left alone, and the output says why" || { bad "C"; cat "$tmp/plan-C.err"; }
import json, sys
p = json.load(open(sys.argv[1]))
assert p["ownership"]["state"] == "none", p["ownership"]
assert "recover --from-revision" in p["ownership"]["message"]
assert sum(1 for u in p["unmanaged"] if "data-eng" in u and "staging" in u) == 2, p["unmanaged"]
assert not any(s["action"] == "delete" for s in p["steps"])
PY
exit $fail
