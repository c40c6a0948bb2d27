#!/usr/bin/env bash
# Issue 20, items 2-4: what flytecd says about a target is true of that target.
#  * One state directory, two FlyteAdmins (standalone emulators A and B): the example applied into
#    A, then into B with the same state directory. Every registration is registered in B (none is
#    "in sync" from A's ledger), plan --live against B reports no drift, the switch is said once,
#    and a repository with only a project applied into a third FlyteAdmin is not refused by A's
#    ownership.
#  * A FlyteAdmin whose database was reset behind the same endpoint: plan --live plans every
#    registration as "missing in FlyteAdmin" (exit 2), apply registers them.
#  * Two registrations of one project and domain keeping launch plans of one name ACTIVE: validate
#    refuses the revision with both file:line and the launch plan's name; the pass fails both.
#  * The last line and the exit code come from one value: a failed registration is "not
#    converged: 1 failed: …" and exit 1.
# Usage: targets.sh FLYTECD_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

at() { echo --admin-endpoint "dns:///127.0.0.1:${port[$1]}" --insecure --log-level warn; }
# States of the registrations in a plan/apply JSON document, e.g. "registered registered …".
states() { python3 -c 'import json,sys; print(" ".join(sorted(r["state"] for r in json.load(open(sys.argv[1]))["registrations"])))' "$1"; }

for c in A B C; do named_emulator "$c"; done

# --- Two targets, one state directory ----------------------------------------------------------
"$bin" apply --repo "$example" --state-dir "$tmp/s" $(at A) -o json > "$tmp/a.json" 2> "$tmp/a.err"; rc=$?
[[ $rc -eq 0 ]] && ok "apply into A converged" || { bad "apply into A: exit $rc"; tail -5 "$tmp/a.err"; }
[[ "$(states "$tmp/a.json")" == "registered registered registered registered registered registered" ]] \
  && ok "A: six registrations registered" || bad "A: registrations $(states "$tmp/a.json")"

"$bin" apply --repo "$example" --state-dir "$tmp/s" $(at B) -o json > "$tmp/b.json" 2> "$tmp/b.err"; rc=$?
[[ $rc -eq 0 ]] && ok "apply into B with A's state directory exits 0" || { bad "apply into B: exit $rc"; tail -5 "$tmp/b.err"; }
[[ "$(states "$tmp/b.json")" == "registered registered registered registered registered registered" ]] \
  && ok "B: all six registrations registered in B, none 'in sync' from A's ledger" || bad "B: registrations $(states "$tmp/b.json")"
python3 - "$tmp/b.json" <<'PY' && ok "B: nothing of A's ownership is consulted (no drift, no deletes, converged)" || bad "B apply JSON"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["drift"] == [], j["drift"]
assert not any(s["action"] == "delete" for s in j["steps"]), j["steps"]
assert j["verdict"] == "converged" and j["exitCode"] == 0, (j["verdict"], j["exitCode"])
PY
grep -q "was last used with flyteadmin 127.0.0.1:${port[A]}" "$tmp/b.err" \
  && ok "the switch from A to B is reported plainly" || { bad "no switch notice"; cat "$tmp/b.err"; }
"$bin" apply --repo "$example" --state-dir "$tmp/s" $(at B) > "$tmp/b2.log" 2>&1
grep -q "was last used" "$tmp/b2.log" && bad "the switch is reported again on the next apply" || ok "the switch is reported once"
grep -q "registrations: 6 (0 failed), 0 write RPCs" "$tmp/b2.log" && ok "B: a second apply writes nothing" || { bad "B second apply"; tail -12 "$tmp/b2.log"; }

out="$("$bin" plan --live --repo "$example" --state-dir "$tmp/s" $(at B) 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && grep -q "drift 0" <<<"$out" && ok "plan --live against B: no changes, drift 0 (exit 0)" || bad "plan --live B: exit $rc: $(tail -4 <<<"$out")"
out="$("$bin" plan --live --repo "$example" --state-dir "$tmp/s" $(at A) 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && ok "A's ownership is intact after B (plan --live against A exit 0)" || bad "plan --live A: exit $rc: $(tail -4 <<<"$out")"
ls -d "$tmp"/s/targets/*/ 2>/dev/null | wc -l | grep -qx 2 && ok "two target directories in the state directory" || bad "targets: $(ls "$tmp/s/targets" 2>&1)"

mkdir -p "$tmp/only-project"
cat > "$tmp/only-project/p.yaml" <<'YAML'
apiVersion: flytecd/v1
kind: Project
id: solo
name: Solo
YAML
out="$("$bin" apply --repo "$tmp/only-project" --state-dir "$tmp/s" $(at C) 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && ! grep -q REFUSED <<<"$out" && ok "a project-only repository applied into a third FlyteAdmin is not refused by another target's ownership" \
  || bad "only-project into C: exit $rc: $(tail -4 <<<"$out")"

# --- A FlyteAdmin reset behind the same endpoint: registrations are observed, not remembered ----
kill "${epid[A]}"; wait "${epid[A]}" 2>/dev/null
rm -f "$tmp"/admin-A.db*
named_emulator A "${port[A]}"
"$bin" plan --live --repo "$example" --state-dir "$tmp/s" $(at A) -o json > "$tmp/reset.json" 2> "$tmp/reset.err"; rc=$?
[[ $rc -eq 2 ]] && ok "plan --live against the reset FlyteAdmin: changes (exit 2)" || { bad "plan --live reset: exit $rc"; tail -5 "$tmp/reset.err"; }
python3 - "$tmp/reset.json" <<'PY' && ok "every registration is planned 'register (missing in FlyteAdmin)'" || bad "reset plan JSON"
import json, sys
regs = json.load(open(sys.argv[1]))["registrations"]
assert len(regs) == 6 and all(r["state"] == "register" for r in regs), [r["state"] for r in regs]
assert all("missing in FlyteAdmin" in json.dumps(r) for r in regs), regs[0]
PY
out="$("$bin" plan --live --repo "$example" --state-dir "$tmp/s" $(at A) 2>&1)"
grep -q "missing in FlyteAdmin" <<<"$out" && ok "the text plan says 'missing in FlyteAdmin'" || bad "text plan: $(tail -12 <<<"$out")"
"$bin" apply --repo "$example" --state-dir "$tmp/s" $(at A) -o json > "$tmp/reapply.json" 2> "$tmp/reapply.err"; rc=$?
[[ $rc -eq 0 && "$(states "$tmp/reapply.json")" == "registered registered registered registered registered registered" ]] \
  && ok "apply registers all six again, in one plan" || { bad "apply after reset: exit $rc, $(states "$tmp/reapply.json")"; tail -5 "$tmp/reapply.err"; }

# --- Two registrations, one launch plan name ----------------------------------------------------
mkdir -p "$tmp/clash/packages"
cp "$example/packages/flytesnacks-core.tgz" "$tmp/clash/packages/"
cat > "$tmp/clash/regs.yaml" <<'YAML'
apiVersion: flytecd/v1
kind: Project
id: flytesnacks
name: flytesnacks
---
apiVersion: flytecd/v1
kind: WorkflowRegistration
metadata: {name: first}
project: flytesnacks
domain: development
version: v1
package: packages/flytesnacks-core.tgz
activate: all
---
apiVersion: flytecd/v1
kind: WorkflowRegistration
metadata: {name: second}
project: flytesnacks
domain: development
version: v2
package: packages/flytesnacks-core.tgz
activate: all
YAML
out="$("$bin" validate "$tmp/clash" 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && ok "validate refuses two registrations keeping one launch plan ACTIVE (exit 1)" || bad "validate clash: exit $rc: $out"
[[ "$(grep -c 'kept ACTIVE by two registrations' <<<"$out")" == 1 ]] && grep -q "regs.yaml:6" <<<"$out" && grep -q "regs.yaml:15" <<<"$out" \
  && grep -Eq "[0-9]+ launch plans \(always_2_lp, [a-z_.]+, [a-z_.]+, …\) are kept ACTIVE by two registrations of flytesnacks/development: first \(regs.yaml:6:1\) and second" <<<"$out" \
  && ok "validate names both file:lines and the launch plan" || bad "validate clash text: $out"
out="$("$bin" plan --live --repo "$tmp/clash" --state-dir "$tmp/s2" $(at B) 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && grep -q "are kept ACTIVE by two registrations" <<<"$out" && ok "plan --live fails both clashing registrations (exit 1)" || bad "plan clash: exit $rc: $(tail -6 <<<"$out")"

# --- The last line and the exit code agree --------------------------------------------------------
out="$("$bin" apply --repo "$tmp/clash" --state-dir "$tmp/s2" $(at B) 2>&1)"; rc=$?
last="$(tail -1 <<<"$out")"
[[ $rc -eq 1 && "$last" == "not converged: 2 failed: registration/flytesnacks/development/first: "*" launch plans ("* ]] \
  && ok "apply with failed registrations: exit 1, last line '${last:0:60}…'" || bad "apply verdict: exit $rc, last line: $last"
grep -qx "converged" <<<"$out" && bad "a 'converged' line despite failed registrations" || ok "no 'converged' line"
out="$("$bin" plan --live --repo "$example" --state-dir "$tmp/s" $(at B) 2>&1)"; rc=$?
[[ $rc -eq 0 && "$(tail -1 <<<"$out")" == "no changes" ]] && ok "plan --live: 'no changes' is the last line of exit 0" || bad "plan verdict: exit $rc: $(tail -2 <<<"$out")"
exit $fail
