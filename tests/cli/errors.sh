#!/usr/bin/env bash
# Issue 13: errors that do not mislead.
#  * connection refused names the endpoint and asks whether FlyteAdmin listens there;
#  * TLS against a plaintext FlyteAdmin says to set admin.insecure;
#  * with 2>&1, no log or error line lands inside a stdout line (apply with debug logs).
# Usage: errors.sh FLYTECD_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

closed="$(free_port)"
out="$("$bin" plan --live --repo "$example" --state-dir "$tmp/s0" --admin-endpoint "dns:///127.0.0.1:$closed" --insecure --log-level error 2>&1)"; rc=$?
[[ $rc -eq 1 ]] || bad "plan against a closed port: exit $rc"
grep -q "is FlyteAdmin listening at 127.0.0.1:$closed? (connection refused)" <<<"$out" && ok "connection refused: a hint naming the endpoint" || bad "connection refused without the hint: $out"

start_emulator
out="$("$bin" plan --live --repo "$example" --state-dir "$tmp/s1" --admin-endpoint "dns:///127.0.0.1:$eport" --log-level error 2>&1)"; rc=$?
[[ $rc -eq 1 ]] || bad "TLS against the plaintext emulator: exit $rc"
grep -q "the server at 127.0.0.1:$eport speaks plaintext, not TLS: set admin.insecure: true" <<<"$out" && ok "TLS vs plaintext: says to set admin.insecure" || bad "TLS vs plaintext without the hint: $out"

# stdout and stderr on one pipe: every line is either a whole log line or a whole stdout line.
# 120 projects applied through the embedded emulator (its debug log lines are written while
# apply prints its steps): more than the 4 KiB a fully buffered stdout would cut anywhere.
mkdir -p "$tmp/many/projects"
for i in $(seq 1 120); do
  cat > "$tmp/many/projects/p$i.yaml" <<YAML
apiVersion: flytecd/v1
kind: Project
id: team-$i
name: Team $i
---
apiVersion: flytecd/v1
kind: Overrides
project: team-$i
domain: development
spec:
  executionClusterLabel: {value: cluster-$i}
YAML
done
"$bin" apply --repo "$tmp/many" --state-dir "$tmp/s2" --log-level debug > "$tmp/both.log" 2>&1 || bad "apply with debug logs"
lines="$(wc -l < "$tmp/both.log")"
log_re='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z (trace|debug|info|warning|error)'
mixed="$(grep -nE ".+$log_re" "$tmp/both.log" | head -3)"
[[ -z "$mixed" ]] && ok "2>&1: no log line inside a stdout line ($lines lines)" || bad "a log line inside a stdout line: $mixed"
torn="$(grep -vE "^$log_re|^[+~=±-] |^target: |^ownership: |^projects: |^registrations: |^applied |^converged$|^not converged: |^REFUSED: " "$tmp/both.log" | head -3)"
[[ -z "$torn" ]] && ok "2>&1: every line is a whole log or stdout line" || bad "torn lines: $torn"
grep -q '^applied [0-9]* steps' "$tmp/both.log" && ok "the summary line is whole" || bad "no whole summary line: $(tail -3 "$tmp/both.log")"
exit $fail
