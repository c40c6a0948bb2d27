#!/usr/bin/env bash
# Issue 27 item 6 (Git tree bomb): a small repository whose head lists 200 paths pointing at one
# blob just under the per-file limit (≈4 MiB) took 857 MB and 54 s in `plan --git` (each file was
# bounded, never the revision). Now the revision is refused before its files are read, naming the
# per-revision limit, fast and with a modest peak RSS.
# Usage: git_tree_bomb.sh FLYTECD_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export HOME="$tmp/home" GIT_CONFIG_NOSYSTEM=1 LC_ALL=C
mkdir -p "$HOME"
git() { command git -c user.name=t -c user.email=t@example.com -c init.defaultBranch=main -c commit.gpgsign=false "$@"; }

repo="$tmp/repo"
cp -r "$src/repo-layout-example" "$repo"
( cd "$repo" && git init -q && git add -A && git commit -qm base && git branch -q base ) || bad "git setup"
# One blob of 4 MiB - 1 KiB of YAML comments (compresses to a few KiB), listed under 200 paths.
blob="$(python3 -c 'import sys; sys.stdout.write(("#" * 1023 + "\n") * 4095)' | git -C "$repo" hash-object -w --stdin)"
for i in $(seq 1 200); do printf '100644 %s\tbomb/f%03d.yaml\n' "$blob" "$i"; done |
  git -C "$repo" update-index --index-info
git -C "$repo" commit -qm bomb
echo "repository: $(du -sk "$repo/.git" | cut -f1) KiB on disk, 200 paths x $(git -C "$repo" cat-file -s "$blob") bytes"

# Peak RSS and wall time of one command (getrusage of the child), stdout/stderr kept.
measure() {
  python3 - "$tmp/out" "$tmp/err" "$@" <<'PY'
import resource, subprocess, sys, time
out, err, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
t = time.monotonic()
with open(out, "wb") as o, open(err, "wb") as e:
    p = subprocess.Popen(cmd, stdout=o, stderr=e)
    try:
        rc = p.wait(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        rc = 124
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, round(time.monotonic() - t, 2))
PY
}
read -r rc rss secs < <(measure "$bin" plan --git "$repo" --base base --head main)
echo "plan --git on the bomb: exit $rc, peak RSS $rss MiB, $secs s"
[[ $rc -eq 1 ]] && ok "plan --git refuses the revision (exit 1)" || bad "plan --git exit $rc (want 1)"
grep -q "a revision may hold at most 256.0 MiB" "$tmp/err" && grep -q "per-revision size limit" "$tmp/err" &&
  ok "the error names the limit" || bad "the error does not name the limit: $(head -c 1500 "$tmp/err")"
grep -qE "YAML files hold 799\.[0-9] MiB \([0-9]+ bytes; the largest, 'bomb/f001\.yaml', 4\.0 MiB\)" "$tmp/err" && ok "the error says how much the revision holds" ||
  bad "the error does not say what the revision holds: $(head -c 1500 "$tmp/err")"
[[ $rss -lt 128 ]] && ok "peak RSS $rss MiB < 128 MiB" || bad "peak RSS $rss MiB (want < 128)"
python3 -c "import sys; sys.exit(0 if float('$secs') < 20 else 1)" && ok "failed fast ($secs s)" || bad "took $secs s"

# The base alone (the example, far within the limits) still plans.
read -r rc rss secs < <(measure "$bin" plan --git "$repo" --base base --head base)
[[ $rc -eq 0 ]] && ok "the example revision is within the limits (exit 0)" || { bad "plan base..base exit $rc"; head -c 1500 "$tmp/err"; }
exit $fail
