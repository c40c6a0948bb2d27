# Shared pieces of the benchmark scripts (sourced, never run). Expects $work (the scratch
# directory) to be set first.

# bench_emulator FLYTECD: a standalone emulator of that binary on a random loopback port ($port),
# its database in $work, its pid in $emu_pid; waits (10 s at most) until it accepts connections.
bench_emulator() {
  port=$(( 20000 + RANDOM % 20000 ))
  "$1" emulator --listen "127.0.0.1:$port" --db "$work/admin.db" --log-level warn &
  emu_pid=$!
  for _ in $(seq 1 100); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
}

# bench_registrations N NAME WIDTH PACKAGE: writes $work/repo/project.yaml (the project "bench")
# and prints N WorkflowRegistration documents of PACKAGE in bench/development, NAME-<i> at version
# v<i> (i in WIDTH digits), activate: none.
bench_registrations() {
  cat > "$work/repo/project.yaml" <<YAML
apiVersion: flytecd/v1
kind: Project
id: bench
name: bench
YAML
  local i
  for i in $(seq 1 "$1"); do
    [[ $i -gt 1 ]] && echo "---"
    printf "apiVersion: flytecd/v1\nkind: WorkflowRegistration\nmetadata: {name: $2-%0${3}d}\n" "$i"
    printf "project: bench\ndomain: development\nversion: v%0${3}d\n" "$i"
    printf 'package: %s\nactivate: none\n' "$4"
  done
}

# figure NAME VALUE UNIT [INPUT]: one figure for tests/bench/bench_all.sh's table, appended to the
# file $FLYTECD_FIGURES names (tab-separated) when it is set; nothing otherwise.
figure() {
  if [[ -n "${FLYTECD_FIGURES:-}" ]]; then
    printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4:-}" >> "$FLYTECD_FIGURES"
  fi
  return 0
}
