#!/usr/bin/env bash
# Issue 13 acceptance, the out-of-band case: with self-heal off, projectQuotaCpu of
# ml-training/development is changed 16 -> 64 outside Git while `flytecd run` watches. Both
# values appear in the daemon log, /api/v1/status drift, the drift notification (received by a
# local HTTP server) and `plan --live` text, JSON and markdown, which exits 2.
# Usage: drift_values.sh FLYTECD_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
grep -q 'projectQuotaCpu: "16"' "$example/projects/ml-training/development.yaml" || bad "the example's quota changed: fix this test"

start_emulator
start_receiver
hport="$(free_port)"

cat > "$tmp/flytecd.yaml" <<YAML
stateDir: $tmp/state
repo: $example
interval: 1s
admin: {endpoint: "dns:///127.0.0.1:$eport", insecure: true}
policy: {selfHeal: false}
http: {listen: "127.0.0.1:$hport"}
notifications:
  - {type: generic, urlEnv: DRIFT_HOOK_URL}
YAML
DRIFT_HOOK_URL="http://127.0.0.1:$rport/hook" "$bin" run --config "$tmp/flytecd.yaml" > "$tmp/daemon.log" 2>&1 &
pids+=($!)
status() { curl -fsS "http://127.0.0.1:$hport/api/v1/status" 2>/dev/null; }
for _ in $(seq 1 300); do status | grep -q '"outcome":"success"' && break; sleep 0.2; done
status | grep -q '"outcome":"success"' && ok "the daemon converged the example" || { bad "no converged pass"; tail -20 "$tmp/daemon.log"; }

# Outside Git: another flytecd (its own state directory) writes 64.
cp -r "$example" "$tmp/oob"
sed -i 's/projectQuotaCpu: "16"/projectQuotaCpu: "64"/' "$tmp/oob/projects/ml-training/development.yaml"
"$bin" apply --repo "$tmp/oob" --state-dir "$tmp/other" --admin-endpoint "dns:///127.0.0.1:$eport" --insecure --no-prune --log-level warn > "$tmp/oob.log" 2>&1 || bad "out-of-band change"

has_values() { grep -q '64' <<<"$1" && grep -q '16' <<<"$1"; }
for _ in $(seq 1 150); do [[ -s "$tmp/received.jsonl" ]] && grep -q drift_detected "$tmp/received.jsonl" && break; sleep 0.2; done
note="$(grep drift_detected "$tmp/received.jsonl" 2>/dev/null | head -1)"
grep -q 'projectQuotaCpu: live \\"64\\", Git \\"16\\"' <<<"$note" && ok "the notification carries live 64, Git 16" || bad "notification: ${note:-none received}"
drift="$(status | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["drift"]))')"
python3 - "$drift" <<'PY' && ok "status drift has live 64 and git 16 (typed values), not reverted" || bad "status drift: $drift"
import json, sys
d = json.loads(sys.argv[1])
assert any(not x.get("reverted") and any(c["path"].endswith("projectQuotaCpu") and c["live"] == "64" and c["git"] == "16" for c in x.get("changes", [])) for x in d), d
PY
logline="$(grep 'projectQuotaCpu' "$tmp/daemon.log" | grep -i drift | head -1)"
grep -q 'live "64", Git "16"' <<<"$logline" && ok "the daemon log has the drift line with both values" || bad "log: ${logline:-none}"

kill "${pids[2]}" 2>/dev/null; wait "${pids[2]}" 2>/dev/null  # stop the daemon: its state directory is read next
for fmt in text json markdown; do
  rm -rf "$tmp/copy"; cp -a "$tmp/state" "$tmp/copy"
  out="$("$bin" plan --live --repo "$example" --state-dir "$tmp/copy" --admin-endpoint "dns:///127.0.0.1:$eport" --insecure --no-self-heal -o "$fmt" --log-level warn 2>/dev/null)"; rc=$?
  if [[ $fmt == json ]]; then
    shown="$(python3 -c 'import json,sys; print(" ".join(str(c["live"]) + " " + str(c["git"]) for d in json.load(sys.stdin)["drift"] for c in d.get("changes", []) if c["path"].endswith("projectQuotaCpu")))' <<<"$out" 2>&1)"
  else
    shown="$(grep -i 'projectQuotaCpu' <<<"$out")"
  fi
  [[ $rc -eq 2 ]] && has_values "$shown" \
    && ok "plan --live -o $fmt: exit 2 and shows 64 and 16" || bad "plan --live -o $fmt: exit $rc: $(grep -i -m3 'projectQuotaCpu' <<<"$out")"
done
exit $fail
