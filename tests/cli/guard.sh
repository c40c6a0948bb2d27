#!/usr/bin/env bash
# Issue 11 (one guard over everything destructive), the way a user meets it:
#  * `apply --repo <empty dir>` after applying the example deactivated all 24 launch plans of
#    flytesnacks-core (24 write RPCs) while the overrides part was refused: now the revision is
#    refused whole, 0 RPCs, and FlyteAdmin is exactly as before;
#  * the same for a commit deleting every document, pulled by `flytecd run` from Git;
#  * with --allow-empty --allow-mass-prune the removal proceeds.
# Usage: guard.sh FLYTECD_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
tmp="$(mktemp -d)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT
fail=0
bad() { echo "FAIL $*"; fail=1; }
ok() { echo "ok $*"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
example="$src/repo-layout-example"

# A standalone emulator, so that FlyteAdmin's state can be checked by a second process.
eport="$(free_port)"
"$bin" emulator --listen "127.0.0.1:$eport" --db "$tmp/admin.db" > "$tmp/emulator.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do (echo > /dev/tcp/127.0.0.1/$eport) 2>/dev/null && break; sleep 0.1; done
target=(--admin-endpoint "dns:///127.0.0.1:$eport" --insecure --log-level warn)

"$bin" apply --repo "$example" --state-dir "$tmp/state" "${target[@]}" > "$tmp/apply1.log" 2>&1 || bad "first apply"
mkdir -p "$tmp/empty"
out="$("$bin" apply --repo "$tmp/empty" --state-dir "$tmp/state" "${target[@]}" 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && ok "apply of an empty directory exits 1" || bad "apply of an empty directory: exit $rc"
grep -q '^REFUSED: refusing a revision with zero documents' <<<"$out" && ok "refusal is one clear line" || bad "no refusal line: $out"
grep -q 'deactivat' <<<"$out" && bad "the refused apply deactivated something: $out"
"$bin" plan --live --repo "$example" --state-dir "$tmp/state" "${target[@]}" > "$tmp/plan.log" 2>&1; rc=$?
[[ $rc -eq 0 ]] && ok "after the refusal FlyteAdmin still equals the example (plan --live exit 0)" || { bad "plan --live after refusal: exit $rc"; head -40 "$tmp/plan.log"; }
out="$("$bin" plan --live --repo "$tmp/empty" --state-dir "$tmp/state" "${target[@]}" 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && grep -q 'REFUSED' <<<"$out" && ok "plan --live shows the refusal (exit 1)" || bad "plan --live of the empty directory: exit $rc: $(head -5 <<<"$out")"

# The daemon on a Git remote: a commit that deletes every document is refused whole.
git_env=(env -i PATH="$PATH" HOME="$tmp" GIT_CONFIG_NOSYSTEM=1 LC_ALL=C)
g() { "${git_env[@]}" git -C "$tmp/work" -c user.name=t -c user.email=t@e "$@"; }
mkdir -p "$tmp/work"; cp -r "$example/." "$tmp/work/"
"${git_env[@]}" git init -q --bare -b main "$tmp/remote.git"
g init -q -b main && g add -A && g commit -q -m example && g push -q "$tmp/remote.git" main:main || bad "git setup"
hport="$(free_port)"
cat > "$tmp/flytecd.yaml" <<YAML
stateDir: $tmp/state
interval: 1s
git: {url: "file://$tmp/remote.git", ref: main}
http: {listen: "127.0.0.1:$hport"}
YAML
"$bin" run --config "$tmp/flytecd.yaml" "${target[@]}" > "$tmp/run.log" 2>&1 &
daemon=$!; pids+=($daemon)
status() { curl -fsS "http://127.0.0.1:$hport/api/v1/status" 2>/dev/null; }
for _ in $(seq 1 150); do status | grep -q '"outcome":"success"' && break; sleep 0.2; done
status | grep -q '"outcome":"success"' && ok "daemon converged on the example" || { bad "daemon did not converge"; tail -20 "$tmp/run.log"; }
g rm -q -r . && g commit -q -m "delete everything" && g push -q "$tmp/remote.git" main:main || bad "git delete commit"
for _ in $(seq 1 150); do status | grep -q '"outcome":"refused"' && break; sleep 0.2; done
st="$(status)"
grep -q '"outcome":"refused"' <<<"$st" && ok "daemon: the all-deleted commit is refused" || { bad "daemon did not refuse: $(head -c 1500 <<<"$st")"; tail -20 "$tmp/run.log"; }
grep -q 'zero documents' <<<"$st" && ok "daemon status says why" || bad "status has no reason"
grep -q 'REFUSED, nothing executed' "$tmp/run.log" && ok "daemon logs one refusal line" || bad "no refusal in the daemon log"
metric=""
for _ in $(seq 1 50); do
  metric="$(curl -sS --max-time 5 "http://127.0.0.1:$hport/metrics" 2>&1 | grep 'flytecd_reconcile_total')" && grep -q 'result="refused"} [1-9]' <<<"$metric" && break
  sleep 0.2
done
grep -q 'result="refused"} [1-9]' <<<"$metric" && ok "refusal counted in flytecd_reconcile_total" || bad "no refused metric: $metric"
kill "$daemon"; wait "$daemon" 2>/dev/null
"$bin" plan --live --repo "$example" --state-dir "$tmp/state" "${target[@]}" > "$tmp/plan2.log" 2>&1; rc=$?
[[ $rc -eq 0 ]] && ok "after the daemon's refusal nothing changed in FlyteAdmin" || { bad "plan --live after daemon refusal: exit $rc"; head -40 "$tmp/plan2.log"; }

# Explicitly allowed: the removal proceeds (archives, deletes, deactivations).
out="$("$bin" apply --repo "$tmp/empty" --state-dir "$tmp/state" --allow-empty --allow-mass-prune "${target[@]}" 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && ok "--allow-empty --allow-mass-prune proceeds" || bad "allowed removal: exit $rc: $(tail -5 <<<"$out")"
grep -q 'deactivated' <<<"$out" && ok "launch plans deactivated when allowed" || bad "nothing deactivated when allowed: $(tail -12 <<<"$out")"
exit $fail
