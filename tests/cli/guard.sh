#!/usr/bin/env bash
# Issue 11 (one guard over everything destructive), the way a user meets it:
#  * `apply --repo <empty dir>` after applying the example deactivated all 24 launch plans of
#    flytesnacks-core (24 write RPCs) while the overrides part was refused: now the revision is
#    refused whole, 0 RPCs, and FlyteAdmin is exactly as before;
#  * the same for a commit deleting every document, pulled by `flytecd run` from Git; a
#    notification receiver gets one revision_refused event naming the commit and the guard's
#    reason (not one per interval), and one more for the next refused commit;
#  * with --allow-empty --allow-mass-prune the removal proceeds.
# Usage: guard.sh FLYTECD_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# A standalone emulator, so that FlyteAdmin's state can be checked by a second process.
start_emulator

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
git_remote
hport="$(free_port)"
start_receiver
touch "$tmp/received.jsonl"
cat > "$tmp/flytecd.yaml" <<YAML
stateDir: $tmp/state
interval: 1s
git: {url: "file://$tmp/remote.git", ref: main}
http: {listen: "127.0.0.1:$hport"}
notifications:
  - {type: generic, urlEnv: GUARD_HOOK_URL}
YAML
GUARD_HOOK_URL="http://127.0.0.1:$rport/hook" "$bin" run --config "$tmp/flytecd.yaml" "${target[@]}" > "$tmp/run.log" 2>&1 &
daemon=$!; pids+=($daemon)
status() { curl -fsS "http://127.0.0.1:$hport/api/v1/status" 2>/dev/null; }
# Passes refused so far (flytecd_reconcile_total{result="refused"}).
refused_passes() {
  curl -sS --max-time 5 "http://127.0.0.1:$hport/metrics" 2>/dev/null |
    awk '/^flytecd_reconcile_total\{.*result="refused"/ {print int($NF); found=1} END {if (!found) print 0}'
}
# Waits (bounded) until at least $1 passes were refused.
wait_refused() { for _ in $(seq 1 150); do (( $(refused_passes) >= $1 )) && return 0; sleep 0.2; done; return 1; }
# Waits (bounded) until the receiver holds at least $1 notifications.
wait_received() { for _ in $(seq 1 100); do (( $(grep -c . "$tmp/received.jsonl") >= $1 )) && return 0; sleep 0.1; done; return 1; }
# Checks the receiver got exactly $1 notifications, all revision_refused, the last naming $2 and
# the guard's zero-documents reason.
check_refusals() {
  python3 - "$tmp/received.jsonl" "$1" "$2" <<'PY'
import json, sys
path, want, revision = sys.argv[1], int(sys.argv[2]), sys.argv[3]
got = [json.loads(l) for l in open(path) if l.strip()]
assert len(got) == want, f"expected {want} notification(s), got {len(got)}: {got}"
assert all(n["event"] == "revision_refused" for n in got), got
last = got[-1]
assert last["revision"] == revision, last
assert last["summary"].startswith("refusing a revision with zero documents"), last
assert any(d.startswith("overrides: ") and "would be deleted" in d for d in last["details"]), last
PY
}
for _ in $(seq 1 150); do status | grep -q '"outcome":"success"' && break; sleep 0.2; done
status | grep -q '"outcome":"success"' && ok "daemon converged on the example" || { bad "daemon did not converge"; tail -20 "$tmp/run.log"; }
[[ ! -s "$tmp/received.jsonl" ]] || bad "notifications before the refusal: $(cat "$tmp/received.jsonl")"
g rm -q -r . && g commit -q -m "delete everything" && g push -q "$tmp/remote.git" main:main || bad "git delete commit"
deleted="$(g rev-parse HEAD)"
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
# The same revision is refused every interval; it is notified once.
first="$(refused_passes)"
wait_refused $((first + 3)) || bad "the daemon stopped refusing every interval (refused passes: $(refused_passes))"
wait_received 1
out="$(check_refusals 1 "$deleted" 2>&1)" && ok "one revision_refused notification names the commit and the reason, after $(refused_passes) refused passes" || bad "refusal notification: $out"
# A new refused revision is notified again.
g commit -q --allow-empty -m "still nothing" && g push -q "$tmp/remote.git" main:main || bad "git empty commit"
again="$(g rev-parse HEAD)"
for _ in $(seq 1 150); do status | grep -q "\"revision\":\"$again\"" && break; sleep 0.2; done
now="$(refused_passes)"
wait_refused $((now + 3)) || bad "the new revision was not refused every interval"
wait_received 2
out="$(check_refusals 2 "$again" 2>&1)" && ok "the next refused commit is one more revision_refused notification" || bad "second refusal notification: $out"
kill "$daemon"; wait "$daemon" 2>/dev/null
"$bin" plan --live --repo "$example" --state-dir "$tmp/state" "${target[@]}" > "$tmp/plan2.log" 2>&1; rc=$?
[[ $rc -eq 0 ]] && ok "after the daemon's refusal nothing changed in FlyteAdmin" || { bad "plan --live after daemon refusal: exit $rc"; head -40 "$tmp/plan2.log"; }

# Explicitly allowed: the removal proceeds (archives, deletes, deactivations).
out="$("$bin" apply --repo "$tmp/empty" --state-dir "$tmp/state" --allow-empty --allow-mass-prune "${target[@]}" 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && ok "--allow-empty --allow-mass-prune proceeds" || bad "allowed removal: exit $rc: $(tail -5 <<<"$out")"
grep -q 'deactivated' <<<"$out" && ok "launch plans deactivated when allowed" || bad "nothing deactivated when allowed: $(tail -12 <<<"$out")"

# Stopped, the standalone emulator says how many writes it acknowledged and in how many commits
# (its group commit, for benchmarks): every write above, in at least one commit, no more commits
# than writes.
kill "${pids[0]}"; wait "${pids[0]}" 2>/dev/null
line="$(grep -Eo 'stopped \([0-9]+ writes acknowledged in [0-9]+ commits\)' "$tmp/emulator.log")"
read -r w c < <(sed -E 's/stopped \(([0-9]+) writes acknowledged in ([0-9]+) commits\)/\1 \2/' <<<"$line")
[[ -n "$line" && $w -gt 100 && $c -ge 1 && $c -le $w ]] && ok "the emulator's stop line counts its writes and commits ($w in $c)" || bad "emulator stop line: '$line'"
exit $fail
