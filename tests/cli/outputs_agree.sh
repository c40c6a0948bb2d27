#!/usr/bin/env bash
# Issue 21: what a command prints agrees with what it would do.
#  * import --out into the state directory that applied the example: its check used to print
#    "calls for no change (… registrations: +0 ~0 -6)" while that very plan was REFUSED (exit 1);
#    now the check reports the refusal and says the imported repository would remove the
#    registrations, and import exits 1.
#  * the pin `get registrations` prints is the one validate accepts (#sha256=<hex>).
#  * validate --require-digest on the example said "2 registrations" of the 6 it declares: the
#    rejected ones are counted too (text and JSON).
# Usage: outputs_agree.sh FLYTECD_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
start_emulator

"$bin" apply --repo "$example" --state-dir "$tmp/s" "${target[@]}" > "$tmp/apply.log" 2>&1 || bad "apply the example"

out="$("$bin" import --out "$tmp/imp" --state-dir "$tmp/s" "${target[@]}" 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && ok "import whose check would not be a no-op exits 1" || bad "import: exit $rc: $out"
grep -q "calls for no change" <<<"$out" && bad "the check still says 'calls for no change': $out" || ok "the check does not claim 'no change'"
grep -q "^check FAILED: .* is REFUSED: " <<<"$out" && ok "the check reports the refusal" || bad "no refusal in the check: $out"
grep -q "would remove 6 registration(s) flytecd manages" <<<"$out" && ok "it says the imported repository would remove the 6 registrations" || bad "no registration removal named: $out"
"$bin" plan --live --repo "$tmp/imp" --state-dir "$tmp/s" "${target[@]}" > "$tmp/plan.log" 2>&1; rc=$?
[[ $rc -eq 1 ]] && grep -q "^REFUSED: " "$tmp/plan.log" && ok "and that plan is indeed refused (exit 1)" || bad "plan of the import: exit $rc"

# A pin as printed is a pin validate accepts.
pin="$("$bin" get registrations --repo "$example" --state-dir "$tmp/s" --admin-endpoint "dns:///127.0.0.1:$eport" --insecure 2>/dev/null | sed -n 's/^  package: *\(.*#sha256.*\)$/\1/p' | head -1)"
[[ "$pin" == *"#sha256="* ]] && ok "get registrations prints the pin as documents write it ($pin)" || bad "pin as printed: '$pin'"
mkdir -p "$tmp/pinned/packages" && cp "$example/packages/flytesnacks-core.tgz" "$tmp/pinned/packages/"
cat > "$tmp/pinned/r.yaml" <<YAML
apiVersion: flytecd/v1
kind: WorkflowRegistration
metadata: {name: pinned}
project: flytesnacks
domain: development
version: v1
package: "$pin"
YAML
"$bin" validate "$tmp/pinned" > "$tmp/v.log" 2>&1 && ok "validate accepts the printed pin" || { bad "validate refuses the printed pin"; cat "$tmp/v.log"; }

# --require-digest: 6 registrations are declared, 2 are pinned; the summary counts all six.
declared="$(grep -rh '^kind: WorkflowRegistration' "$example" | wc -l)"
out="$("$bin" validate --require-digest "$example" 2>&1)"; rc=$?
summary="$(tail -1 <<<"$out")"
[[ $rc -eq 1 ]] && grep -q "registrations accepted, [1-9][0-9]* rejected" <<<"$summary" && ok "validate --require-digest says how many were rejected: $summary" || bad "validate --require-digest: exit $rc: $summary"
json="$("$bin" validate --require-digest -o json "$example" 2>/dev/null)"
python3 - "$json" "$declared" <<'PY' && ok "JSON: registrations + rejectedDocuments = the $declared declared" || bad "validate -o json counts: $(head -c 400 <<<"$json")"
import json, sys
j = json.loads(sys.argv[1]); declared = int(sys.argv[2])
pins = sum(1 for d in j["diagnostics"] if d["kind"] == "policy_violation")
assert pins > 0 and j["rejectedDocuments"] == pins, (pins, j["rejectedDocuments"])
assert j["registrations"] + j["rejectedDocuments"] == declared, (j["registrations"], j["rejectedDocuments"], declared)
PY
exit $fail
