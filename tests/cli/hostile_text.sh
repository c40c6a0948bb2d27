#!/usr/bin/env bash
# Issue 27.1: text that is not valid UTF-8 (or is cut mid-character) aborted flytecd, because
# nlohmann's dump() throws on it and nothing caught the exception. Each reproduction must give
# valid JSON (and the daemon must stay up):
#   - a registry answering 404 with 200 CJK characters (cut at 300 bytes mid-character):
#     `apply -o json` is valid JSON and exit 1, not SIGABRT; `run` stays up;
#   - a document file named in Latin-1 (caf\xe9.yaml): `validate -o json` is valid JSON;
#   - an ISO-8859-1 commit: `history -o json` and GET /api/v1/history are valid JSON, decoded;
#   - `suspend --reason` with 400 non-ASCII characters: the daemon is suspended.
# Usage: hostile_text.sh FLYTECD_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
command -v python3 > /dev/null || { echo "FAIL python3 is required"; exit 1; }
# Exit 0 when stdin is one valid JSON document in valid UTF-8; prints the python expression $1
# over it (d) when given.
json_ok() { python3 -c '
import json, sys
raw = sys.stdin.buffer.read()
d = json.loads(raw.decode("utf-8"))  # strict: invalid UTF-8 fails here
if len(sys.argv) > 1: print(eval(sys.argv[1]))' "$@"; }
unset FLYTECD_SYNC_TOKEN

# --- 1. A registry answering 404 with a long CJK message --------------------------------------
rport="$(free_port)"
cat > "$tmp/registry.py" <<'PY'
import http.server, json, sys
MSG = "\u6f22" * 200  # 600 bytes of UTF-8; "NAME_UNKNOWN: " + MSG was cut at 300 bytes, mid-character
class H(http.server.BaseHTTPRequestHandler):
    def answer(self):
        body = json.dumps({"errors": [{"code": "NAME_UNKNOWN", "message": MSG}]},
                          ensure_ascii=False).encode()
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD": self.wfile.write(body)
    do_GET = do_HEAD = do_POST = answer
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
python3 "$tmp/registry.py" "$rport" > "$tmp/registry.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$rport/v2/" && break; sleep 0.05; done
repo="$tmp/repo"
mkdir -p "$repo/projects/flytesnacks" "$repo/registrations"
cat > "$repo/projects/flytesnacks/project.yaml" <<YAML
apiVersion: flytecd/v1
kind: Project
id: flytesnacks
name: flytesnacks
YAML
cat > "$repo/registrations/flytesnacks.yaml" <<YAML
apiVersion: flytecd/v1
kind: WorkflowRegistration
metadata:
  name: basic
project: flytesnacks
domain: development
version: v1
package: oci://127.0.0.1:$rport/flyte/basic:v1
YAML
cat > "$tmp/oci.yaml" <<YAML
packages: {plainHttpRegistries: ["127.0.0.1:$rport"], cacheDir: $tmp/cache}
YAML
"$bin" apply --repo "$repo" --state-dir "$tmp/state-apply" --config "$tmp/oci.yaml" -o json \
  > "$tmp/apply.json" 2> "$tmp/apply.err"; rc=$?
if [[ $rc -eq 1 ]] && json_ok < "$tmp/apply.json" > /dev/null; then
  ok "apply -o json against a 404 with 200 CJK characters: valid JSON, exit 1"
else
  bad "apply -o json: exit $rc (134 = SIGABRT); stderr: $(head -c 600 "$tmp/apply.err")"
fi
grep -q 'NAME_UNKNOWN' "$tmp/apply.json" && ok "apply -o json names the registry's error" \
  || bad "apply -o json does not carry the registry's error: $(head -c 600 "$tmp/apply.json")"
# The detail is cut on a character boundary: only whole CJK characters (no U+FFFD) before "…".
json_ok 'any("\u6f22…" in json.dumps(d, ensure_ascii=False) for _ in [0]) and "\ufffd" not in json.dumps(d, ensure_ascii=False)' \
  < "$tmp/apply.json" 2>/dev/null | grep -q True && ok "the registry's message is cut between characters" \
  || bad "the registry's message is not cut on a character boundary"

# `flytecd run` on the same repository: every pass hits the registry; the daemon stays up.
hport="$(free_port)"
FLYTECD_HTTP_LISTEN="127.0.0.1:$hport" "$bin" run --repo "$repo" --state-dir "$tmp/state-run" \
  --config "$tmp/oci.yaml" --log-level warn > "$tmp/run-oci.log" 2>&1 &
daemon=$!; pids+=($daemon)
st=""
for _ in $(seq 1 150); do
  st="$(curl -fsS "http://127.0.0.1:$hport/api/v1/status" 2>/dev/null)"
  [[ "$st" == *NAME_UNKNOWN* ]] && break
  sleep 0.1
done
if kill -0 "$daemon" 2>/dev/null && json_ok <<<"$st" > /dev/null && [[ "$st" == *NAME_UNKNOWN* ]]; then
  ok "run: the registration fails, status is valid JSON with the registry's error, the daemon is up"
else
  bad "run against the CJK 404: $(kill -0 "$daemon" 2>/dev/null && echo up || echo DEAD); $(tail -c 600 "$tmp/run-oci.log")"
fi
kill "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null

# --- 2. A document file named in Latin-1 ---------------------------------------------------------
latin="$tmp/latin"
cp -r "$src/repo-layout-example" "$latin"
printf 'apiVersion: flytecd/v1\nkind: Project\nid: cafe\nname: cafe\ncolour: blue\n' \
  > "$latin/projects/caf"$'\xe9'".yaml"
"$bin" validate "$latin" -o json > "$tmp/validate.json" 2> "$tmp/validate.err"; rc=$?
if [[ $rc -eq 1 ]] && json_ok 'any(x.get("file") == "projects/caf\ufffd.yaml" for x in d["diagnostics"])' \
     < "$tmp/validate.json" | grep -q True; then
  ok "validate -o json on caf\\xe9.yaml: valid JSON naming the file (U+FFFD for the byte)"
else
  bad "validate -o json on a Latin-1 file name: exit $rc; $(head -c 400 "$tmp/validate.json") $(head -c 400 "$tmp/validate.err")"
fi

# --- 3. An ISO-8859-1 commit, through the daemon into the ledger ---------------------------------
git_remote
hport="$(free_port)"
printf 'tok-%s\n' "$RANDOM$RANDOM" > "$tmp/token"
daemon_config 1s
"$bin" run --config "$tmp/flytecd.yaml" --log-level warn > "$tmp/run.log" 2>&1 &
daemon=$!; pids+=($daemon)
status() { curl -fsS "http://127.0.0.1:$hport/api/v1/status" 2>/dev/null; }
for _ in $(seq 1 150); do status | grep -q '"outcome":"success"' && break; sleep 0.2; done
sed -i 's/limits: {cpu: "16", memory: 64Gi, gpu: "1"}/limits: {cpu: "24", memory: 64Gi, gpu: "1"}/' \
  "$tmp/work/projects/ml-training/overrides.yaml"
g add -A
"${git_env[@]}" git -C "$tmp/work" -c i18n.commitEncoding=ISO-8859-1 -c user.name="J"$'\xfc'"rgen" \
  -c user.email=j@e commit -q -m "caf"$'\xe9'": cpu limit 24" || bad "Latin-1 commit"
g push -q "$tmp/remote.git" main:main || bad "git push"
head_id="$("${git_env[@]}" git -C "$tmp/remote.git" rev-parse main)"
for _ in $(seq 1 150); do status | grep -q "\"revision\":\"$head_id\"" && break; sleep 0.2; done
api_ok=0
for _ in $(seq 1 50); do
  code="$(curl -s -o "$tmp/api.json" -w '%{http_code}' "http://127.0.0.1:$hport/api/v1/history?limit=5")"
  [[ "$code" == 200 ]] && grep -q "$head_id" "$tmp/api.json" && { api_ok=1; break; }
  sleep 0.2
done
if [[ $api_ok -eq 1 ]] && json_ok 'd[0]["subject"] == "caf\u00e9: cpu limit 24" and d[0]["author"] == "J\u00fcrgen <j@e>"' \
     < "$tmp/api.json" | grep -q True; then
  ok "GET /api/v1/history: 200, valid JSON, the Latin-1 subject and author decoded"
else
  bad "GET /api/v1/history after a Latin-1 commit: $code $(head -c 600 "$tmp/api.json")"
fi

# --- 4. suspend --reason with 400 non-ASCII characters -------------------------------------------
reason="$(python3 -c 'print("\u6f22" * 400)')"  # 1200 bytes; the server keeps 500 (not a multiple of 3)
out="$("$bin" suspend --server "http://127.0.0.1:$hport" --token-file "$tmp/token" --reason "$reason" 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && ok "suspend --reason with 400 non-ASCII characters: exit 0" || bad "suspend: exit $rc: $(head -c 300 <<<"$out")"
st="$(status)"
if json_ok 'd["suspended"] is not None and set(d["suspended"]["reason"]) == {"\u6f22"} and len(d["suspended"]["reason"].encode()) <= 500' \
     <<<"$st" | grep -q True; then
  ok "the daemon is suspended; the reason is cut between characters"
else
  bad "not suspended after suspend --reason: $(head -c 400 <<<"$st")"
fi
kill "$daemon"; wait "$daemon" 2>/dev/null
out="$("$bin" history --config "$tmp/flytecd.yaml" --limit 5 -o json 2>&1)"; rc=$?
if [[ $rc -eq 0 ]] && json_ok 'any(e["subject"] == "caf\u00e9: cpu limit 24" for e in d)' <<<"$out" | grep -q True; then
  ok "history -o json: valid JSON with the decoded subject"
else
  bad "history -o json: exit $rc: $(head -c 400 <<<"$out")"
fi
exit $fail
