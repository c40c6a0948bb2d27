#!/usr/bin/env bash
# Issue 13: `--project P [--domain D]` limits the pass and the guard's shares to those scopes.
#  * apply --project ml-training applies ml-training's change and leaves another project's drift
#    (changed outside Git) and another project's delete (a file removed from Git) alone: a
#    plan --live over everything still shows both afterwards;
#  * the guard's share is computed over the scope: removing most of data-eng's overrides is
#    refused with --project data-eng (its share is over half) while the same revision over every
#    project is not refused (the share over all of them is small);
#  * history --project P --domain D shows only steps of that domain.
# Usage: scope.sh FLYTECD_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

start_emulator

"$bin" apply --repo "$example" --state-dir "$tmp/s" "${target[@]}" > "$tmp/apply0.log" 2>&1 || { bad "first apply"; tail "$tmp/apply0.log"; }

# Out of band: someone else (another state directory) changes flytesnacks' maxParallelism.
cp -r "$example" "$tmp/oob"
sed -i 's/maxParallelism: 5$/maxParallelism: 7/' "$tmp/oob/projects/flytesnacks/development.yaml"
"$bin" apply --repo "$tmp/oob" --state-dir "$tmp/other" "${target[@]}" > "$tmp/oob.log" 2>&1 || { bad "out-of-band apply"; tail "$tmp/oob.log"; }

# In Git: data-eng's staging file is removed, ml-training's cpu limit raised.
cp -r "$example" "$tmp/work"
rm "$tmp/work/projects/data-eng/staging.yaml"
sed -i 's/limits: {cpu: "16", memory: 64Gi, gpu: "1"}/limits: {cpu: "24", memory: 64Gi, gpu: "1"}/' "$tmp/work/projects/ml-training/overrides.yaml"

out="$("$bin" apply --repo "$tmp/work" --state-dir "$tmp/s" --project ml-training "${target[@]}" 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && ok "apply --project ml-training converged" || bad "apply --project ml-training: exit $rc: $out"
grep -q '^scope: project ml-training$' <<<"$out" && ok "apply names its scope" || bad "no scope line: $out"
grep -q 'ml-training' <<<"$out" && grep -q 'live "16", Git "24"\|"24"' <<<"$out" && ok "ml-training's change applied" || bad "ml-training's change not shown: $out"
grep -q 'data-eng\|flytesnacks' <<<"$out" && bad "apply --project ml-training touched another project: $out"
grep -q 'drift 0' <<<"$out" && ok "no drift of other projects in its summary" || bad "summary: $out"

"$bin" plan --live --repo "$tmp/work" --state-dir "$tmp/s" "${target[@]}" -o json > "$tmp/plan.json" 2> "$tmp/plan.err"; rc=$?
[[ $rc -eq 2 ]] || bad "plan --live after the scoped apply: exit $rc (want 2): $(cat "$tmp/plan.err")"
python3 - "$tmp/plan.json" <<'PY' || fail=1
import json, sys
p = json.load(open(sys.argv[1]))
steps = [(s["action"], s["key"]) for s in p["steps"]]
drift = [d["key"] for d in p["drift"]]
ok = True
def check(cond, what):
    global ok
    print(("ok " if cond else "FAIL ") + what)
    ok = ok and cond
check(any(a == "delete" and k.startswith("override/data-eng/staging/") for a, k in steps),
      "data-eng's staging delete was left for a pass over data-eng")
check(any(k.startswith("override/flytesnacks/development/") for k in drift),
      "flytesnacks' drift was left alone (still drifted)")
check(not any(k.startswith("override/ml-training/") for a, k in steps),
      "ml-training is in sync after its scoped apply")
sys.exit(0 if ok else 1)
PY

# Plan scoped to a project-domain: only that domain's rows (flytesnacks' drift in development).
"$bin" plan --live --repo "$tmp/work" --state-dir "$tmp/s" --project flytesnacks --domain development "${target[@]}" -o json > "$tmp/plan-fd.json" 2>"$tmp/plan-fd.err"; rc=$?
[[ $rc -eq 2 ]] || bad "plan --live --project flytesnacks --domain development: exit $rc: $(cat "$tmp/plan-fd.err")"
python3 - "$tmp/plan-fd.json" <<'PY' || fail=1
import json, sys
p = json.load(open(sys.argv[1]))
keys = [s["key"] for s in p["steps"]] + [d["key"] for d in p["drift"]]
good = keys and all(k.startswith("override/flytesnacks/development/") for k in keys)
print(("ok " if good else "FAIL ") + "--domain development plans only flytesnacks/development rows: %s" % keys)
sys.exit(0 if good else 1)
PY

# The guard's share over the scope: most of data-eng's overrides removed.
cp -r "$example" "$tmp/work2"
rm "$tmp/work2/projects/data-eng/"{staging,production,development,overrides}.yaml
out="$("$bin" plan --live --repo "$tmp/work2" --state-dir "$tmp/s" "${target[@]}" 2>&1)"; rc=$?
grep -q 'REFUSED' <<<"$out" && bad "over every project the removal should pass the guard: $out"
[[ $rc -eq 2 ]] && ok "over every project: not refused (exit 2)" || bad "plan over every project: exit $rc"
out="$("$bin" apply --repo "$tmp/work2" --state-dir "$tmp/s" --project data-eng "${target[@]}" 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && grep -q '^REFUSED: refusing to remove' <<<"$out" && ok "apply --project data-eng: refused over data-eng's share" || bad "apply --project data-eng: exit $rc: $out"
refusal="$(grep '^REFUSED' <<<"$out")"
echo "  $refusal"
managed_all="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["managed"])' "$tmp/plan.json")"
of="$(sed -n 's/.* of \([0-9]*\) managed.*/\1/p' <<<"$refusal")"
[[ -n "$of" && "$of" -lt "$managed_all" ]] && ok "the share's denominator ($of) is data-eng's, not all $managed_all managed" || bad "denominator '$of' vs all $managed_all"
"$bin" plan --live --repo "$example" --state-dir "$tmp/s" --project data-eng "${target[@]}" > "$tmp/de.log" 2>&1; rc=$?
[[ $rc -eq 0 ]] && ok "nothing of data-eng was removed by the refused apply" || { bad "data-eng after refusal: exit $rc"; head -20 "$tmp/de.log"; }

# history --project P --domain D.
out="$("$bin" history --state-dir "$tmp/s" --project ml-training -o json 2>&1)"
n="$(python3 -c 'import json,sys; h=json.load(sys.stdin); print(sum(len(e["steps"]) for e in h))' <<<"$out" 2>/dev/null)"
[[ -n "$n" && "$n" -ge 1 ]] && ok "history --project ml-training lists its steps ($n)" || bad "history --project: $out"
out="$("$bin" history --state-dir "$tmp/s" --project ml-training --domain production -o json 2>&1)"
python3 -c '
import json, sys
h = json.load(sys.stdin)
keys = [s["key"] for e in h for s in e["steps"]]
good = len(keys) >= 1 and all("/ml-training/production/" in k for k in keys)
print(("ok " if good else "FAIL ") + "history --domain production: only that domain (%d steps)" % len(keys))
sys.exit(0 if good else 1)' <<<"$out" || fail=1
# The PR view: plan --git --project shows that project's changes only.
g() { "${git_env[@]}" git -C "$tmp/repo" -c user.name=t -c user.email=t@e "$@"; }
mkdir -p "$tmp/repo"; cp -r "$example/." "$tmp/repo/"
g init -q -b main && g add -A && g commit -q -m base && g tag base || bad "git base"
rm -rf "$tmp/repo/projects"; cp -r "$tmp/work/projects" "$tmp/repo/projects"
g add -A && g commit -q -m change && g tag change || bad "git change"
all="$("$bin" plan --git "$tmp/repo" --base base --head change -o json --state-dir "$tmp/review" 2>/dev/null)"
one="$("$bin" plan --git "$tmp/repo" --base base --head change -o json --project ml-training --state-dir "$tmp/review" 2>"$tmp/review.err")"; rc=$?
grep -q "data-eng" <<<"$all" && grep -q "ml-training" <<<"$all" || bad "plan --git over everything shows both projects' changes"
[[ $rc -eq 2 ]] && grep -q "ml-training" <<<"$one" && ! grep -q "data-eng" <<<"$one" \
  && ok "plan --git --project ml-training shows ml-training's change only (exit 2)" \
  || bad "plan --git --project ml-training: exit $rc: $(head -c 600 <<<"$one")"
grep -q "limited to project ml-training" "$tmp/review.err" && ok "plan --git --project says it is limited" || bad "no 'limited to' line: $(cat "$tmp/review.err")"

# A --project nobody declares or owns is an error naming the declared ones, not "nothing to do".
for cmd in "plan --live" apply; do
  out="$("$bin" $cmd --repo "$example" --state-dir "$tmp/s" --project ml-trainig "${target[@]}" 2>&1)"; rc=$?
  [[ $rc -eq 1 ]] && grep -q "did you mean 'ml-training'" <<<"$out" && grep -q "projects: .*data-eng" <<<"$out" \
    && ok "$cmd --project ml-trainig: exit 1, the declared projects named" || bad "$cmd --project ml-trainig: exit $rc: $out"
done

exit $fail
