#!/usr/bin/env bash
# YAML memory benchmark (prints figures; never a pass/fail test).
#
#   tests/bench/bench_yaml_memory.sh [BUILD_DIR_OR_FLYTECD]
#
# Generates the two 3.8 MB files of issue 27 item 5 (tests/cli/yaml_bombs.py), each alone in a
# repository, and runs `flytecd validate` on each under /usr/bin/time:
#   wide: 1,000 Overrides documents of 1,896 YAML nodes each (within every per-document and
#         per-file document bound; a 1,883-tag executionQueueAttributes list each);
#   many: 26,000 small Project documents of 53 nodes (over the 1,000 documents-per-file bound);
#   split: 520 files of one `wide` document each (985,920 nodes, within the revision's budget:
#         all accepted and held at once; the goal uses the largest file).
# Prints wall time, peak RSS, the goal (64 MiB + 20x the file) and validate's verdict.
set -euo pipefail
bin="${1:-build}"
[[ -d "$bin" ]] && bin="$bin/flytecd"
work="$(mktemp -d /tmp/flytecd-bench-yaml.XXXXXX)"
trap 'rm -rf "$work"' EXIT
python3 "$(dirname "${BASH_SOURCE[0]}")/../cli/yaml_bombs.py" "$work"
for case in wide many split; do
  file=$(ls -S "$work/$case"/*.yaml | sed -n 1p)  # sed reads all: no SIGPIPE
  size=$(stat -c %s "$file")
  rc=0
  /usr/bin/time -f "%e %M" -o "$work/time" "$bin" validate "$work/$case" > "$work/out" 2>&1 || rc=$?
  read -r secs rss < <(tail -1 "$work/time")
  goal=$(( (64 << 20) + 20 * size ))
  echo "$case: $(ls "$work/$case" | wc -l) file(s), largest $(basename "$file")" \
    "$((size / 1024)) KiB: validate exit $rc, wall ${secs} s," \
    "peak RSS $((rss / 1024)) MiB (goal <= $((goal >> 20)) MiB)"
  grep -v '^[[:space:]]*$' "$work/out" | head -3 | cut -c1-300
done
