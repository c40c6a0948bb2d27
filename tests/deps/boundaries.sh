#!/usr/bin/env bash
# Dependency rules of the tree (DESIGN.md §1, issue 11):
#   includes  sources/ and sinks/ include nothing from daemon/ but its base layer daemon/common/
#   sha256    sha256_hex has exactly one definition in daemon/, sources/ and sinks/
#   layers    the folders of daemon/ (and sources/, sinks/ as wholes) include each other in one
#             direction only: the folder-level include graph has no cycle
#   dump      no JSON is dumped but through dump_json() (daemon/common/json_dump.hpp): a plain
#             nlohmann dump() throws on text that is not UTF-8 (issue 27)
#   unity     every test file of the unit-test binary wraps its code in its own namespace
#             (FLYTECD_UNITY_ID), so that the batched (unity) build cannot mix two files' names
set -euo pipefail
cd "$2"
case "$1" in
  unity)
    missing=""
    while IFS= read -r f; do
      grep -q '^namespace FLYTECD_UNITY_ID {' "$f" && grep -q '^}  // namespace FLYTECD_UNITY_ID$' "$f" ||
        missing+="$f"$'\n'
    done < <(find tests/unit tests/integration -name '*_test.cpp' | sort)
    if [[ -n "$missing" ]]; then
      echo "FAIL: test files whose code is not in 'namespace FLYTECD_UNITY_ID { ... }' (after the" >&2
      echo "includes; see tests/CMakeLists.txt):" >&2
      printf '%s' "$missing" >&2
      exit 1
    fi
    echo "ok: every test file keeps its names in its own namespace"
    ;;
  includes)
    if hits="$(grep -rn '#include "daemon/' sources sinks | grep -v 'daemon/common/')"; then
      echo "FAIL: sources/ or sinks/ include from daemon/ (only daemon/common/ is allowed):" >&2
      echo "$hits" >&2
      exit 1
    fi
    echo "ok: sources/ and sinks/ include only daemon/common/ from daemon/"
    ;;
  sha256)
    # A definition: a line at namespace level (not indented) that names sha256_hex followed by
    # "(" and does not end in ";" (a declaration), or a callable bound to that name.
    defs="$(grep -rnE --include='*.cpp' --include='*.hpp' --include='*.h' --include='*.cc' \
      '(^[^[:space:]/#].*[^[:alnum:]_]sha256_hex[[:space:]]*\(.*[^;[:space:]][[:space:]]*$)|((^|[^[:alnum:]_])sha256_hex[[:space:]]*=[^=])' \
      daemon sources sinks || true)"
    n="$(grep -c . <<<"$defs" || true)"
    echo "definitions of sha256_hex:"
    echo "$defs" | sed 's/^/  /'
    if [[ "$n" -ne 1 ]]; then
      echo "FAIL: expected exactly one definition of sha256_hex, found $n" >&2
      exit 1
    fi
    echo "ok: one sha256_hex"
    ;;
  layers)
    # One node per folder: daemon/<dir> (a file directly under daemon/ is its own node),
    # sources, sinks. An edge A B for each include from a file of A of a file of B (A != B).
    node() {
      case "$1" in
        daemon/*/*) local rest="${1#daemon/}"; echo "daemon/${rest%%/*}" ;;
        daemon/*) echo "${1%.*}" ;;
        sources/* | sinks/*) echo "${1%%/*}" ;;
      esac
    }
    edges=""
    while IFS=: read -r file inc; do
      from="$(node "$file")"
      to="$(node "$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"$inc")")"
      [[ -n "$to" && "$from" != "$to" ]] && edges+="$from $to"$'\n'
    done < <(grep -rHE '^#include "(daemon|sources|sinks)/' daemon sources sinks \
               --include='*.cpp' --include='*.hpp')
    edges="$(sort -u <<<"$edges" | grep .)"
    echo "$(wc -l <<<"$edges") folder-level include edges"
    if ! out="$(tsort <<<"$edges" 2>&1 >/dev/null)" || [[ -n "$out" ]]; then
      echo "FAIL: folders include each other (a cycle):" >&2
      echo "$out" >&2
      # Each loop tsort reports: the edges between its folders, with the includes that make them.
      awk '/contains a loop/ {g++; next} {sub(/^tsort: /, ""); print g, $0}' <<<"$out" |
        while read -r g n; do echo "$g $n"; done > "${TMPDIR:-/tmp}/flytecd-layers.$$"
      while read -r a b; do
        ga="$(awk -v n="$a" '$2 == n {print $1; exit}' "${TMPDIR:-/tmp}/flytecd-layers.$$")"
        gb="$(awk -v n="$b" '$2 == n {print $1; exit}' "${TMPDIR:-/tmp}/flytecd-layers.$$")"
        if [[ -n "$ga" && "$ga" == "$gb" ]]; then
          echo "  $a -> $b:" >&2
          grep -rlE "^#include \"$b/" "$a" "$a".* --include='*.cpp' --include='*.hpp' 2>/dev/null |
            head -3 | sed 's/^/      /' >&2 || true
        fi
      done <<<"$edges"
      rm -f "${TMPDIR:-/tmp}/flytecd-layers.$$"
      exit 1
    fi
    echo "ok: the folders of daemon/, sources/ and sinks/ include each other one way"
    ;;
  dump)
    # Any member call of dump( — `x.dump(`, `x->dump(`, also split over lines (`)\n .dump(`).
    if hits="$(grep -rnE --include='*.cpp' --include='*.hpp' --include='*.h' --include='*.cc' \
      '(\.|->)[[:space:]]*dump[[:space:]]*\(' daemon sources sinks |
      grep -v '^daemon/common/json_dump\.hpp:')"; then
      echo "FAIL: JSON dumped without dump_json() (throws on invalid UTF-8):" >&2
      echo "$hits" >&2
      exit 1
    fi
    echo "ok: every JSON dump in daemon/, sources/ and sinks/ goes through dump_json()"
    ;;
  *)
    echo "usage: $0 includes|sha256|layers|dump SOURCE_DIR" >&2
    exit 2
    ;;
esac
