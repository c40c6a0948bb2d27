#!/usr/bin/env bash
# Issue 13: errors that mislead. `flytecd aply` said "A subcommand is required";
# `get overrides -p flytesnack` (a typo) printed platform defaults and exited 0.
# Usage: typos.sh FLYTECD_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
fail=0
bad() { echo "FAIL $*"; fail=1; }
ok() { echo "ok $*"; }
out="$("$bin" aply 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && grep -q "unknown command 'aply'; did you mean 'apply'?" <<<"$out" && ok "aply: names the typo and suggests apply" || bad "aply: exit $rc: $out"
out="$("$bin" get overides 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && grep -q "did you mean 'overrides'" <<<"$out" && ok "get overides: suggests overrides" || bad "get overides: exit $rc: $out"
out="$("$bin" get overrides -p flytesnack --repo "$src/repo-layout-example" 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && grep -q "project 'flytesnack' is not declared" <<<"$out" && grep -q "did you mean 'flytesnacks'" <<<"$out" &&
  ok "get overrides -p typo: exit 1 with a suggestion" || bad "get overrides -p flytesnack: exit $rc: $(head -5 <<<"$out")"
out="$("$bin" get overrides -p flytesnacks -d prod --repo "$src/repo-layout-example" 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && grep -q "domain 'prod' is not one of the configured domains" <<<"$out" && ok "unknown domain: exit 1" || bad "get overrides -d prod: exit $rc: $(head -5 <<<"$out")"
"$bin" get overrides -p flytesnacks --repo "$src/repo-layout-example" > /dev/null 2>&1 && ok "a declared project still works" || bad "get overrides -p flytesnacks failed"
"$bin" man > /dev/null 2>&1 && ok "hidden commands still run" || bad "flytecd man failed"
exit $fail
