#!/usr/bin/env bash
# A test whose tool is missing is reported as skipped, never as passed (tests/support/tools.hpp):
# with docker-registry off PATH, an OCI integration test exits 77 under ctest (SKIP_RETURN_CODE),
# fails with FLYTECD_REQUIRE_TOOLS=1, and warns and returns when the binary is run directly.
#
#   tests/support/skip_test.sh BUILD/tests/flytecd_unit_tests
set -uo pipefail
tests="${1:?usage: skip_test.sh FLYTECD_UNIT_TESTS}"
name="oci: a missing tag or repository is not_found, a path reference is invalid_input"
empty="$(mktemp -d)"
trap 'rm -rf "$empty"' EXIT
fail=0
run() { env -u FLYTECD_REQUIRE_TOOLS -u FLYTECD_UNDER_CTEST PATH="$empty" "$@" "$tests" "${name//,/\\,}" 2>&1; }

out="$(run FLYTECD_UNDER_CTEST=1)"; rc=$?
if [[ $rc -eq 77 && "$out" == *"SKIP: docker-registry is not installed"* ]]; then
  echo "ok: under ctest the test exits 77 (skipped) and names the tool"
else
  echo "FAIL: under ctest: exit $rc (expected 77): $out" >&2; fail=1
fi
out="$(run FLYTECD_UNDER_CTEST=1 FLYTECD_REQUIRE_TOOLS=1)"; rc=$?
if [[ $rc -ne 0 && $rc -ne 77 && "$out" == *"required tool missing"* ]]; then
  echo "ok: with FLYTECD_REQUIRE_TOOLS=1 it fails (exit $rc)"
else
  echo "FAIL: with FLYTECD_REQUIRE_TOOLS=1: exit $rc (expected a failure): $out" >&2; fail=1
fi
out="$(run)"; rc=$?
if [[ $rc -eq 0 && "$out" == *"SKIP: docker-registry"* ]]; then
  echo "ok: run directly it warns and returns, so the other tests still run"
else
  echo "FAIL: run directly: exit $rc (expected 0 with a warning): $out" >&2; fail=1
fi
exit $fail
