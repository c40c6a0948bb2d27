#!/usr/bin/env bash
# A real scrape: Prometheus (Debian's prometheus package) on a free loopback port scrapes a running
# `flytecd run` (a local Git remote, the standalone FlyteAdmin emulator) with the target labels the
# ServiceMonitor gives (namespace, pod) and loads the PrometheusRule's alert rules. Then:
#   - flytecd_reconcile_total, flytecd_objects, flytecd_last_success_timestamp_seconds are queried
#     through Prometheus's HTTP API and carry the reconcile's values;
#   - every query of every panel of the Grafana dashboard (and its namespace variable) parses and
#     evaluates without error, instant and over a range, and every metric a panel or an alert
#     names is one flytecd exports;
#   - Prometheus evaluates the alert rules on the scraped series without error;
#   - `promtool check metrics` finds nothing wrong with /metrics.
# Bounded waits throughout. Usage: prometheus_scrape_test.sh FLYTECD_BINARY SOURCE_DIR
set -euo pipefail
bin="$1"; src="$2"
for t in prometheus promtool git python3 curl; do
  command -v "$t" >/dev/null 2>&1 || { echo "FAIL: $t not found: run packaging/setup-debian.sh --tests" >&2; exit 1; }
done
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail_with_logs() {
  echo "FAIL: $*"
  for f in "$tmp"/*.log; do echo "--- $f"; tail -20 "$f"; done
  exit 1
}
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() {  # seconds, description, command...
  local deadline=$((SECONDS + $1)) what="$2"; shift 2
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail_with_logs "timed out after $1 s waiting for $what"
    sleep 0.2
  done
}

# A Git remote holding the example repository under flyte/.
git="git -c user.name=t -c user.email=t@example.com -c init.defaultBranch=main"
$git init -q "$tmp/work"
cp -r "$src/repo-layout-example" "$tmp/work/flyte"
$git -C "$tmp/work" add -A && $git -C "$tmp/work" commit -qm initial
git clone -q --bare "$tmp/work" "$tmp/remote.git"

admin_port=$(free_port)
"$bin" emulator --listen "127.0.0.1:$admin_port" >"$tmp/emulator.log" 2>&1 &
pids+=($!)
http_port=$(free_port)
cat >"$tmp/config.yaml" <<YAML
stateDir: $tmp/state
interval: 1h
git: {url: file://$tmp/remote.git, ref: main, path: flyte}
admin: {endpoint: "dns:///127.0.0.1:$admin_port", insecure: true}
http: {listen: "127.0.0.1:$http_port"}
YAML
"$bin" run --config "$tmp/config.yaml" >"$tmp/flytecd.log" 2>&1 &
pids+=($!)
wait_for 60 "flytecd /readyz (first reconcile)" curl -fsS "http://127.0.0.1:$http_port/readyz"

curl -fsS "http://127.0.0.1:$http_port/metrics" >"$tmp/metrics.txt"
promtool check metrics <"$tmp/metrics.txt" >"$tmp/check-metrics.txt" 2>&1 \
  || { cat "$tmp/check-metrics.txt"; echo "FAIL: promtool check metrics on /metrics"; exit 1; }
echo "promtool check metrics: /metrics is clean ($(grep -c '^# TYPE' "$tmp/metrics.txt") families)"

# The PrometheusRule's groups, as a rule file.
python3 - "$src/packaging/kustomize/base/prometheusrule.yaml" "$tmp/rules.yaml" <<'PY'
import sys, yaml
rule = yaml.safe_load(open(sys.argv[1]))
yaml.safe_dump({"groups": rule["spec"]["groups"]}, open(sys.argv[2], "w"), sort_keys=False)
PY
prom_port=$(free_port)
cat >"$tmp/prometheus.yml" <<YAML
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [$tmp/rules.yaml]
scrape_configs:
  - job_name: flytecd
    static_configs:
      - targets: ["127.0.0.1:$http_port"]
        labels: {namespace: flytecd, pod: flytecd-0}
YAML
promtool check config "$tmp/prometheus.yml" >/dev/null
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
  --web.listen-address="127.0.0.1:$prom_port" >"$tmp/prometheus.log" 2>&1 &
pids+=($!)
prom="http://127.0.0.1:$prom_port"
wait_for 60 "Prometheus to be ready" curl -fsS "$prom/-/ready"
# Scraped (up == 1), at least twice (rates need two samples), rules evaluated once.
scraped() {
  curl -fsS "$prom/api/v1/query" --data-urlencode 'query=count_over_time(up{job="flytecd"}[1m]) >= 3 and up == 1' \
    | python3 -c 'import json, sys; sys.exit(0 if json.load(sys.stdin)["data"]["result"] else 1)'
}
wait_for 60 "Prometheus to scrape flytecd three times" scraped
evaluated() {
  curl -fsS "$prom/api/v1/rules" | python3 -c '
import json, sys
groups = json.load(sys.stdin)["data"]["groups"]
sys.exit(0 if groups and all(g["lastEvaluation"] > "0001" for g in groups) else 1)'
}
wait_for 30 "Prometheus to evaluate the alert rules" evaluated

python3 - "$prom" "$src" "$tmp/metrics.txt" <<'PY'
import json, re, sys, time, urllib.parse, urllib.request
prom, src, metrics_file = sys.argv[1:4]
def api(path, **params):
    url = f"{prom}{path}?{urllib.parse.urlencode(params)}"
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            body = json.load(r)
    except urllib.error.HTTPError as e:
        body = json.load(e)
    return body
def fail(msg):
    print("FAIL: " + msg); sys.exit(1)
def query(q):
    r = api("/api/v1/query", query=q)
    if r["status"] != "success": fail(f"query {q!r}: {r.get('errorType')}: {r.get('error')}")
    return r["data"]["result"]

# The three metrics the alerts and the dashboard rest on, with the reconcile's values.
rt = query('flytecd_reconcile_total{job="flytecd",namespace="flytecd",pod="flytecd-0"}')
by_result = {s["metric"].get("result"): float(s["value"][1]) for s in rt}
if by_result.get("success", 0) < 1: fail(f"flytecd_reconcile_total: no successful reconcile scraped: {by_result}")
objs = query('flytecd_objects{namespace="flytecd"}')
if not objs: fail("flytecd_objects: no series scraped")
total_objects = sum(float(s["value"][1]) for s in objs)
if total_objects < 1: fail(f"flytecd_objects: {total_objects} objects after a reconcile of the example repository")
ts = query('flytecd_last_success_timestamp_seconds{namespace="flytecd"}')
if len(ts) != 1: fail(f"flytecd_last_success_timestamp_seconds: {len(ts)} series")
age = time.time() - float(ts[0]["value"][1])
if not 0 <= age < 300: fail(f"flytecd_last_success_timestamp_seconds is {age:.0f} s old")
print(f"scraped: flytecd_reconcile_total {by_result}, flytecd_objects {len(objs)} series / {total_objects:.0f} objects, "
      f"flytecd_last_success_timestamp_seconds {age:.0f} s ago")

# Every metric name the dashboard or the alerts use is one flytecd exports.
exported = set()
for line in open(metrics_file):
    if line.startswith("# TYPE "):
        name, kind = line.split()[2:4]
        exported.add(name)
        if kind == "histogram": exported |= {name + "_bucket", name + "_sum", name + "_count"}
dash = json.load(open(f"{src}/packaging/kustomize/base/grafana-dashboard.json"))
rules = [r["query"] for g in json.load(urllib.request.urlopen(f"{prom}/api/v1/rules"))["data"]["groups"] for r in g["rules"]]
def panels(ps):
    for p in ps:
        yield p
        yield from panels(p.get("panels", []))
targets = [(p.get("title", "?"), t["expr"]) for p in panels(dash["panels"]) for t in p.get("targets", []) if t.get("expr")]
if not targets: fail("the dashboard has no panel queries")
for where, expr in targets + [("alert rule", e) for e in rules]:
    for name in set(re.findall(r"\bflytecd_[a-z_]+", expr)):
        if name not in exported: fail(f"{where}: {expr!r} uses {name}, which /metrics does not export")

# The namespace variable, as Grafana resolves label_values(metric, label).
var = [v for v in dash.get("templating", {}).get("list", []) if v.get("name") == "namespace"]
for v in var:
    m = re.fullmatch(r"label_values\((\w+),\s*(\w+)\)", v["query"])
    if not m: fail(f"dashboard variable namespace: unexpected query {v['query']!r}")
    r = api(f"/api/v1/label/{m.group(2)}/values", **{"match[]": m.group(1)})
    if r["status"] != "success" or "flytecd" not in r["data"]: fail(f"variable namespace: {r}")

# Every panel query, with Grafana's variables filled in, instant and over the last minutes.
subst = {"$namespace": "flytecd", "${namespace}": "flytecd", "$__rate_interval": "1m", "$__interval": "15s",
         "$__range": "5m", "${__range}": "5m", "$__interval_ms": "15000"}
now = time.time()
with_data = 0
for title, expr in targets:
    q = expr
    for k in sorted(subst, key=len, reverse=True): q = q.replace(k, subst[k])
    if "$" in q: fail(f"panel {title!r}: a Grafana variable this test does not know: {q!r}")
    result = query(q)
    r = api("/api/v1/query_range", query=q, start=now - 300, end=now, step=15)
    if r["status"] != "success": fail(f"panel {title!r}: range query {q!r}: {r.get('error')}")
    with_data += bool(result)
print(f"dashboard: {len(targets)} panel queries parse and evaluate (instant and range), {with_data} with data now")
for title in ("Leader", "Since last successful sync", "Objects by kind and state (leader)", "Reconciles by result"):
    qs = [e for t, e in targets if t == title]
    if not qs: fail(f"dashboard: no panel {title!r}")
    q = qs[0]
    for k in sorted(subst, key=len, reverse=True): q = q.replace(k, subst[k])
    if not query(q): fail(f"panel {title!r} shows no data after a reconcile: {q!r}")

# The alert rules, evaluated by Prometheus on the scraped series: healthy, none firing.
groups = json.load(urllib.request.urlopen(f"{prom}/api/v1/rules"))["data"]["groups"]
bad = [(r["name"], r.get("lastError")) for g in groups for r in g["rules"] if r["health"] != "ok"]
if bad: fail(f"alert rules failing to evaluate: {bad}")
firing = [r["name"] for g in groups for r in g["rules"] if r.get("state") not in ("inactive", None)]
if firing: fail(f"alerts pending/firing on a healthy daemon: {firing}")
print(f"alert rules: {sum(len(g['rules']) for g in groups)} evaluated by Prometheus without error, none pending")
PY
echo "prometheus scrape: ok"
