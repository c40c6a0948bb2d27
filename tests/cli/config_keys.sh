#!/usr/bin/env bash
# Issue 23 item 2: the README's table of configuration keys is the option schema's, as
# `flytecd config-keys` prints it; a key added to the schema and not to the README fails here.
# Usage: config_keys.sh FLYTECD_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
want="$("$bin" config-keys)" || { echo "FAIL flytecd config-keys exited $?"; exit 1; }
have="$(sed -n '/^<!-- config-keys:/,/^<!-- \/config-keys -->/p' "$src/README.md" | sed '1d;$d')"
[[ -n "$have" ]] || { echo "FAIL README.md has no <!-- config-keys: … --> block"; exit 1; }
if [[ "$want" != "$have" ]]; then
  echo "FAIL README.md's configuration keys differ from flytecd config-keys (regenerate the block):"
  diff <(echo "$want") <(echo "$have")
  exit 1
fi
rows=$(grep -c '^| `' <<<"$want")
((rows >= 40)) || { echo "FAIL only $rows keys in the schema"; exit 1; }
echo "ok README lists the $rows keys of the schema"
