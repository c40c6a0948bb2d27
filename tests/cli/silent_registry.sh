#!/usr/bin/env bash
# Issue 27 §3: a registry that accepts the connection and never answers stalled everything:
# packages were fetched before projects and overrides (300 s per request, no low-speed limit, no
# cancel), so nothing was applied, /readyz said "no reconcile has finished yet" and SIGTERM took
# over 100 s (systemd SIGKILLs at 90 s). Now:
#  * `apply` applies projects and overrides, fails only the registration on the silent registry,
#    with a timeout naming it and packages.fetchTimeout, within that bound;
#  * `flytecd run` applies projects and overrides while the transfer hangs, turns ready, and
#    stops within a few seconds of SIGTERM.
# Usage: silent_registry.sh FLYTECD_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
tmp="$(mktemp -d)"
server=""; daemon=""
cleanup() {
  [[ -n "$daemon" ]] && kill -9 "$daemon" 2>/dev/null
  [[ -n "$server" ]] && kill "$server" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
bad() { echo "FAIL $*"; fail=1; }
ok() { echo "ok $*"; }
now_ms() { date +%s%3N; }

# The silent registry: accepts every connection, logs it, never sends a byte.
cat > "$tmp/silent.py" <<'PY'
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(64)
with open(sys.argv[1], "w") as f:
    f.write(str(s.getsockname()[1]))
held = []
while True:
    c, _ = s.accept()
    held.append(c)
    with open(sys.argv[2], "a") as f:
        f.write("accepted\n")
PY
python3 "$tmp/silent.py" "$tmp/port" "$tmp/accepted.log" &
server=$!
for _ in $(seq 1 100); do [[ -s "$tmp/port" ]] && break; sleep 0.1; done
[[ -s "$tmp/port" ]] || { echo "FAIL silent registry did not start"; exit 1; }
reg="127.0.0.1:$(cat "$tmp/port")"

repo="$tmp/repo"
cp -r "$src/repo-layout-example" "$repo"
cat > "$repo/registrations/silent.yaml" <<YAML
apiVersion: flytecd/v1
kind: WorkflowRegistration
metadata: {name: silent}
project: flytesnacks
domain: development
version: v1
package: oci://$reg/flyte/core:v1
YAML

# 1. apply with a 3 s package deadline.
cat > "$tmp/apply.yaml" <<YAML
repo: $repo
stateDir: $tmp/state-apply
packages: {plainHttpRegistries: ["$reg"], fetchTimeout: 3s}
YAML
t0=$(now_ms)
out="$(timeout 60 "$bin" apply --config "$tmp/apply.yaml" 2>&1)"; rc=$?
took=$(( $(now_ms) - t0 ))
[[ $rc -eq 1 ]] && ok "apply exits 1 (one registration failed)" || bad "apply: exit $rc (124: still hanging after 60 s)"
(( took < 20000 )) && ok "apply returned in ${took} ms (fetchTimeout 3 s)" || bad "apply took ${took} ms"
grep -q 'create project flytesnacks' <<<"$out" && ok "apply created the projects" || bad "apply did not create projects: $(head -c 3000 <<<"$out")"
grep -Eq '(create|update) override' <<<"$out" && ok "apply wrote overrides" || bad "apply wrote no override: $(head -c 3000 <<<"$out")"
line="$(grep "registration/flytesnacks/development/silent" <<<"$out" | head -1)"
if [[ "$line" == *FAILED* && "$line" == *"$reg"* && "$line" == *packages.fetchTimeout* ]]; then
  ok "only the silent registration failed, naming $reg and packages.fetchTimeout"
else
  bad "the silent registration's line: '$line'"; head -c 4000 <<<"$out"
fi
others="$(grep -E "registration/[^ ]*: registered" <<<"$out" | grep -vc "/silent:")"
(( others >= 1 )) && ok "the other registrations were registered ($others)" || bad "no other registration was registered: $(grep -E '^registration' <<<"$out")"
"$bin" plan --live --repo "$repo" --state-dir "$tmp/state-apply" -o json > "$tmp/plan.json" 2>/dev/null
python3 - "$tmp/plan.json" <<'PY' && ok "plan --live after apply: projects and overrides in sync" || bad "plan --live after apply still has override/project steps"
import json, sys
plan = json.load(open(sys.argv[1]))
steps = [s for s in plan["steps"] if s["action"] != "adopt"]
sys.exit(1 if steps or plan["inSync"] == 0 else 0)
PY

# 2. flytecd run with the default deadline (300 s): the transfer hangs.
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
cat > "$tmp/run.yaml" <<YAML
repo: $repo
stateDir: $tmp/state-run
packages: {plainHttpRegistries: ["$reg"]}
http: {listen: "127.0.0.1:$port"}
YAML
: > "$tmp/accepted.log"
"$bin" run --config "$tmp/run.yaml" > "$tmp/run.log" 2>&1 &
daemon=$!
ready=""
for _ in $(seq 1 150); do
  if [[ -s "$tmp/accepted.log" ]] && grep -q 'create project flytesnacks' "$tmp/run.log" &&
     [[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz")" == 200 ]]; then
    ready=1; break
  fi
  kill -0 "$daemon" 2>/dev/null || break
  sleep 0.2
done
if [[ -n "$ready" ]]; then
  ok "run: projects and overrides applied and /readyz 200 while the registry hangs"
else
  bad "run: not applied/ready while the registry hangs (accepted: $(wc -l < "$tmp/accepted.log"), readyz $(curl -s "http://127.0.0.1:$port/readyz"))"
  tail -c 3000 "$tmp/run.log"
fi
grep -q 'silent' "$tmp/run.log" && grep 'silent' "$tmp/run.log" | grep -q 'registered' && bad "run: the silent registration claims to be registered"
t0=$(now_ms)
kill -TERM "$daemon"
stopped=""
for _ in $(seq 1 100); do kill -0 "$daemon" 2>/dev/null || { stopped=1; break; }; sleep 0.1; done
took=$(( $(now_ms) - t0 ))
if [[ -n "$stopped" ]]; then
  wait "$daemon"; rc=$?; daemon=""
  ok "run: SIGTERM stopped the daemon in ${took} ms (exit $rc)"
  [[ $rc -eq 0 ]] || bad "run: exit $rc after SIGTERM"
else
  bad "run: still running ${took} ms after SIGTERM"; tail -c 2000 "$tmp/run.log"
fi
exit $fail
