#!/usr/bin/env bash
# Dependency rules of the tree (DESIGN.md §1, issue 11):
#   includes  sources/ and sinks/ include nothing from daemon/ but its base layer daemon/common/
#   sha256    sha256_hex has exactly one definition in daemon/, sources/ and sinks/
set -euo pipefail
cd "$2"
case "$1" in
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
  *)
    echo "usage: $0 includes|sha256 SOURCE_DIR" >&2
    exit 2
    ;;
esac
