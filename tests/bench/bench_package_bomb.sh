#!/usr/bin/env bash
# Package-bomb memory benchmark (prints figures; never a pass/fail test).
#
#   tests/bench/bench_package_bomb.sh [BUILD_DIR_OR_FLYTECD] [MEMBERS] [MIB_EACH] [REGISTRATIONS]
#
# Builds a hostile `pyflyte package` archive: MEMBERS (default 40) entity files of MIB_EACH
# (default 60) MiB of zeros each, gzip-compressed to a few MB (each member is under the 64 MiB
# per-entry limit, so only a total bound stops it). REGISTRATIONS (default 3) WorkflowRegistration
# documents register it under different names, and one `flytecd apply` runs them against a
# standalone emulator (its own process, so flytecd's peak RSS is its own). Prints flytecd's peak
# RSS (/usr/bin/time) and what each registration reported.
#
#   BOMB=decode NODES=4000000 tests/bench/bench_package_bomb.sh [BUILD_DIR_OR_FLYTECD]
#
# instead registers a protobuf decode bomb (tests/cli/decode_bomb.py: one _2.pb of NODES empty
# workflow nodes, 2 bytes each on the wire; 4,000,000 are an 8 KB .tgz), and also times
# `flytecd compile` on it.
set -euo pipefail
bin="${1:-build}"; members="${2:-40}"; mib="${3:-60}"; n="${4:-3}"
[[ -d "$bin" ]] && bin="$bin/flytecd"
work="$(mktemp -d /tmp/flytecd-bench-bomb.XXXXXX)"
trap 'kill "${emu_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mkdir -p "$work/bomb" "$work/repo/packages" "$work/repo/registrations"
if [[ "${BOMB:-}" == decode ]]; then
  python3 "$(dirname "${BASH_SOURCE[0]}")/../cli/decode_bomb.py" "$work/repo/packages/bomb.tgz" \
    "${NODES:-4000000}"
else
  for i in $(seq -w 1 "$members"); do truncate -s "${mib}M" "$work/bomb/${i}_big_1.pb"; done
  # Sparse on disk, but tar stores every zero: the decompressed size is members x MiB.
  tar -C "$work/bomb" -cf - . | gzip -6 > "$work/repo/packages/bomb.tgz"
fi
rm -rf "$work/bomb"
size=$(stat -c %s "$work/repo/packages/bomb.tgz")
bench_registrations "$n" bomb 2 packages/bomb.tgz > "$work/repo/registrations/bomb.yaml"

bench_emulator "$bin"

rc=0
/usr/bin/time -f "%e %M" -o "$work/time" "$bin" apply --repo "$work/repo" \
  --state-dir "$work/state" --admin-endpoint "127.0.0.1:$port" --insecure --log-level warn \
  > "$work/out" 2>&1 || rc=$?
read -r secs rss < <(tail -1 "$work/time")
if [[ "${BOMB:-}" == decode ]]; then
  echo "decode bomb: ${NODES:-4000000} empty workflow nodes, $((size / 1024)) KiB compressed;" \
    "$n registrations in one apply"
  crc=0
  /usr/bin/time -f "%e %M" -o "$work/ctime" "$bin" compile "$work/repo/packages/bomb.tgz" \
    > "$work/cout" 2>&1 || crc=$?
  read -r csecs crss < <(tail -1 "$work/ctime")
  echo "flytecd compile: exit $crc, wall ${csecs} s, peak RSS $((crss / 1024)) MiB," \
    "$(wc -l < "$work/cout") lines: $(head -c 300 "$work/cout")"
else
  echo "package bomb: $members members x $mib MiB = $((members * mib)) MiB decompressed," \
    "$((size / 1024)) KiB compressed; $n registrations in one apply"
fi
echo "flytecd apply: exit $rc, wall ${secs} s, peak RSS $((rss / 1024)) MiB"
grep -E '^registration/' "$work/out" | cut -c1-400 || tail -20 "$work/out"
