# Shared preamble of the CLI test scripts (sourced, never run): a temporary directory removed on
# exit with every process started through `spawn`, ok/bad reporting into $fail, a free loopback
# port, and a standalone emulator. Expects $bin (the flytecd binary) to be set first.
tmp="$(mktemp -d)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT
fail=0
bad() { echo "FAIL $*"; fail=1; }
ok() { echo "ok $*"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# start_emulator: a standalone emulator on a free port ($eport), its database in $tmp; waits until
# it accepts connections and sets target=(the flags that point a command at it).
start_emulator() {
  eport="$(free_port)"
  "$bin" emulator --listen "127.0.0.1:$eport" --db "$tmp/admin.db" > "$tmp/emulator.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 100); do (echo > /dev/tcp/127.0.0.1/$eport) 2>/dev/null && break; sleep 0.1; done
  target=(--admin-endpoint "dns:///127.0.0.1:$eport" --insecure --log-level warn)
}
