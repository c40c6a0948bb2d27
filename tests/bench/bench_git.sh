#!/usr/bin/env bash
# Git source and daemon figures (prints numbers; never a pass/fail test).
#
#   tests/bench/bench_git.sh BUILD_DIR
#
# Generates repositories of ~1,000 and ~10,000 documents (flytecd_gen_repo --projects 143 / 1430),
# commits each to a bare repository served over file:// (and over http by lighttpd running
# `git http-backend`, when lighttpd is installed), then measures:
#  (a) poll cost with an unmoved head: flytecd_bench_git_poll (GitSource::remote_head in a loop),
#      and the CPU a running daemon (1 s interval) spends per interval from /proc/<pid>/stat;
#  (b) push -> applied latency with a signed generic webhook and with a 1 s poll interval;
#  (c) reconcile time after a one-file change of the 10k repository vs its full reconcile;
#  (d) `flytecd plan --git <bare> --base <rev1> --head <rev2>` wall time on the 10k repository.
# Everything runs on loopback with a standalone emulator as the target; ports are picked at run
# time; every server this script starts is stopped on exit.
set -euo pipefail
build="$(cd "${1:?usage: bench_git.sh BUILD_DIR}" && pwd)"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
flytecd="$build/flytecd"
work="$(mktemp -d /tmp/flytecd-bench-git.XXXXXX)"
pids=()
cleanup() {
  for p in "${pids[@]+"${pids[@]}"}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]+"${pids[@]}"}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
export HOME="$work/home" GIT_CONFIG_NOSYSTEM=1 LC_ALL=C
mkdir -p "$HOME"
git config --global user.name bench && git config --global user.email bench@example.com
git config --global init.defaultBranch main && git config --global commit.gpgsign false

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 1 300); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; return 1; }

echo "== machine: $(nproc) CPUs, $(uname -r), $(git --version), lighttpd: $(command -v lighttpd || echo none)"

# ---- repositories -------------------------------------------------------------------------
make_repo() {  # name projects
  local name="$1" projects="$2"
  "$build/tests/flytecd_gen_repo" "$work/$name-work" --projects "$projects" | sed "s/^/$name: /"
  git -C "$work/$name-work" init -q
  git -C "$work/$name-work" add -A
  git -C "$work/$name-work" commit -qm "generated: $projects projects"
  mkdir -p "$work/served"
  git clone -q --bare "$work/$name-work" "$work/served/$name.git"
  git -C "$work/$name-work" remote add origin "$work/served/$name.git"
  echo "$name: $(git -C "$work/$name-work" ls-files | wc -l) files, $(du -sh "$work/served/$name.git" | cut -f1) bare"
}
make_repo r1k 143
make_repo r10k 1430

# ---- (a) poll cost with an unmoved head ----------------------------------------------------
http_base=""
if command -v lighttpd >/dev/null 2>&1; then
  lport=$(free_port)
  mkdir -p "$work/www"
  backend="$(git --exec-path)/git-http-backend"
  cat > "$work/lighttpd.conf" <<EOF
server.modules = ("mod_alias", "mod_setenv", "mod_cgi")
server.bind = "127.0.0.1"
server.port = $lport
server.document-root = "$work/www"
server.errorlog = "$work/lighttpd-error.log"
alias.url = ("/git" => "$backend")
\$HTTP["url"] =~ "^/git/" {
  cgi.assign = ("" => "")
  setenv.add-environment = ("GIT_PROJECT_ROOT" => "$work/served", "GIT_HTTP_EXPORT_ALL" => "1")
}
EOF
  lighttpd -D -f "$work/lighttpd.conf" > "$work/lighttpd.log" 2>&1 &
  pids+=($!)
  wait_port "$lport"
  http_base="http://127.0.0.1:$lport/git"
fi
poll_figure() {  # repository transport: the figure of the poll just run ($work/poll.out)
  local ms; ms=$(sed -n 's/.* x [0-9]*, head unmoved: \([0-9.]*\) ms wall.*/\1/p' "$work/poll.out")
  figure "no-change poll, $1, $2" "$ms" ms "head unmoved"
}
echo
echo "== (a) poll cost, head unmoved"
for name in r1k r10k; do
  echo "\$ flytecd_bench_git_poll file://$work/served/$name.git --polls 50"
  "$build/tests/flytecd_bench_git_poll" "file://$work/served/$name.git" --polls 50 --cache "$work/cache-a" | tee "$work/poll.out"
  rm -rf "$work/cache-a"
  poll_figure "$name" file
  if [[ -n "$http_base" ]]; then
    echo "\$ flytecd_bench_git_poll $http_base/$name.git --polls 50   (lighttpd + git http-backend)"
    "$build/tests/flytecd_bench_git_poll" "$http_base/$name.git" --polls 50 --cache "$work/cache-a" | tee "$work/poll.out"
    rm -rf "$work/cache-a"
    poll_figure "$name" http
  fi
done

# ---- the target and daemons ----------------------------------------------------------------
start_emulator() {  # name -> sets eport epid (an empty emulator of its own per daemon)
  eport=$(free_port)
  "$flytecd" emulator --listen "127.0.0.1:$eport" --db "$work/admin-$1.db" --log-level warn > "$work/emulator-$1.log" 2>&1 &
  epid=$!
  pids+=("$epid")
  wait_port "$eport"
}
head -c 32 /dev/urandom | base64 > "$work/hook-secret"

start_daemon() {  # name repo interval -> sets dport dpid
  local name="$1" repo="$2" interval="$3"
  dport=$(free_port)
  cat > "$work/$name.yaml" <<EOF
stateDir: $work/state-$name
interval: $interval
git: {url: "file://$work/served/$repo.git", ref: main}
admin: {endpoint: "127.0.0.1:$eport", insecure: true}
http: {listen: "127.0.0.1:$dport", genericSecretFile: "$work/hook-secret"}
EOF
  "$flytecd" run --config "$work/$name.yaml" > "$work/$name.log" 2>&1 &
  dpid=$!
  pids+=("$dpid")
  wait_port "$dport"
}

# The measuring side: changes one value in one file, commits, pushes, nudges (webhook) or not (poll), and waits for
# the daemon's log line "reconcile (...) of <new revision>" (written after /api/v1/status holds
# the new revision and its lastSync), then checks /api/v1/status.
cat > "$work/measure.py" <<'EOF'
import hashlib, hmac, json, re, subprocess, sys, time, urllib.request
mode, port, work, log, secret_file, n, path = sys.argv[1:8]
label = sys.argv[8] if len(sys.argv) > 8 else ""
n = int(n)
def figure(name, value, unit, note):  # for tests/bench/bench_all.sh (tests/bench/lib.sh's figure)
    import os
    if label and os.environ.get("FLYTECD_FIGURES"):
        with open(os.environ["FLYTECD_FIGURES"], "a") as f:
            f.write(f"{name}\t{value}\t{unit}\t{note}\n")
def status():
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/status", timeout=5) as r:
        return json.load(r)
def wait_log(rev, since, timeout=600):
    deadline = time.time() + timeout
    pat = re.compile(r"reconcile \([^)]*\) of " + rev + r": .*; ([0-9.]+)s")
    while time.time() < deadline:
        with open(log) as f:
            f.seek(since)
            m = pat.search(f.read())
        if m:
            return float(m.group(1))
        time.sleep(0.005)
    sys.exit(f"timeout waiting for {rev}")
def wait_idle():
    # start each sample right after a reconcile (so a 1 s poll is not mid-flight)
    time.sleep(0.2)
lat = []
recs = []
for i in range(n):
    wait_idle()
    # one real value change in one file: the first maxParallelism of the file, plus one
    text = open(f"{work}/{path}").read()
    text = re.sub(r"maxParallelism: (\d+)", lambda m: f"maxParallelism: {int(m.group(1)) + 1}", text, count=1)
    open(f"{work}/{path}", "w").write(text)
    subprocess.run(["git", "-C", work, "commit", "-qam", f"bench {mode} {i}"], check=True)
    rev = subprocess.run(["git", "-C", work, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    since = len(open(log, "rb").read())
    subprocess.run(["git", "-C", work, "push", "-q", "origin", "main"], check=True)
    t0 = time.time()
    if mode == "webhook":
        body = json.dumps({"ref": "refs/heads/main", "after": rev}).encode()
        key = open(secret_file).read().strip().encode()
        sig = "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()
        req = urllib.request.Request(f"http://127.0.0.1:{port}/api/v1/webhooks/generic", data=body,
                                     headers={"X-Signature": sig, "Content-Type": "application/json"})
        urllib.request.urlopen(req, timeout=5).read()
    reconcile_s = wait_log(rev, since)
    dt = time.time() - t0
    st = status()
    assert st["revision"] == rev, st.get("revision")
    lat.append(dt)
    recs.append(reconcile_s)
    print(f"  {mode} #{i+1}: push->applied {dt*1000:.0f} ms (that reconcile: {reconcile_s:.2f} s, "
          f"lastSync.durationSeconds {st['lastSync']['durationSeconds']:.3f}, "
          f"outcome {st['lastSync']['outcome']}, {st['lastSync']['summary']})")
lat.sort()
print(f"  {mode}: n={n} min {lat[0]*1000:.0f} ms, median {lat[len(lat)//2]*1000:.0f} ms, max {lat[-1]*1000:.0f} ms")
recs.sort()
size = label.split(",")[0]
figure(f"push -> applied, {mode}, {size}", f"{lat[len(lat)//2]*1000:.0f}", "ms", f"{label}, median of {n}")
figure(f"one-file change reconcile, {mode}, {size}", f"{recs[len(recs)//2]:.3f}", "s", f"{label}, median of {n}")
EOF

wait_synced() {  # port log -> waits for the first reconcile line
  for _ in $(seq 1 6000); do grep -q "reconcile (startup) of" "$2" && return 0; sleep 0.1; done
  echo "daemon did not reconcile; log:"; tail -20 "$2"; return 1
}
status_json() { python3 -c "import json,urllib.request;print(json.dumps(json.load(urllib.request.urlopen('http://127.0.0.1:$1/api/v1/status'))$2))"; }
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }

# ---- (c) + (b, webhook, 10k): full reconcile of 10k documents, then one-file changes --------
echo
echo "== (c) 10k-document repository: full reconcile vs a one-file change (daemon, interval 1h, webhook)"
start_emulator d10k
t0=$(date +%s.%N)
start_daemon d10k r10k 1h
wait_synced "$dport" "$work/d10k.log"
echo "startup (clone + parse all + full reconcile into an empty emulator): $(python3 -c "print(f'{$(date +%s.%N)-$t0:.1f}')") s wall"
grep -E "revision .* loaded:|reconcile \(startup\)" "$work/d10k.log" | sed 's/^/  log: /' | cut -c1-320
full10k=$(status_json "$dport" "['lastSync']['durationSeconds']")
echo "  status lastSync: $full10k s (durationSeconds), summary: $(status_json "$dport" "['lastSync']['summary']")"
figure "full reconcile, 10k documents" "$(printf '%.2f' "$full10k")" s "daemon startup into an empty emulator"
d10k_pid=$dpid
file10k=$(git -C "$work/r10k-work" ls-files | sed -n 100p)
python3 "$work/measure.py" webhook "$dport" "$work/r10k-work" "$work/d10k.log" "$work/hook-secret" 3 "$file10k" "10k documents"
grep -E "revision .* loaded:" "$work/d10k.log" | tail -1 | sed 's/^/  log: /' | cut -c1-320
# a no-change reconcile of the same 10k repository (re-observe only), for scale
since=$(wc -c < "$work/d10k.log")
body='{"ref":"refs/heads/main"}'
python3 - "$dport" "$work/hook-secret" <<'EOF'
import hashlib, hmac, sys, urllib.request
port, sf = sys.argv[1:3]
body = b'{"ref":"refs/heads/main"}'
sig = "sha256=" + hmac.new(open(sf).read().strip().encode(), body, hashlib.sha256).hexdigest()
urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/api/v1/webhooks/generic", data=body, headers={"X-Signature": sig}), timeout=5).read()
EOF
for _ in $(seq 1 3000); do tail -c +"$((since + 1))" "$work/d10k.log" | grep -q "reconcile (webhook" && break; sleep 0.1; done
tail -c +"$((since + 1))" "$work/d10k.log" | grep "reconcile (webhook" | sed 's/^/  no-change reconcile: /' | cut -c1-320
kill "$d10k_pid" "$epid"; wait "$d10k_pid" "$epid" 2>/dev/null || true

# ---- (b) push -> applied, 1k documents: 1 s poll interval, and a webhook ---------------------
echo
echo "== (b) push -> applied, 1k-document repository, daemon with interval 1s"
start_emulator d1k
start_daemon d1k r1k 1s
wait_synced "$dport" "$work/d1k.log"
d1k_pid=$dpid
file1k=$(git -C "$work/r1k-work" ls-files | sed -n 10p)
python3 "$work/measure.py" poll "$dport" "$work/r1k-work" "$work/d1k.log" "$work/hook-secret" 5 "$file1k" "1k documents, 1 s interval"
python3 "$work/measure.py" webhook "$dport" "$work/r1k-work" "$work/d1k.log" "$work/hook-secret" 5 "$file1k" "1k documents, 1 s interval"

# (a, daemon view) CPU the daemon spends per 1 s interval with the head unmoved (ls-remote and a
# re-observe of the target each interval).
echo
echo "== (a) daemon CPU with an unmoved head, 1k repository, interval 1s, over 10 s"
hz=$(getconf CLK_TCK)
n0=$(grep -c "reconcile (interval)" "$work/d1k.log" || true)
c0=$(cpu_ticks "$d1k_pid")
sleep 10
c1=$(cpu_ticks "$d1k_pid")
n1=$(grep -c "reconcile (interval)" "$work/d1k.log" || true)
python3 -c "n=$n1-$n0; c=($c1-$c0)/$hz; print(f'  {n} intervals, {c:.2f} s CPU, {c/max(n,1)*1000:.0f} ms CPU per interval (poll + re-observe + plan)')"
kill "$d1k_pid"; wait "$d1k_pid" 2>/dev/null || true

# ---- (d) plan --git between two revisions of the 10k repository -----------------------------
echo
echo "== (d) flytecd plan --git on the 10k-document repository"
# The head: a pull request changing one value in each of 45 files (the issue-24 figure's shape).
rev1=$(git -C "$work/r10k-work" rev-parse HEAD)
git -C "$work/r10k-work" grep -l "maxParallelism: " > "$work/pr-files"
head -45 "$work/pr-files" | while read -r f; do
  perl -0pi -e 's/maxParallelism: (\d+)/"maxParallelism: " . ($1 + 7)/e' "$work/r10k-work/$f"
done
git -C "$work/r10k-work" commit -qam "bench: 45 files"
git -C "$work/r10k-work" push -q origin main
rev2=$(git -C "$work/r10k-work" rev-parse HEAD)
for fmt in text markdown json; do
  echo "\$ flytecd plan --git $work/served/r10k.git --base $rev1 --head $rev2 -o $fmt"
  set +e
  /usr/bin/time -f "%e %M" -o "$work/time" "$flytecd" plan --git "$work/served/r10k.git" --base "$rev1" --head "$rev2" -o "$fmt" --state-dir "$work/plan-state" > "$work/plan.out" 2> "$work/plan.err"
  rc=$?
  set -e
  read -r secs rss < <(tail -1 "$work/time")  # time(1) adds a line when the exit code is not 0
  echo "  exit $rc, wall ${secs} s, peak RSS $((rss / 1024)) MiB, $(wc -c < "$work/plan.out") bytes of output"
  if [[ $fmt == markdown ]]; then
    changed=$(git -C "$work/r10k-work" diff --name-only "$rev1" "$rev2" | wc -l)
    figure "plan --git (markdown)" "$secs" s "10k documents, $changed files changed, peak RSS $((rss / 1024)) MiB"
  fi
done
head -3 "$work/plan.out" | cut -c1-200 | sed 's/^/  /'
# for scale: loading + validating the 10k documents of one revision from a directory
echo "\$ flytecd validate <10k-document working tree>"
/usr/bin/time -f "%e %M" -o "$work/time" "$flytecd" validate "$work/r10k-work" > /dev/null 2>&1 || true
read -r secs rss < <(tail -1 "$work/time")
echo "  wall ${secs} s, peak RSS $((rss / 1024)) MiB"
figure "validate" "$secs" s "10k documents ($(du -sh --exclude=.git "$work/r10k-work" | cut -f1) of YAML), peak RSS $((rss / 1024)) MiB"
