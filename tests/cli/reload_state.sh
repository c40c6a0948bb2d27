#!/usr/bin/env bash
# Issue 27.4, 27.8, 27.9 on the binary:
#   - SIGHUP with a configuration that cannot be built (a notifications urlFile that does not
#     exist, an interval of "nan") keeps the daemon up on the configuration in force, with the
#     error in status (reload, lastReloadError); passes continue; a good reload then applies;
#   - --config DIR and --flytectl-config DIR exit 1 with "is a directory" (no SIGABRT);
#     `interval: "nan"` at start-up exits 1 naming the key;
#   - under umask 022 the state directory is 0700 and its files 0600.
# Usage: reload_state.sh FLYTECD_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
command -v python3 > /dev/null || { echo "FAIL python3 is required"; exit 1; }
# lib.sh's jq_, without python's stderr
jq_() { python3 2>/dev/null -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
umask 022

# --- start-up refusals ---------------------------------------------------------------------------
mkdir -p "$tmp/confdir"
out="$(timeout 20 "$bin" run --config "$tmp/confdir" 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && grep -q "config $tmp/confdir: is a directory" <<<"$out" \
  && ok "run --config DIR: exit 1, is a directory" || bad "run --config DIR: exit $rc (134 = SIGABRT): $out"
out="$(timeout 20 "$bin" plan --live --repo "$src/repo-layout-example" --flytectl-config "$tmp/confdir" 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && grep -q "flytectl config $tmp/confdir: is a directory" <<<"$out" \
  && ok "plan --live --flytectl-config DIR: exit 1, is a directory" || bad "plan --live --flytectl-config DIR: exit $rc: $out"
printf 'interval: "nan"\n' > "$tmp/nan.yaml"
# (timeout: a daemon that accepted it would run on; 124 is then the failure.)
out="$(FLYTECD_HTTP_LISTEN=127.0.0.1:0 timeout 20 "$bin" run --config "$tmp/nan.yaml" --repo "$src/repo-layout-example" \
  --state-dir "$tmp/state-nan" 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && grep -qF "config $tmp/nan.yaml:1: interval: \"nan\" is not a duration (expected e.g. 30s, 5m, 1h; between 1s and 24h)" <<<"$out" \
  && ok "interval: \"nan\" refused at start-up naming the key" || bad "interval nan at start-up: exit $rc: $(tail -c 400 <<<"$out")"

# --- a daemon on a Git remote ----------------------------------------------------------------------
git_remote
hport="$(free_port)"
printf 'tok-%s\n' "$RANDOM$RANDOM" > "$tmp/token"
write_config() { daemon_config 1s "$1"; }
write_config ""
"$bin" run --config "$tmp/flytecd.yaml" --log-level info > "$tmp/run.log" 2>&1 &
daemon=$!; pids+=($daemon)
status_json() { curl -fsS "http://127.0.0.1:$hport/api/v1/status" 2>/dev/null; }
wait_for 'd.get("lastSync",{}).get("outcome")=="success"' && ok "daemon converged" \
  || { bad "daemon did not converge"; tail -20 "$tmp/run.log"; }

# State files under umask 022: the directory 0700, every file 0600.
mode() { stat -c %a "$1" 2>/dev/null || echo missing; }
[[ "$(mode "$tmp/state")" == 700 ]] && ok "state directory 0700 under umask 022" || bad "state directory mode $(mode "$tmp/state")"
# Each named file wherever the layout keeps it (the ledger and record are per target, under
# targets/<slug>/); every file of the state directory but the Git object cache is 0600.
for f in ledger.db ledger.db-wal ledger.db-shm emulator.db emulator.db-wal emulator.db-shm applied-revision.json lock; do
  path="$(find "$tmp/state" -path "$tmp/state/git" -prune -o -name "$f" -type f -print | head -1)"
  [[ -n "$path" && "$(mode "$path")" == 600 ]] && ok "$f 0600" || bad "$f ${path:-not found} mode $(mode "$path")"
done
others="$(find "$tmp/state" -path "$tmp/state/git" -prune -o -type f ! -perm 600 -print)"
[[ -z "$others" ]] && ok "every state file is 0600" || bad "state files not 0600: $(for f in $others; do echo "$f $(mode "$f")"; done)"

# SIGHUP with a notifications urlFile that does not exist (a secret-rotation race).
write_config "notifications: [{type: generic, urlFile: $tmp/missing-url}]"
kill -HUP "$daemon"
wait_for 'd.get("reload",{}).get("ok") is False and "missing-url" in d.get("lastReloadError","")' \
  && ok "SIGHUP with a missing urlFile: reload error in status" || bad "no reload error in status: $(status_json | head -c 600)"
kill -0 "$daemon" 2>/dev/null && ok "the daemon is still up after the failed reload" \
  || { bad "the daemon exited on a failed reload"; tail -5 "$tmp/run.log"; exit 1; }
t0="$(status_json | jq_ 'd["lastSync"]["time"]')"
wait_for "d['lastSync']['time'] != '$t0' and d['lastSync']['outcome'] == 'success'" \
  && ok "passes continue on the configuration in force" || bad "no pass after the failed reload"
sed -i 's/limits: {cpu: "16", memory: 64Gi, gpu: "1"}/limits: {cpu: "24", memory: 64Gi, gpu: "1"}/' \
  "$tmp/work/projects/ml-training/overrides.yaml"
g commit -q -am "cpu 24" && g push -q "$tmp/remote.git" main:main || bad "git push"
head_id="$("${git_env[@]}" git -C "$tmp/remote.git" rev-parse main)"
wait_for "d['lastSync']['revision'] == '$head_id' and d['lastSync']['outcome'] == 'success'" \
  && ok "a commit after the failed reload is applied" || bad "commit not applied after the failed reload"

# SIGHUP with an interval that is not a duration: refused on reload too, naming the key.
sed -i 's/^interval: 1s$/interval: "nan"/' "$tmp/flytecd.yaml"
kill -HUP "$daemon"
wait_for '"interval: \"nan\" is not a duration" in d.get("lastReloadError","")' \
  && ok "SIGHUP with interval nan: refused, named in status" || bad "interval nan on reload: $(status_json | jq_ 'd.get("lastReloadError")')"
kill -0 "$daemon" 2>/dev/null || bad "the daemon exited on interval nan"

# SIGHUP when the configuration file has become a directory (a ConfigMap mounted over it).
mv "$tmp/flytecd.yaml" "$tmp/flytecd.yaml.file" && mkdir "$tmp/flytecd.yaml"
kill -HUP "$daemon"
wait_for '"flytecd.yaml: is a directory" in d.get("lastReloadError","")' \
  && ok "SIGHUP with the config now a directory: refused, in status" || bad "config directory on reload: $(status_json | jq_ 'd.get("lastReloadError")')"
kill -0 "$daemon" 2>/dev/null || { bad "the daemon exited when its config became a directory"; exit 1; }
rmdir "$tmp/flytecd.yaml" && mv "$tmp/flytecd.yaml.file" "$tmp/flytecd.yaml"

# A good reload clears the error.
write_config ""
kill -HUP "$daemon"
wait_for 'd.get("reload",{}).get("ok") is True and "lastReloadError" not in d and d["lastSync"]["reason"] == "reload"' \
  && ok "a good SIGHUP reloads and clears lastReloadError" || bad "good reload: $(status_json | head -c 600)"

# The suspension file, written while the daemon runs, is 0600 too.
out="$(FLYTECD_SYNC_TOKEN="$(cat "$tmp/token")" "$bin" suspend --server "http://127.0.0.1:$hport" --reason modes 2>&1)" \
  || bad "suspend: $out"
[[ "$(mode "$tmp/state/suspended.json")" == 600 ]] && ok "suspended.json 0600" || bad "suspended.json mode $(mode "$tmp/state/suspended.json")"
kill "$daemon"; wait "$daemon" 2>/dev/null
exit $fail
