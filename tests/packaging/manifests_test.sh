#!/usr/bin/env bash
# Kubernetes manifests: renders the kustomize base with kubectl (kustomize v5) and checks it; checks
# the Helm chart as far as is possible without helm (not installable here): Chart.yaml and
# values.yaml parse, the chart's templates declare the same kinds as the base, the Grafana
# dashboards are the same file. The chart's templates are NOT rendered by this script.
#   tests/packaging/manifests_test.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
if ! command -v kubectl >/dev/null 2>&1; then
  echo "FAIL: kubectl not found. It is not in Debian's archive: install the kubectl binary" \
       "(v1.27+, bundles kustomize v5) on PATH, see https://kubernetes.io/docs/tasks/tools/" >&2
  exit 1
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
kubectl kustomize packaging/kustomize/base >"$out"
kinds() { grep -E '^kind: ' | sed 's/^kind: //' | sort -u; }
base_kinds=$(kinds <"$out")
echo "kustomize base renders: $(echo $base_kinds)"
expected="ConfigMap Deployment PrometheusRule Role RoleBinding Service ServiceAccount ServiceMonitor"
[[ "$(echo $base_kinds)" == "$expected" ]] || { echo "FAIL: base kinds differ from: $expected"; exit 1; }
python3 - "$out" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
by = {(d["kind"], d["metadata"]["name"]): d for d in docs}
dep = by[("Deployment", "flytecd")]
assert all(d["metadata"].get("namespace") == "flytecd" for d in docs), "namespace not applied"
pod = dep["spec"]["template"]["spec"]
c = pod["containers"][0]
assert pod["securityContext"]["runAsNonRoot"] is True
assert pod["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault"
sc = c["securityContext"]
assert sc["readOnlyRootFilesystem"] and not sc["allowPrivilegeEscalation"] and sc["capabilities"]["drop"] == ["ALL"]
assert c["livenessProbe"]["httpGet"]["path"] == "/healthz" and c["readinessProbe"]["httpGet"]["path"] == "/readyz"
assert c["args"] == ["run", "--config", "/etc/flytecd/config.yaml"]
assert not any("valueFrom" in e and "secretKeyRef" in e["valueFrom"] for e in c.get("env", [])), "secrets as env"
# The generated config ConfigMap (hash-suffixed name) is the one the Deployment mounts.
cm = [v for v in pod["volumes"] if v["name"] == "config"][0]["configMap"]["name"]
cfg = yaml.safe_load(by[("ConfigMap", cm)]["data"]["config.yaml"])
assert cfg["kubernetes"]["leaderElection"]["enabled"] is True
assert dep["spec"]["replicas"] == 2
rules = [r["alert"] for g in by[("PrometheusRule", "flytecd")]["spec"]["groups"] for r in g["rules"]]
assert {"FlytecdSyncFailing", "FlytecdDriftPresent", "FlytecdRevisionStale"} <= set(rules), rules
role = by[("Role", "flytecd-leader-election")]
assert any("leases" in r["resources"] for r in role["rules"])
import json
json.loads(by[("ConfigMap", "flytecd-grafana-dashboard")]["data"]["flytecd.json"])
print("kustomize base: objects, security context, probes, config, rules: ok")
PY
chart=packaging/helm/flytecd
python3 - "$chart" <<'PY'
import sys, yaml
chart = yaml.safe_load(open(sys.argv[1] + "/Chart.yaml"))
assert chart["apiVersion"] == "v2" and chart["name"] == "flytecd", chart
values = yaml.safe_load(open(sys.argv[1] + "/values.yaml"))
for k in ("image", "config", "secrets", "leaderElection", "configMapMode", "serviceMonitor", "prometheusRule", "grafanaDashboard"):
    assert k in values, k
print("chart: Chart.yaml and values.yaml parse")
PY
chart_kinds=$(cat "$chart"/templates/*.yaml | kinds)
[[ "$(echo $chart_kinds)" == "$expected" ]] || { echo "FAIL: chart kinds '$(echo $chart_kinds)' differ from the base's"; exit 1; }
cmp "$chart/dashboards/flytecd.json" packaging/kustomize/base/grafana-dashboard.json \
  || { echo "FAIL: the chart's and the base's Grafana dashboards differ"; exit 1; }
echo "chart: same kinds as the base, same dashboard (templates not rendered: no helm in CI)"
echo "manifests: ok"
