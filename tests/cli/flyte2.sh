#!/usr/bin/env bash
# Issue 25 acceptance, the binary as a user runs it: Settings documents applied into Flyte 2's
# settings service (the embedded emulator with `flyte2: {}`, and a standalone `flytecd emulator
# --flyte2` at flyte2.endpoint); a second apply writes nothing; an out-of-band change is drift with
# both values in plan --live (exit 2, text and markdown), reverted by apply with self-heal; an
# invalid Settings document is refused with file:line and nothing is written.
# Usage: flyte2.sh FLYTECD_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

mkdir -p "$tmp/repo"
cat > "$tmp/repo/settings.yaml" <<'YAML'
apiVersion: flytecd/v1
kind: Settings
domain: development
project: flytesnacks
spec:
  run:
    defaultQueue: {state: SETTING_STATE_VALUE, stringValue: gpu}
  taskResource:
    max:
      memory: {state: SETTING_STATE_VALUE, quantityValue: 8Gi}
---
apiVersion: flytecd/v1
kind: Settings
domain: development
spec:
  security:
    serviceAccount: {state: SETTING_STATE_VALUE, stringValue: runner}
YAML

# The embedded default.
printf 'repo: %s\nstateDir: %s\nflyte2: {}\n' "$tmp/repo" "$tmp/embedded" > "$tmp/embedded.yaml"
out="$("$bin" apply --config "$tmp/embedded.yaml" --log-level warn 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && grep -q 'create settings flyte/development/flytesnacks' <<<"$out" && grep -q 'settings: +2 ~0 -0' <<<"$out" \
  && ok "embedded Flyte 2 emulator: two settings records created" || bad "embedded apply (rc $rc): $out"
grep -q 'flyte2 EMULATOR (embedded' <<<"$out" && ok "the target line names the embedded Flyte 2 emulator" || bad "target line: $out"
[[ -f "$tmp/embedded/flyte2-emulator.db" ]] && ok "its database is in the state directory" || bad "no flyte2-emulator.db"
out="$("$bin" apply --config "$tmp/embedded.yaml" --log-level warn 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && grep -q 'in sync 2' <<<"$out" && grep -q 'applied 0 steps' <<<"$out" \
  && ok "a second apply writes nothing (in sync 2)" || bad "second apply (rc $rc): $out"

# A standalone emulator at flyte2.endpoint.
fport="$(free_port)"
"$bin" emulator --flyte2 --listen "127.0.0.1:$fport" --db "$tmp/flyte2.db" > "$tmp/emulator.log" 2>&1 &
pids+=($!)
wait_port "$fport" || bad "the Flyte 2 emulator does not listen"
cfg() { printf 'repo: %s\nstateDir: %s\nflyte2: {endpoint: "dns:///127.0.0.1:%s", insecure: true}\npolicy: {selfHeal: %s}\n' "$1" "$2" "$fport" "$3" > "$4"; }
cfg "$tmp/repo" "$tmp/state" true "$tmp/flytecd.yaml"
out="$("$bin" apply --config "$tmp/flytecd.yaml" --log-level warn 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && grep -q 'target: flyte2 dns:///127.0.0.1' <<<"$out" && grep -q 'settings: +2' <<<"$out" \
  && ok "flyte2.endpoint: applied over gRPC" || bad "apply at flyte2.endpoint (rc $rc): $out"

# Out of band: another flytecd with its own state directory writes the queue "cpu".
cp -r "$tmp/repo" "$tmp/oob"
sed -i 's/stringValue: gpu/stringValue: cpu/' "$tmp/oob/settings.yaml"
cfg "$tmp/oob" "$tmp/other" true "$tmp/oob.yaml"
"$bin" apply --config "$tmp/oob.yaml" --log-level warn > "$tmp/oob.log" 2>&1 || bad "out-of-band apply: $(cat "$tmp/oob.log")"

cfg "$tmp/repo" "$tmp/state" false "$tmp/report.yaml"
out="$("$bin" plan --live --config "$tmp/report.yaml" --log-level warn 2>&1)"; rc=$?
line="$(grep 'defaultQueue.stringValue' <<<"$out")"
[[ $rc -eq 2 ]] && grep -q 'live "cpu", Git "gpu"' <<<"$line" && grep -q 'settings.yaml:7' <<<"$line" \
  && ok "plan --live: exit 2, drift with live \"cpu\", Git \"gpu\" at settings.yaml:7" || bad "plan --live (rc $rc): $out"
md="$("$bin" plan --live --config "$tmp/report.yaml" -o markdown --log-level warn 2>&1)"
grep -q 'defaultQueue.stringValue' <<<"$md" && grep -q 'cpu' <<<"$md" && grep -q 'gpu' <<<"$md" \
  && ok "plan --live -o markdown shows the field with both values" || bad "markdown: $md"
out="$("$bin" apply --config "$tmp/report.yaml" --log-level warn 2>&1)"; rc=$?
grep -qi 'drift' <<<"$out" && ok "apply with self-heal off reports the drift (rc $rc)" || bad "self-heal off apply (rc $rc): $out"
out="$("$bin" apply --config "$tmp/flytecd.yaml" --log-level warn 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && grep -q 'update settings flyte/development/flytesnacks' <<<"$out" \
  && ok "apply with self-heal reverts it" || bad "self-heal apply (rc $rc): $out"
out="$("$bin" plan --live --config "$tmp/flytecd.yaml" --log-level warn 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && grep -q 'in sync 2' <<<"$out" && ok "then in sync" || bad "after heal (rc $rc): $out"

# An invalid document: refused whole, with file:line, nothing written.
cp -r "$tmp/repo" "$tmp/bad"
sed -i 's/quantityValue: 8Gi/quantityValue: lots/' "$tmp/bad/settings.yaml"
cfg "$tmp/bad" "$tmp/state" true "$tmp/bad.yaml"
out="$("$bin" apply --config "$tmp/bad.yaml" --log-level warn 2>&1)"; rc=$?
[[ $rc -ne 0 ]] && grep -q 'settings.yaml:10' <<<"$out" && grep -q "'lots' is not a non-negative Kubernetes quantity" <<<"$out" \
  && ok "a bad quantity is refused at settings.yaml:10 (rc $rc)" || bad "bad document (rc $rc): $out"
out="$("$bin" plan --live --config "$tmp/flytecd.yaml" --log-level warn 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && ok "nothing was written by the refused revision" || bad "after refusal (rc $rc): $out"
exit $fail
