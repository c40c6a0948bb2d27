#!/usr/bin/env bash
# Issue 13: history. A change pushed to Git and reconciled by `flytecd run` is in
# `flytecd history` and GET /api/v1/history with its commit (subject, author), trigger and each
# field's old and new value; passes with nothing to do are counted, not stored; filters work.
# Usage: history.sh FLYTECD_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
git_remote "Ada Lovelace" ada@example.com
hport="$(free_port)"
cat > "$tmp/flytecd.yaml" <<YAML
stateDir: $tmp/state
interval: 1s
git: {url: "file://$tmp/remote.git", ref: main}
http: {listen: "127.0.0.1:$hport"}
YAML
"$bin" run --config "$tmp/flytecd.yaml" --log-level warn > "$tmp/run.log" 2>&1 &
pids+=($!)
status() { curl -fsS "http://127.0.0.1:$hport/api/v1/status" 2>/dev/null; }
for _ in $(seq 1 150); do status | grep -q '"outcome":"success"' && break; sleep 0.2; done
sed -i 's/limits: {cpu: "16", memory: 64Gi, gpu: "1"}/limits: {cpu: "24", memory: 64Gi, gpu: "1"}/' "$tmp/work/projects/ml-training/overrides.yaml"
g commit -q -am "ml-training: raise the cpu limit to 24" && g push -q "$tmp/remote.git" main:main || bad "git change"
head_id="$("${git_env[@]}" git -C "$tmp/remote.git" rev-parse main)"
for _ in $(seq 1 150); do status | grep -q "\"revision\":\"$head_id\"" && break; sleep 0.2; done
sleep 3  # a few no-op intervals
curl -fsS "http://127.0.0.1:$hport/api/v1/history?project=ml-training&limit=5" > "$tmp/api.json" || bad "GET /api/v1/history"
curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$hport/api/v1/history?limit=x" | grep -q 400 && ok "a bad limit is 400" || bad "bad limit not refused"
python3 - "$tmp/api.json" "$head_id" <<'PY' || fail=1
import json, sys
h = json.load(open(sys.argv[1])); head = sys.argv[2]
ok = True
if not h or h[0]["revision"] != head:
    print(f"FAIL newest entry is not the pushed commit: {[e['revision'] for e in h]}"); sys.exit(1)
e = h[0]
for k, want in [("subject", "ml-training: raise the cpu limit to 24"), ("author", "Ada Lovelace <ada@example.com>"), ("outcome", "success")]:
    if e[k] != want: ok = False; print(f"FAIL {k}: {e[k]!r} != {want!r}")
changes = [c for s in e["steps"] for c in s["changes"]]
if not any(c["path"].endswith("limits.cpu") and c["live"] == "16" and c["git"] == "24" for c in changes):
    ok = False; print(f"FAIL no cpu 16 -> 24 change: {e['steps']}")
if e["trigger"] not in ("interval", "startup") and not e["trigger"]:
    ok = False; print(f"FAIL no trigger: {e}")
if e["noopPassesAfter"] < 1:
    ok = False; print(f"FAIL the no-op passes after the change were not counted: {e['noopPassesAfter']}")
if any(s["key"].split("/")[1] != "ml-training" for x in h for s in x["steps"]):
    ok = False; print("FAIL the project filter showed other projects' steps")
print("ok GET /api/v1/history: the commit, its author, and cpu 16 -> 24" if ok else "")
sys.exit(0 if ok else 1)
PY
out="$("$bin" history --server "http://127.0.0.1:$hport" --project ml-training --limit 2 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && grep -q '~ taskResourceAttributes.limits.cpu: live "16", Git "24"' <<<"$out" && grep -q 'Ada Lovelace' <<<"$out" &&
  ok "flytecd history --server asks the running daemon" || bad "history --server: exit $rc: $(head -10 <<<"$out")"
kill "${pids[0]}"; wait "${pids[0]}" 2>/dev/null; pids=()
out="$("$bin" history --config "$tmp/flytecd.yaml" --project ml-training --limit 3 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && grep -q '~ taskResourceAttributes.limits.cpu: live "16", Git "24"' <<<"$out" && grep -q 'raise the cpu limit' <<<"$out" &&
  ok "flytecd history shows the change field by field" || bad "flytecd history: exit $rc: $(head -20 <<<"$out")"
out="$("$bin" history --state-dir "$tmp/nowhere" 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && grep -q "no ledger at" <<<"$out" && ok "history without a ledger says so" || bad "history without ledger: exit $rc: $out"
exit $fail
