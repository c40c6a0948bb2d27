#!/usr/bin/env bash
# Runs flytecd the way a user would on repo-layout-example/ and compares with committed goldens.
# Usage: golden.sh FLYTECD_BINARY SOURCE_DIR   (UPDATE_GOLDEN=1 rewrites the goldens)
set -euo pipefail
bin="$1"; src="$2"; repo="$src/repo-layout-example"; golden="$src/tests/golden"
fail=0
check() {  # name, command...
  local name="$1"; shift
  local out; out="$(cd "$src" && "$@" 2>&1)" || { echo "FAIL $name: exit $?"; echo "$out"; fail=1; return; }
  if [[ "${UPDATE_GOLDEN:-}" == 1 ]]; then printf '%s\n' "$out" > "$golden/$name"; echo "updated $name"; return; fi
  if ! diff -u "$golden/$name" <(printf '%s\n' "$out"); then echo "FAIL $name differs from golden"; fail=1; else echo "ok $name"; fi
}
check validate.txt "$bin" validate repo-layout-example
check overrides-flytesnacks.yaml "$bin" get overrides -p flytesnacks --repo repo-layout-example
check overrides-flytesnacks-development.yaml "$bin" get overrides -p flytesnacks -d development --repo repo-layout-example
check overrides-flytesnacks-development-my_wf.yaml "$bin" get overrides -p flytesnacks -d development --workflow core.flyte_basics.hello_world.my_wf --repo repo-layout-example
check overrides-ml-training-production-train_wf.yaml "$bin" get overrides -p ml-training -d production --workflow training.pipelines.train_model.train_wf --repo repo-layout-example
check overrides-data-eng-staging.json "$bin" get overrides -p data-eng -d staging -o json --repo repo-layout-example
# Exit codes: an invalid repository is 1 and reports file:line.
if "$bin" validate "$src/tests/corpus/bad/001-unclosed-double-quote" >/dev/null 2>&1; then echo "FAIL invalid repo exited 0"; fail=1; fi
"$bin" validate -o json repo >/dev/null 2>&1 && { echo "FAIL missing dir exited 0"; fail=1; }
exit $fail
