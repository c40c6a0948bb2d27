#!/usr/bin/env bash
# Issue 21: the README's examples are run, and what they show or select is compared with real
# output, so the README cannot drift from the product:
#  1. its status example `jq '{revision, lastSync, leader}'`: every key it names is in a running
#     daemon's GET /api/v1/status, none null (`leader` was missing without leader election);
#  2. its history example line (ml-training's cpu limit 16 -> 24 in Git) is what `flytecd
#     history` prints, file:line included;
#  3. its plan --live example line (data-eng/development's quota changed to 64 outside Git) is
#     what `flytecd plan --live` prints;
#  4. its jq drift selection `.drift[].changes[] | select(.live == "...")` selects that change;
#  5. no field change in it uses the old unlabelled `"a" → "b"` notation.
# Usage: readme_examples.sh FLYTECD_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
readme="$src/README.md"

# The examples, as the README writes them.
status_keys="$(grep -o "api/v1/status | jq '{[^}]*}'" "$readme" | head -1 | sed -E "s/.*\{([^}]*)\}.*/\1/; s/,/ /g")"
history_line="$(grep -o '`~ taskResourceAttributes\.limits\.cpu: [^`]*`' "$readme" | head -1 | tr -d '`')"
plan_line="$(grep -o '`~ clusterResourceAttributes\.attributes\.projectQuotaCpu: [^`]*`' "$readme" | head -1 | tr -d '`')"
jq_select="$(grep -o "jq '\.drift\[\]\.changes\[\] | select(\.live == \"[^\"]*\")'" "$readme" | head -1)"
[[ -n "$status_keys" && -n "$history_line" && -n "$plan_line" && -n "$jq_select" ]] \
  || { bad "an example was not found in the README: keys '$status_keys' history '$history_line' plan '$plan_line' jq '$jq_select'"; exit 1; }

start_emulator
cp -r "$example" "$tmp/r"
"$bin" apply --repo "$tmp/r" --state-dir "$tmp/s" "${target[@]}" > /dev/null 2>&1 || bad "apply the example"

# 2. History: the README's change, made in Git and applied.
from="$(sed -E 's/.*live "([^"]*)", Git "([^"]*)".*/\1/' <<<"$history_line")"
to="$(sed -E 's/.*live "([^"]*)", Git "([^"]*)".*/\2/' <<<"$history_line")"
sed -i "s/cpu: \"$from\", memory: 64Gi/cpu: \"$to\", memory: 64Gi/" "$tmp/r/projects/ml-training/overrides.yaml"
"$bin" apply --repo "$tmp/r" --state-dir "$tmp/s" "${target[@]}" > /dev/null 2>&1 || bad "apply the history change"
out="$("$bin" history --state-dir "$tmp/s" --limit 1 2>&1)"
grep -qF -- "$history_line" <<<"$out" && ok "history prints the README's line: $history_line" || bad "history: README says '$history_line', flytecd prints: $(grep -m2 'cpu' <<<"$out")"

# 3. and 4. plan --live: the README's drift, made outside Git by another flytecd.
live="$(sed -E 's/.*live "([^"]*)", Git "([^"]*)".*/\1/' <<<"$plan_line")"
git_value="$(sed -E 's/.*live "([^"]*)", Git "([^"]*)".*/\2/' <<<"$plan_line")"
file="$(sed -E 's/.*\(([^:]*):[0-9]+\)$/\1/' <<<"$plan_line")"
cp -r "$tmp/r" "$tmp/oob"
sed -i "s/projectQuotaCpu: \"$git_value\"/projectQuotaCpu: \"$live\"/" "$tmp/oob/$file"
"$bin" apply --repo "$tmp/oob" --state-dir "$tmp/other" "${target[@]}" --no-prune > /dev/null 2>&1
out="$("$bin" plan --live --repo "$tmp/r" --state-dir "$tmp/s" "${target[@]}" --no-self-heal 2>&1)"
grep -qF -- "$plan_line" <<<"$out" && ok "plan --live prints the README's line: $plan_line" || bad "plan --live: README says '$plan_line', flytecd prints: $(grep -m2 'projectQuotaCpu' <<<"$out")"
"$bin" plan --live --repo "$tmp/r" --state-dir "$tmp/s" "${target[@]}" --no-self-heal -o json > "$tmp/plan.json" 2>/dev/null
value="$(sed -E 's/.*select\(\.live == "([^"]*)"\).*/\1/' <<<"$jq_select")"
python3 - "$tmp/plan.json" "$value" <<'PY' && ok "the README's jq selection ($jq_select) selects a change" || bad "the README's jq selection selects nothing in plan --live -o json"
import json, sys
d = json.load(open(sys.argv[1])); want = sys.argv[2]
assert [c for x in d["drift"] for c in x["changes"] if c["live"] == want]
PY

# 1. Status: the keys the README's jq example reads.
hport="$(free_port)"
cat > "$tmp/flytecd.yaml" <<YAML
stateDir: $tmp/s
repo: $tmp/r
interval: 1s
admin: {endpoint: "dns:///127.0.0.1:$eport", insecure: true}
http: {listen: "127.0.0.1:$hport"}
YAML
"$bin" run --config "$tmp/flytecd.yaml" > "$tmp/daemon.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 150); do curl -fsS "http://127.0.0.1:$hport/api/v1/status" 2>/dev/null | grep -q '"lastSync"' && break; sleep 0.2; done
curl -fsS "http://127.0.0.1:$hport/api/v1/status" > "$tmp/status.json" 2>/dev/null
python3 - "$tmp/status.json" $status_keys <<'PY' && ok "status has every key the README's jq example reads: $status_keys" || bad "status lacks a key of the README's example ($status_keys)"
import json, sys
s = json.load(open(sys.argv[1]))
missing = [k for k in sys.argv[2:] if s.get(k) is None]
assert not missing, missing
PY

# 5. The notation.
if old="$(grep -nE '`[~+-] [A-Za-z.]+: "[^"]*" → "' "$readme")"; then bad "old field-change notation in the README: $old"; else ok "every field change in the README is labelled live/Git"; fi
exit $fail
