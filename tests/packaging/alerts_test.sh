#!/usr/bin/env bash
# The PrometheusRule's alerts, evaluated by promtool (Debian's prometheus package): the rule groups
# are extracted from the rendered objects (helm template of the chart, kubectl kustomize of the
# base), checked with `promtool check rules`, and each alert's unit tests under
# tests/packaging/alerts/ (input series that make it fire and that keep it silent) are run with
# `promtool test rules` against both renders. Every alert must be fired by some test.
#   tests/packaging/alerts_test.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
command -v promtool >/dev/null 2>&1 \
  || { echo "FAIL: promtool not found: run packaging/setup-debian.sh --tests (Debian package prometheus)" >&2; exit 1; }
tools=packaging/k8s-tools/bin
[[ -x "$tools/helm" && -x "$tools/kubectl" ]] \
  || { echo "FAIL: $tools/helm or kubectl missing: run packaging/setup-debian.sh --tests" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$tools/helm" template flytecd packaging/helm/flytecd --namespace flytecd >"$tmp/helm.yaml"
"$tools/kubectl" kustomize packaging/kustomize/base >"$tmp/kustomize.yaml"
tests=(tests/packaging/alerts/*_test.yaml)
for render in helm kustomize; do
  mkdir -p "$tmp/$render"
  # The PrometheusRule's spec.groups is a Prometheus rule file's content.
  python3 - "$tmp/$render.yaml" "$tmp/$render/rules.yaml" <<'PY'
import sys, yaml
rules = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "PrometheusRule"]
assert len(rules) == 1, f"expected one PrometheusRule, found {len(rules)}"
yaml.safe_dump({"groups": rules[0]["spec"]["groups"]}, open(sys.argv[2], "w"), sort_keys=False)
PY
  promtool check rules "$tmp/$render/rules.yaml" | sed "s|$tmp/||"
  cp "${tests[@]}" "$tmp/$render/"
  (cd "$tmp/$render" && promtool test rules "${tests[@]##*/}") >"$tmp/$render.out" 2>&1 \
    || { cat "$tmp/$render.out"; echo "FAIL: promtool test rules ($render render)"; exit 1; }
  echo "$render: promtool test rules: $(grep -c SUCCESS "$tmp/$render.out") of ${#tests[@]} files SUCCESS"
done
# Every alert of the rules has a test in which it fires.
python3 - "$tmp/helm/rules.yaml" "${tests[@]}" <<'PY'
import sys, yaml
alerts = {r["alert"] for g in yaml.safe_load(open(sys.argv[1]))["groups"] for r in g["rules"] if "alert" in r}
fired = {a["alertname"] for f in sys.argv[2:] for t in yaml.safe_load(open(f))["tests"]
         for a in t.get("alert_rule_test", []) if a.get("exp_alerts")}
missing = alerts - fired
assert not missing, f"alerts without a test that fires them: {sorted(missing)}"
print(f"alerts fired and kept silent by tests: {', '.join(sorted(alerts))}")
PY
echo "alerts: ok"
