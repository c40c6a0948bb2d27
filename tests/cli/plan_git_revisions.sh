#!/usr/bin/env bash
# Issue 20 item 1: `flytecd plan --git R --base B --head H` resolves B and H as `git rev-parse`
# does in the user's repository, and says which commit each name resolved to.
#  1. `--head HEAD` (the README's own example) was "revision 'HEAD' not found";
#  2. a second run with a moved branch and a state directory said "no changes" (the mirror was
#     never fetched again);
#  3. `origin/main` was read as local `main` ("no changes" when they differ);
#  4. the layout actions/checkout leaves (only refs/remotes/origin/*, a detached HEAD) failed
#     with "revision 'origin/main' not found": the shipped CI template
#     (packaging/ci/github-actions-flytecd-plan.yaml) is run here literally in that layout.
# Usage: plan_git_revisions.sh FLYTECD_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export HOME="$tmp/home" GIT_CONFIG_NOSYSTEM=1 LC_ALL=C GIT_TERMINAL_PROMPT=0
mkdir -p "$HOME"
git() { command git -c user.name=t -c user.email=t@example.com -c init.defaultBranch=main -c commit.gpgsign=false -c advice.detachedHead=false "$@"; }
# run NAME WANT_RC CMD...: runs CMD, keeps stdout in $OUT and stderr in $ERR.
run() {
  local name="$1" want="$2"; shift 2
  OUT="$("$@" 2>"$tmp/stderr")"; RC=$?; ERR="$(cat "$tmp/stderr")"
  if [[ $RC -eq $want ]]; then ok "$name (exit $RC)"
  else bad "$name: exit $RC, expected $want"; printf '%s\n%s\n' "$OUT" "$ERR" | head -40; fi
}
has() {  # name, pattern (fixed string), text
  if grep -qF -- "$2" <<<"$3"; then ok "$1"; else bad "$1: no '$2' in:"; head -40 <<<"$3"; fi
}
short() { git -C "$1" rev-parse --short=12 "$2"; }

# --- The issue's reproduction: a repository with a bare origin, all local. ---
r="$tmp/r"
cp -r "$src/repo-layout-example" "$r"
( cd "$r" && git init -q -b main && git add -A && git commit -qm base ) || bad "git setup"
BASE="$(git -C "$r" rev-parse HEAD)"
git clone -q --bare "$r" "$tmp/remote.git"
git -C "$r" remote add origin "$tmp/remote.git"
git -C "$r" fetch -q origin
cd "$r" || exit 1

# 1. HEAD, in every output format, naming the commits compared.
run "plan --git . --head HEAD" 0 "$bin" plan --git . --base "$BASE" --head HEAD
has "text names the base commit" "base $BASE = ${BASE:0:12}" "$OUT"
has "text names the head commit" "head HEAD = ${BASE:0:12}" "$OUT"
run "plan --git . --head HEAD -o json" 0 "$bin" plan --git . --base "$BASE" --head HEAD -o json
printf '%s' "$OUT" > "$tmp/plan.json"
python3 - "$BASE" "$tmp/plan.json" <<'PY' && ok "json base/head are {name, commit}" || bad "json base/head are not {name, commit}"
import json, sys
base = sys.argv[1]; j = json.load(open(sys.argv[2]))
assert j["base"] == {"name": base, "commit": base}, j["base"]
assert j["head"] == {"name": "HEAD", "commit": base}, j["head"]
PY
run "plan --git . --head @ -o markdown" 0 "$bin" plan --git . --base "$BASE" --head @ -o markdown
has "markdown header names the head commit" "head <code>@</code> = <code>${BASE:0:12}</code>" "$OUT"

# 2. A moved branch, with a state directory kept between runs (and "." spelled two ways).
run "first run, nothing changed yet" 0 "$bin" plan --git . --base "$BASE" --head main --state-dir "$tmp/s"
f=projects/flytesnacks/development.yaml
sed -i 's/maxParallelism: 5$/maxParallelism: 9/' "$f" && git commit -qam "5 -> 9"
sed -i 's/maxParallelism: 10$/maxParallelism: 12/' projects/flytesnacks/production.yaml && git commit -qam "10 -> 12"
MAIN="$(git rev-parse main)"
run "second run sees the moved branch" 2 "$bin" plan --git . --base "$BASE" --head main --state-dir "$tmp/s"
has "the head is the new commit" "head main = ${MAIN:0:12}" "$OUT"
has "first commit's change is shown" "maxParallelism: base 5, head 9" "$OUT"
has "second commit's change is shown" "maxParallelism: base 10, head 12" "$OUT"
run "the same with the absolute path" 2 "$bin" plan --git "$r" --base "$BASE" --head main --state-dir "$tmp/s"
has "absolute path: same head commit" "head main = ${MAIN:0:12}" "$OUT"
# A path on disk is read in place: nothing is copied into the state directory.
if [[ -z "$(ls -A "$tmp/s/git" 2>/dev/null)" ]]; then ok "no mirror copy of a local repository"
else bad "a mirror was made of a local repository: $(ls "$tmp/s/git")"; fi
run "@~2 is the base commit" 0 "$bin" plan --git . --base "$BASE" --head @~2
has "@~2 resolved like git rev-parse" "head @~2 = ${BASE:0:12}" "$OUT"
run "an abbreviated id" 2 "$bin" plan --git . --base "${BASE:0:8}" --head HEAD
has "abbreviated base resolved" "base ${BASE:0:8} = ${BASE:0:12}" "$OUT"

# 3. origin/main (not pushed yet) is not local main.
run "origin/main vs main" 2 "$bin" plan --git . --base origin/main --head main
has "origin/main is the remote-tracking ref" "base origin/main = ${BASE:0:12}" "$OUT"
has "main is the local branch" "head main = ${MAIN:0:12}" "$OUT"
run "refs/remotes/origin/main by its full name" 2 "$bin" plan --git . --base refs/remotes/origin/main --head main
run "a name nobody has" 1 "$bin" plan --git . --base origin/nope --head main
has "the unknown name is named" "revision 'origin/nope' not found in the repository" "$ERR"
run "a range as --head is refused" 1 "$bin" plan --git . --base "$BASE" --head "$BASE..main"
has "the refusal says what to give" "is a range" "$ERR"

# --- 4. The README's CI template in the layout actions/checkout leaves. ---
# The GitOps repository keeps its documents under flyte/, as the template assumes.
g="$tmp/gitops"
mkdir -p "$g" && cp -r "$src/repo-layout-example" "$g/flyte"
( cd "$g" && git init -q -b main && git add -A && git commit -qm base ) || bad "gitops setup"
GBASE="$(git -C "$g" rev-parse HEAD)"
git -C "$g" checkout -q -b pr
sed -i 's/maxParallelism: 5$/maxParallelism: 9/' "$g/flyte/projects/flytesnacks/development.yaml"
git -C "$g" commit -qam "raise flytesnacks/development maxParallelism"
PR="$(git -C "$g" rev-parse HEAD)"
# main moves on after the pull request branched (another project's change).
git -C "$g" checkout -q main
sed -i 's/maxParallelism: 8$/maxParallelism: 7/' "$g/flyte/projects/data-eng/development.yaml"
git -C "$g" commit -qam "data-eng change on main"
GMAIN="$(git -C "$g" rev-parse HEAD)"
git clone -q --bare "$g" "$tmp/gitops.git"
# What actions/checkout@v4 with fetch-depth: 0 does for a pull request.
w="$tmp/workspace"
mkdir -p "$w" && cd "$w" || exit 1
git init -q && git remote add origin "$tmp/gitops.git"
git fetch -q --prune --no-recurse-submodules origin '+refs/heads/*:refs/remotes/origin/*' '+refs/tags/*:refs/tags/*'
git checkout -q --detach "$PR"
if git show-ref --verify -q refs/heads/main; then bad "the checkout layout has a local main"; fi
ln -s "$bin" ./flytecd  # the template runs ./flytecd
template="$src/packaging/ci/github-actions-flytecd-plan.yaml"
# The `run:` of a step, by its name, with the GitHub expressions a pull_request event gives.
step() {
  python3 - "$template" "$1" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
want = sys.argv[2]
for i, line in enumerate(lines):
    if re.match(r"\s*- name: " + re.escape(want) + r"\s*$", line):
        break
else:
    sys.exit("no step named " + want)
indent = len(line) - len(line.lstrip()) + 2
for j in range(i + 1, len(lines)):
    l = lines[j]
    if l.strip() and len(l) - len(l.lstrip()) < indent:
        sys.exit("step has no run:")
    m = re.match(r"\s*run: (.*)$", l)
    if not m:
        continue
    if m.group(1).strip() != "|":
        print(re.sub(r"\s+#.*$", "", m.group(1)))
        sys.exit(0)
    body_indent = None
    for k in range(j + 1, len(lines)):
        b = lines[k]
        if b.strip():
            n = len(b) - len(b.lstrip())
            if body_indent is None:
                body_indent = n
            if n < body_indent:
                break
        print(b[body_indent:] if body_indent is not None else "")
    sys.exit(0)
sys.exit("step has no run:")
PY
}
expr() {
  sed -e 's/\${{ github.base_ref }}/main/g' -e "s/\${{ github.event.pull_request.head.sha }}/$PR/g"
}
validate_cmd="$(step Validate | expr)" || bad "template: no Validate step"
plan_cmd="$(step Plan | expr)" || bad "template: no Plan step"
grep -qF -- "--base \"origin/main...$PR\"" <<<"$plan_cmd" && grep -qF -- "--head \"$PR\"" <<<"$plan_cmd" ||
  bad "template's plan command is not the expected one: $plan_cmd"
run "template step Validate in the checkout layout" 0 bash -e -c "$validate_cmd"
export GITHUB_OUTPUT="$tmp/github_output"
: > "$GITHUB_OUTPUT"
run "template step Plan in the checkout layout" 0 bash -e -c "$plan_cmd"
grep -qx 'exit=2' "$GITHUB_OUTPUT" && ok "the step recorded exit=2 (changes)" ||
  bad "step output: $(cat "$GITHUB_OUTPUT"); plan.md: $(head -c 2000 plan.md 2>/dev/null)"
md="$(cat plan.md 2>/dev/null)"
# origin/main has moved on since the branch point: the template's base (origin/main...head)
# is their merge base, so main's own later change does not show as reverted by the PR.
has "plan.md names the base commit (the merge base)" "base <code>origin/main...$PR</code> = <code>${GBASE:0:12}</code>" "$md"
has "plan.md names the head commit" "head <code>$PR</code> = <code>${PR:0:12}</code>" "$md"
has "plan.md shows the pull request's change" "<code>maxParallelism</code> | <code>5</code> | <code>9</code>" "$md"
[[ -n "$md" ]] && ! grep -q "data-eng" <<<"$md" && ok "plan.md shows only the pull request's change" ||
  bad "plan.md is empty or shows main's later data-eng change as the PR's: $md"
# origin/main alone is its tip (main's later change then shows as reverted).
run "--base origin/main (the tip)" 2 ./flytecd plan --git . --path flyte --base origin/main --head HEAD
has "origin/main is the tip in the checkout layout" "base origin/main = ${GMAIN:0:12}" "$OUT"
has "the tip comparison shows data-eng" "data-eng" "$OUT"

# --- A URL is fetched before names resolve: a moved branch is seen on the next run. ---
u="file://$tmp/gitops.git"
run "URL: origin/main is the remote's main" 2 "$bin" plan --git "$u" --path flyte --base origin/main --head "$PR" --state-dir "$tmp/su"
has "URL: base resolved" "base origin/main = ${GMAIN:0:12}" "$OUT"
git -C "$g" checkout -q main && git -C "$g" merge -q --no-edit pr && git -C "$g" push -q "$tmp/gitops.git" main
MERGED="$(git -C "$g" rev-parse main)"
run "URL: the moved branch is fetched again" 0 "$bin" plan --git "$u" --path flyte --base main --head "$MERGED" --state-dir "$tmp/su"
has "URL: main is the merge" "base main = ${MERGED:0:12}" "$OUT"

exit $fail
