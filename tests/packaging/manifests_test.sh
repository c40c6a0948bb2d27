#!/usr/bin/env bash
# Kubernetes manifests, checked with the real tools pinned by packaging/k8s-tools/ (Helm 3.17,
# kubectl 1.31 with kustomize v5; packaging/setup-debian.sh unpacks them to packaging/k8s-tools/bin):
#   - kubectl kustomize renders packaging/kustomize/base, whose objects are checked;
#   - helm lint --strict; helm template with the default values, with everything switched on
#     (leader election, ConfigMap mode, every Secret, every webhook key) and with the Secrets off;
#   - the chart's default render is the base: same kinds, security contexts, probes, args, mounts,
#     RBAC rules, config keys and values, alert rules, service and scrape endpoint, dashboard;
#   - replicaCount > 1 without leader election is refused, a single replica without it renders.
#   tests/packaging/manifests_test.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
tools=packaging/k8s-tools/bin
for t in helm kubectl; do
  [[ -x "$tools/$t" ]] || { echo "FAIL: $tools/$t missing: run packaging/setup-debian.sh --tests" \
                                 "(it installs the pinned Helm and kubectl from packaging/k8s-tools)" >&2; exit 1; }
done
helm="$tools/helm"
kubectl="$tools/kubectl"
echo "tools: helm $("$helm" version --template '{{.Version}}'), kubectl $("$kubectl" version --client | sed -n 's/^Client Version: //p')"
chart=packaging/helm/flytecd
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$kubectl" kustomize packaging/kustomize/base >"$tmp/base.yaml"
kinds() { grep -E '^kind: ' | sed 's/^kind: //' | sort -u; }
base_kinds=$(kinds <"$tmp/base.yaml")
echo "kustomize base renders: $(echo $base_kinds)"
expected="ConfigMap Deployment PrometheusRule Role RoleBinding Service ServiceAccount ServiceMonitor"
[[ "$(echo $base_kinds)" == "$expected" ]] || { echo "FAIL: base kinds differ from: $expected"; exit 1; }

"$helm" lint --strict "$chart" >"$tmp/lint.txt" 2>&1 || { cat "$tmp/lint.txt"; echo "FAIL: helm lint --strict"; exit 1; }
echo "helm lint --strict: $(tail -1 "$tmp/lint.txt")"
# The licence (issue 21): the chart and the container image name Apache-2.0, the text is in the tree.
grep -q 'artifacthub.io/license: Apache-2.0' "$chart/Chart.yaml" || { echo "FAIL: the chart names no licence"; exit 1; }
grep -q 'org.opencontainers.image.licenses="Apache-2.0"' packaging/docker/Dockerfile || { echo "FAIL: the image names no licence"; exit 1; }
grep -q 'Apache License' packaging/LICENSE && grep -q 'Version 2.0, January 2004' packaging/LICENSE || { echo "FAIL: packaging/LICENSE is not the Apache-2.0 text"; exit 1; }
echo "licence: Apache-2.0 in the chart, the image labels and packaging/LICENSE"
render() { "$helm" template flytecd "$chart" --namespace flytecd "$@"; }
render >"$tmp/default.yaml"
render --set configMapMode.enabled=true \
  --set webhooks.githubSecretKey=github-secret,webhooks.gitlabTokenKey=gitlab-token \
  --set webhooks.genericSecretKey=generic-secret,webhooks.syncTokenKey=sync-token >"$tmp/full.yaml"
render --set secrets.git.secretName=,secrets.flyteadmin.secretName= \
  --set secrets.registry.secretName=,secrets.webhook.secretName= >"$tmp/nosecrets.yaml"
render --set replicaCount=1,leaderElection.enabled=false >"$tmp/single.yaml"
if render --set replicaCount=2,leaderElection.enabled=false >"$tmp/refused.yaml" 2>"$tmp/refused.err"; then
  echo "FAIL: helm template rendered replicaCount=2 without leader election"; exit 1
fi
grep -q 'replicaCount > 1 needs leaderElection.enabled=true' "$tmp/refused.err" \
  || { cat "$tmp/refused.err"; echo "FAIL: the refusal does not say why"; exit 1; }
echo "helm template: replicaCount=2 without leader election refused: $(grep -o 'replicaCount > 1.*' "$tmp/refused.err")"

python3 - "$tmp" <<'PY'
import json, sys, yaml
tmp = sys.argv[1]
def load(name):
    docs = [d for d in yaml.safe_load_all(open(f"{tmp}/{name}.yaml")) if d]
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}
def fail(msg):
    print("FAIL: " + msg); sys.exit(1)
def check(cond, msg):
    if not cond: fail(msg)

# --- the kustomize base on its own
base = load("base")
dep = base[("Deployment", "flytecd")]
check(all(d["metadata"].get("namespace") == "flytecd" for d in base.values()), "base: namespace not applied")
pod = dep["spec"]["template"]["spec"]
c = pod["containers"][0]
check(pod["securityContext"]["runAsNonRoot"] is True, "base: runAsNonRoot")
check(pod["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault", "base: seccomp")
sc = c["securityContext"]
check(sc["readOnlyRootFilesystem"] and not sc["allowPrivilegeEscalation"] and sc["capabilities"]["drop"] == ["ALL"],
      "base: container security context")
check(c["livenessProbe"]["httpGet"]["path"] == "/healthz" and c["readinessProbe"]["httpGet"]["path"] == "/readyz", "base: probes")
check(c["args"] == ["run", "--config", "/etc/flytecd/config.yaml"], "base: args")
check(not any("valueFrom" in e and "secretKeyRef" in e["valueFrom"] for e in c.get("env", [])), "base: secrets as env")
def config_of(objs, dep):
    pod = dep["spec"]["template"]["spec"]
    cm = [v for v in pod["volumes"] if v["name"] == "config"][0]["configMap"]["name"]
    check(("ConfigMap", cm) in objs, f"the Deployment mounts ConfigMap {cm}, which is not rendered")
    return yaml.safe_load(objs[("ConfigMap", cm)]["data"]["config.yaml"])
base_cfg = config_of(base, dep)
check(base_cfg["kubernetes"]["leaderElection"]["enabled"] is True, "base: leader election")
check(dep["spec"]["replicas"] == 2, "base: replicas")
def rules(objs):
    return [r for (k, _), o in objs.items() if k == "PrometheusRule" for g in o["spec"]["groups"] for r in g["rules"]]
check({r["alert"] for r in rules(base)} == {"FlytecdSyncFailing", "FlytecdDriftPresent", "FlytecdRevisionStale", "FlytecdNoLeader"},
      f"base: alerts {[r['alert'] for r in rules(base)]}")
check(any("leases" in r["resources"] for r in base[("Role", "flytecd-leader-election")]["rules"]), "base: lease RBAC")
json.loads(base[("ConfigMap", "flytecd-grafana-dashboard")]["data"]["flytecd.json"])
print("kustomize base: objects, security context, probes, config, rules: ok")

# --- the chart's default render against the base
helm = load("default")
def kinds(objs): return sorted({k for k, _ in objs})
check(kinds(helm) == kinds(base), f"kinds: chart {kinds(helm)} base {kinds(base)}")
def one(objs, kind, suffix=""):
    found = [o for (k, n), o in objs.items() if k == kind and n.endswith(suffix)]
    check(len(found) == 1, f"expected one {kind} *{suffix}, found {len(found)}")
    return found[0]
hdep = one(helm, "Deployment")
hpod = hdep["spec"]["template"]["spec"]
hc = hpod["containers"][0]
def same(what, a, b):
    check(a == b, f"{what} differs:\n  chart: {a}\n  base:  {b}")
same("replicas", hdep["spec"]["replicas"], dep["spec"]["replicas"])
same("strategy", hdep["spec"]["strategy"], dep["spec"]["strategy"])
same("pod securityContext", hpod["securityContext"], pod["securityContext"])
same("terminationGracePeriodSeconds", hpod["terminationGracePeriodSeconds"], pod["terminationGracePeriodSeconds"])
for k in ("securityContext", "livenessProbe", "readinessProbe", "startupProbe", "args", "env", "ports", "resources", "imagePullPolicy"):
    same("container " + k, hc.get(k), c.get(k))
same("image", hc["image"], c["image"])
def mounts(pod):
    vols = {v["name"]: v for v in pod["volumes"]}
    out = {}
    for m in pod["containers"][0]["volumeMounts"]:
        v = dict(vols[m["name"]]); v.pop("name")
        if "configMap" in v: v = {"configMap": "(the config)"}
        out[m["mountPath"]] = (v, m.get("subPath"), m.get("readOnly", False))
    return out
same("volume mounts (path -> volume, subPath, readOnly)", mounts(hpod), mounts(pod))
def role_rules(objs, suffix):
    return one(objs, "Role", suffix)["rules"]
same("leader-election Role rules (RBAC verbs)", role_rules(helm, "-leader-election"), role_rules(base, "-leader-election"))
same("applied-record Role rules (RBAC verbs)", role_rules(helm, "-applied-record"), role_rules(base, "-applied-record"))
# create cannot be limited by resourceNames; get/update are, to the record; events: create only.
same("applied-record RBAC", {(tuple(r["resources"]), tuple(r.get("resourceNames", []))): r["verbs"] for r in role_rules(base, "-applied-record")},
     {(("configmaps",), ()): ["create"], (("configmaps",), ("flytecd-applied-revision",)): ["get", "update"], (("events",), ()): ["create"]})
for suffix in ("-leader-election", "-applied-record"):
    rb, brb = one(helm, "RoleBinding", suffix), one(base, "RoleBinding", suffix)
    same("RoleBinding roleRef " + suffix, (rb["roleRef"]["kind"], rb["roleRef"]["name"]), (brb["roleRef"]["kind"], brb["roleRef"]["name"]))
    same("RoleBinding subject " + suffix, [(s["kind"], s["name"]) for s in rb["subjects"]], [(s["kind"], s["name"]) for s in brb["subjects"]])
same("ServiceAccount automount", one(helm, "ServiceAccount").get("automountServiceAccountToken", True),
     one(base, "ServiceAccount").get("automountServiceAccountToken", True))
hcfg = config_of(helm, hdep)
def flat(d, p=""):  # {"a": {"b": 1}} -> {"a.b": 1}
    out = {}
    for k, v in d.items():
        out.update(flat(v, p + k + ".") if isinstance(v, dict) else {p + k: v})
    return out
same("config keys", sorted(flat(hcfg)), sorted(flat(base_cfg)))
same("config values", flat(hcfg), flat(base_cfg))
same("alert rules", rules(helm), rules(base))
hs, bs = one(helm, "Service"), one(base, "Service")
same("Service ports", hs["spec"]["ports"], bs["spec"]["ports"])
same("ServiceMonitor endpoints", one(helm, "ServiceMonitor")["spec"]["endpoints"], one(base, "ServiceMonitor")["spec"]["endpoints"])
hdash, bdash = one(helm, "ConfigMap", "-grafana-dashboard"), one(base, "ConfigMap", "-grafana-dashboard")
same("dashboard", json.loads(hdash["data"]["flytecd.json"]), json.loads(bdash["data"]["flytecd.json"]))
same("dashboard sidecar label", hdash["metadata"]["labels"].get("grafana_dashboard"), bdash["metadata"]["labels"].get("grafana_dashboard"))
sel = hdep["spec"]["selector"]["matchLabels"]
check(all(hdep["spec"]["template"]["metadata"]["labels"].get(k) == v for k, v in sel.items()), "chart: selector does not match the pod")
check(hs["spec"]["selector"] == sel, "chart: Service selector differs from the Deployment's")
print(f"chart (default values) = kustomize base: {len(helm)} objects, kinds, security contexts, probes, "
      f"mounts, RBAC, {len(flat(hcfg))} config keys, {len(rules(helm))} alerts, service, dashboard: ok")

# --- everything switched on
full = load("full")
fdep = one(full, "Deployment")
fcfg = config_of(full, fdep)
fm = mounts(fdep["spec"]["template"]["spec"])
for name in ("git", "flyteadmin", "registry", "webhook"):
    path = f"/etc/flytecd/secrets/{name}"
    check(path in fm and fm[path][0]["secret"]["secretName"] == f"flytecd-{name}" and fm[path][2], f"full: Secret {name} not mounted read-only")
    check(fm[path][0]["secret"]["defaultMode"] == 0o400, f"full: Secret {name} mode")
for key, file in (("githubSecretFile", "github-secret"), ("gitlabTokenFile", "gitlab-token"),
                  ("genericSecretFile", "generic-secret"), ("syncTokenFile", "sync-token")):
    same("full: http." + key, fcfg["http"].get(key), f"/etc/flytecd/secrets/webhook/{file}")
check(fcfg["kubernetes"]["configMap"]["enabled"] is True and fcfg["kubernetes"]["leaderElection"]["enabled"] is True, "full: kubernetes modes")
cmrole = one(full, "Role", "-configmap-mode")
check(cmrole["metadata"].get("namespace") == "flyte", "full: the ConfigMap-mode Role is not in FlyteAdmin's namespace")
verbs = {(tuple(r["resources"]), tuple(r.get("resourceNames", []))): r["verbs"] for r in cmrole["rules"]}
same("full: ConfigMap-mode RBAC", verbs, {(("configmaps",), ()): ["create"], (("configmaps",), ("flyte-admin-overrides",)): ["get", "patch"],
                                         (("deployments",), ("flyteadmin",)): ["get", "patch"]})
cmrb = one(full, "RoleBinding", "-configmap-mode")
check(cmrb["metadata"].get("namespace") == "flyte" and cmrb["subjects"][0]["namespace"] == "flytecd", "full: ConfigMap-mode RoleBinding")
check(fdep["spec"]["template"]["metadata"]["annotations"]["checksum/config"] != hdep["spec"]["template"]["metadata"]["annotations"]["checksum/config"],
      "full: a changed config does not change the pod's checksum/config (pods would not restart)")
print("chart (ConfigMap mode, leader election, every Secret, every webhook key): config, mounts, RBAC: ok")

# --- Secrets off, single replica without leader election
ns = load("nosecrets")
nm = mounts(one(ns, "Deployment")["spec"]["template"]["spec"])
check(not any(p.startswith("/etc/flytecd/secrets") for p in nm), f"no Secrets: still mounted {sorted(nm)}")
single = load("single")
check(not any(k in ("Role", "RoleBinding") and n.endswith("-leader-election") for k, n in single),
      "single replica: leader-election RBAC rendered without leader election")
check(("Role", "flytecd-applied-record") in single and ("RoleBinding", "flytecd-applied-record") in single,
      "single replica: the applied-record RBAC is needed without leader election too")
check(config_of(single, one(single, "Deployment"))["kubernetes"]["appliedRecord"]["enabled"] is True,
      "single replica: the applied record is on in config")
check(config_of(single, one(single, "Deployment"))["kubernetes"]["leaderElection"]["enabled"] is False, "single replica: leader election in config")
print("chart (no Secrets; one replica without leader election): ok")
PY
echo "manifests: ok"
