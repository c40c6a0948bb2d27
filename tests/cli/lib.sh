# Shared preamble of the CLI test scripts (sourced, never run): a temporary directory removed on
# exit with every process whose pid is in pids, ok/bad reporting into $fail, a free loopback
# port, a standalone emulator, a Git remote holding the example repository, and a daemon whose
# status is polled. Expects $bin (the flytecd binary) and $src (the source tree) to be set first.
example="$src/repo-layout-example"
tmp="$(mktemp -d)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT
fail=0
bad() { echo "FAIL $*"; fail=1; }
ok() { echo "ok $*"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# wait_port PORT...: waits (10 s at most each) until every port accepts connections; 1 if one
# never does.
wait_port() {
  local p
  for p in "$@"; do
    for _ in $(seq 1 100); do (echo > /dev/tcp/127.0.0.1/$p) 2>/dev/null && continue 2; sleep 0.1; done
    return 1
  done
}
# jq_ EXPR: prints the python expression EXPR over the JSON document on stdin (d).
jq_() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
# start_emulator: a standalone emulator on a free port ($eport), its database in $tmp; waits until
# it accepts connections (1 if it never does) and sets target=(the flags that point a command at
# it).
start_emulator() {
  eport="$(free_port)"
  "$bin" emulator --listen "127.0.0.1:$eport" --db "$tmp/admin.db" > "$tmp/emulator.log" 2>&1 &
  pids+=($!)
  target=(--admin-endpoint "dns:///127.0.0.1:$eport" --insecure --log-level warn)
  wait_port "$eport"
}
# named_emulator NAME [PORT]: one of several standalone emulators, on PORT or a free port
# (port[NAME]), its database $tmp/admin-NAME.db, its pid epid[NAME]; waits until it accepts
# connections.
declare -A port epid
named_emulator() {
  local c="$1"
  port[$c]="${2:-$(free_port)}"
  "$bin" emulator --listen "127.0.0.1:${port[$c]}" --db "$tmp/admin-$c.db" > "$tmp/emulator-$c.log" 2>&1 &
  epid[$c]=$!
  pids+=($!)
  wait_port "${port[$c]}" || bad "emulator $c did not start"
}
# start_receiver: a notification receiver on a free port ($rport); every POST body it gets is one
# line of $tmp/received.jsonl.
start_receiver() {
  rport="$(free_port)"
  python3 "$(dirname "${BASH_SOURCE[0]}")/receiver.py" "$rport" "$tmp/received.jsonl" > "$tmp/receiver.log" 2>&1 &
  pids+=($!)
  wait_port "$rport"
}

# Git, isolated from the user's configuration. g runs git in the work tree $tmp/work as the
# author in git_user.
git_env=(env -i PATH="$PATH" HOME="$tmp" GIT_CONFIG_NOSYSTEM=1 LC_ALL=C)
git_user=(-c user.name=t -c user.email=t@e)
g() { "${git_env[@]}" git -C "$tmp/work" "${git_user[@]}" "$@"; }
# git_remote [NAME EMAIL [MESSAGE]]: a bare remote $tmp/remote.git whose main is one commit
# (MESSAGE, "example" by default) of the example repository, made in $tmp/work by NAME <EMAIL>
# (t <t@e> by default, kept in git_user for later commits).
git_remote() {
  if [[ $# -ge 2 ]]; then git_user=(-c user.name="$1" -c user.email="$2"); fi
  mkdir -p "$tmp/work"; cp -r "$example/." "$tmp/work/"
  "${git_env[@]}" git init -q --bare -b main "$tmp/remote.git"
  g init -q -b main && g add -A && g commit -q -m "${3:-example}" && g push -q "$tmp/remote.git" main:main || bad "git setup"
}

# daemon_config INTERVAL [YAML]: writes $tmp/flytecd.yaml, a daemon on the Git remote polling every
# INTERVAL, its state in $tmp/state, its HTTP server on $hport with the sync token in $tmp/token,
# and the YAML lines after that.
daemon_config() {
  cat > "$tmp/flytecd.yaml" <<YAML
stateDir: $tmp/state
interval: $1
git: {url: "file://$tmp/remote.git", ref: main}
http: {listen: "127.0.0.1:$hport", syncTokenFile: "$tmp/token"}
${2:-}
YAML
}
# The daemon: start_daemon runs `flytecd run` on $tmp/flytecd.yaml against $target (if set),
# appending to $tmp/run.log, its pid in $daemon; stop_daemon ends it.
start_daemon() {
  "$bin" run --config "$tmp/flytecd.yaml" "${target[@]}" >> "$tmp/run.log" 2>&1 &
  daemon=$!; pids+=($daemon)
}
stop_daemon() { kill "$daemon"; wait "$daemon" 2>/dev/null; }
# wait_for EXPR: waits (30 s at most) until the python expression EXPR over the status document d
# (as the script's status_json prints it) is true.
wait_for() {
  for _ in $(seq 1 150); do
    [[ "$(status_json | jq_ "$1" 2>/dev/null)" == True ]] && return 0
    sleep 0.2
  done
  return 1
}
