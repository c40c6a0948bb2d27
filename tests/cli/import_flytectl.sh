#!/usr/bin/env bash
# Issue 14 item 4 acceptance: `flytecd import --from-flytectl` on flytectl attribute files of all
# six types at all three scopes (the YAML of `flytectl update <type>-attribute --attrFile`, with
# flytectl's key variants: capitalised Project/Domain/Workflow, snake_case in any case, numeric
# enums, wrappers as {value: …}), then `flytecd apply` into the embedded emulator; every value
# reads back from the emulator (`flytecd import --out`) as the files say. Also: an invalid file
# stops the whole import (nothing written) unless --skip-invalid; the project-scope plugin
# override is skipped with validate's message; existing files are never overwritten.
# Usage: import_flytectl.sh FLYTECD_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
in="$tmp/flytectl"; mkdir -p "$in"
P=flytesnacks WF=core.control_flow.merge_sort.merge_sort

# scope_lines LEVEL: the scope keys of a file, in the spellings flytectl's docs and tests use.
scope_lines() {
  case "$1" in
    project) echo "project: $P" ;;
    domain) printf 'domain: development\nproject: %s\n' "$P" ;;
    workflow) printf 'Domain: production\nProject: %s\nWorkflow: %s\n' "$P" "$WF" ;;
  esac
}
for level in project domain workflow; do
  n=$([[ $level == project ]] && echo 1 || ([[ $level == domain ]] && echo 2 || echo 3))
  { scope_lines $level; cat <<YAML
defaults:
  cpu: $n
  memory: ${n}00Mi
  ephemeral_storage: ${n}Gi
limits:
  cpu: "$((n * 2))"
  memory: ${n}Gi
YAML
  } > "$in/tra-$level.yaml"
  { scope_lines $level; cat <<YAML
attributes:
  "projectQuotaCpu": "$((n * 4))"
  projectQuotaMemory: ${n}0Gi
YAML
  } > "$in/cra-$level.yaml"
  { scope_lines $level; printf 'tags:\n  - q-%s\n  - shared\n' "$level"; } > "$in/eq-$level.yaml"
  { scope_lines $level; printf 'value: cluster-%s\n' "$level"; } > "$in/ecl-$level.yaml"
  { scope_lines $level; cat <<YAML
overrides:
  - task_type: python_task # Task type for which to apply plugin implementation overrides
    plugin_id:             # Plugin id(s) to be used in place of the default for the task type.
      - plugin_override1
      - plugin_$level
    missing_plugin_behavior: 1 # Behavior when no specified plugin_id has an associated handler. 0 : FAIL , 1: DEFAULT
  - Task_Type: spark
    plugin_id: [databricks]
    missing_plugin_behavior: 0
YAML
  } > "$in/po-$level.yaml"
  { scope_lines $level; cat <<YAML
MAX_PARALLELISM: $((n * 5))
security_context:
  run_as:
    k8s_service_account: sa-$level
raw_output_data_config:
  output_location_prefix: s3://bucket/$level
labels:
  values: {team: ml, level: $level}
annotations:
  values:
    note: "$level"
interruptible:
  value: true
overwrite_cache: true
envs:
  values:
    - key: LEVEL
      value: $level
YAML
  } > "$in/wec-$level.yaml"
done
# The type forced with --type (a file that holds no attribute keys is an empty value).
scope_lines domain | sed 's/development/staging/' > "$in/eq-staging-empty.yaml"
files=("$in"/*.yaml)

# 1. An invalid file: nothing is written, the unknown key is named with file:line.
printf 'project: %s\ndomain: development\nvalue: x\nvalu: y\n' "$P" > "$tmp/bad.yaml"
out="$("$bin" import --from-flytectl "${files[@]}" "$tmp/bad.yaml" --out "$tmp/none" 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && ok "an invalid file fails the import (exit 1)" || bad "invalid file: exit $rc: $out"
grep -q "bad.yaml:4:1: error\[unknown_field\]: valu: unknown key 'valu'" <<<"$out" &&
  ok "the unknown key is named with file:line" || bad "unknown key not named: $out"
[[ ! -e "$tmp/none" ]] && ok "nothing written" || bad "files were written: $(find "$tmp/none")"

# 2. --type on a file whose type cannot be inferred; the rest inferred from their keys.
out="$("$bin" import --from-flytectl "${files[@]}" --out "$tmp/none" 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && grep -q "eq-staging-empty.yaml.*cannot be inferred" <<<"$out" &&
  ok "a file without attribute keys needs --type" || bad "no-keys file: exit $rc: $out"
"$bin" import --from-flytectl "$in/eq-staging-empty.yaml" --type execution-queue \
  --out "$tmp/typed" > "$tmp/typed.log" 2>&1 && grep -q "executionQueueAttributes: {}" \
  "$tmp/typed/projects/$P/staging.yaml" && ok "--type execution-queue" ||
  { bad "--type"; cat "$tmp/typed.log"; }
rm "$in/eq-staging-empty.yaml"; files=("$in"/*.yaml)

# It reads files only: a FlyteAdmin target next to it is refused, not silently ignored.
out="$("$bin" import --from-flytectl "$in/eq-project.yaml" --state-dir "$tmp/s" --out "$tmp/none" 2>&1)"
[[ $? -ne 0 && ! -e "$tmp/none" ]] && grep -q "excludes" <<<"$out" &&
  ok "--from-flytectl with a target option is refused" || bad "target option accepted: $out"

# 3. --skip-invalid writes the valid files.
out="$("$bin" import --from-flytectl "$tmp/bad.yaml" "$in/eq-project.yaml" --skip-invalid \
  --out "$tmp/skip" 2>&1)"; rc=$?
[[ $rc -eq 0 && -f "$tmp/skip/projects/$P/overrides.yaml" ]] &&
  grep -q "1 invalid, left out" <<<"$out" && ok "--skip-invalid writes the valid files" ||
  bad "--skip-invalid: exit $rc: $out"

# 4. The import of all eighteen files.
"$bin" import --from-flytectl "${files[@]}" --out "$tmp/repo" > "$tmp/import.out" 2> "$tmp/import.err"; rc=$?
[[ $rc -eq 0 ]] && ok "import of ${#files[@]} files (exit 0)" ||
  { bad "import: exit $rc"; cat "$tmp/import.out" "$tmp/import.err"; }
# validate's own message for the same thing, written as a flytecd document.
mkdir -p "$tmp/po-doc"
printf 'apiVersion: flytecd/v1\nkind: Overrides\nproject: %s\nspec:\n  pluginOverrides:\n    overrides: [{taskType: python_task}]\n' \
  "$P" > "$tmp/po-doc/po.yaml"
msg="$("$bin" validate "$tmp/po-doc" 2>&1 | sed -n 's/.*error\[unsupported_attribute\]: spec\.pluginOverrides: //p')"
[[ -n "$msg" ]] || bad "validate does not refuse a project-scope plugin override"
grep -qF "po-project.yaml:2:1: error[unsupported_attribute]: overrides: $msg" "$tmp/import.err" &&
  grep -q "skipped .*po-project.yaml" "$tmp/import.err" &&
  ok "the project-scope plugin override is skipped with validate's message" ||
  { bad "project-scope plugin override not reported"; cat "$tmp/import.err"; }
for f in overrides.yaml development.yaml "workflows/$WF.yaml"; do
  [[ -f "$tmp/repo/projects/$P/$f" ]] && ok "layout: projects/$P/$f" || bad "no projects/$P/$f"
done
[[ $(grep -c '^kind: Overrides' "$tmp/repo/projects/$P/development.yaml") -eq 1 ]] &&
  ok "six files of one scope merge into one document" || bad "development.yaml is not one document"
out="$("$bin" import --from-flytectl "${files[@]}" --out "$tmp/repo" 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && grep -q "already exists" <<<"$out" && ok "existing files are not overwritten" ||
  bad "re-import over existing files: exit $rc: $out"

# 5. validate, apply against the embedded emulator, read back.
cat > "$tmp/repo/projects/$P/project.yaml" <<YAML
apiVersion: flytecd/v1
kind: Project
id: $P
name: $P
YAML
"$bin" validate "$tmp/repo" > "$tmp/validate.out" 2>&1 && ok "flytecd validate passes" ||
  { bad "validate"; cat "$tmp/validate.out"; }
"$bin" apply --repo "$tmp/repo" --state-dir "$tmp/state" --log-level warn > "$tmp/apply.log" 2>&1 &&
  ok "apply into the embedded emulator" || { bad "apply"; tail -30 "$tmp/apply.log"; }
"$bin" import --state-dir "$tmp/state" --out "$tmp/live" --log-level warn > "$tmp/live.log" 2>&1 &&
  ok "live state read back (flytecd import)" || { bad "import of live state"; cat "$tmp/live.log"; }

python3 - "$in" "$tmp/live" <<'PY' || fail=1
import glob, os, re, sys, yaml
src, live = sys.argv[1], sys.argv[2]
KEYS = {"defaults": "taskResourceAttributes", "limits": "taskResourceAttributes",
        "attributes": "clusterResourceAttributes", "tags": "executionQueueAttributes",
        "value": "executionClusterLabel", "overrides": "pluginOverrides"}
ENUMS = {"missingPluginBehavior": {0: "FAIL", 1: "USE_DEFAULT"}}
def camel(k):
    k = k.lower()
    return re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), k)
def norm(v, maps=False, flytectl=True):
    # Protobuf JSON as flytecd prints it: camelCase keys (not in maps), wrappers bare, zero
    # values left out, scalars as strings.
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            ck = k if maps or not flytectl else camel(k)
            if ck in ENUMS: x = ENUMS[ck].get(x, x)
            if isinstance(x, dict) and list(map(str.lower, x)) == ["value"] and ck == "interruptible":
                x = list(x.values())[0]
            x = norm(x, (ck == "attributes" or (ck == "values" and isinstance(x, dict))), flytectl)
            if x not in ("", "0", "false", "FAIL", [], {}, None): out[ck] = x
        return out
    if isinstance(v, list): return [norm(x, False, flytectl) for x in v]
    if isinstance(v, bool): return "true" if v else "false"
    return str(v)
want = {}
for path in sorted(glob.glob(os.path.join(src, "*.yaml"))):
    d = yaml.safe_load(open(path))
    scope = tuple(str(d.pop(next((k for k in list(d) if k.lower() == s), s), "") or "")
                  for s in ("project", "domain", "workflow"))
    key = next((KEYS[k.lower()] for k in d if k.lower() in KEYS), "workflowExecutionConfig")
    want[(scope, key)] = (os.path.basename(path), norm(d))
got = {}
for path in glob.glob(os.path.join(live, "**", "*.yaml"), recursive=True):
    for doc in yaml.safe_load_all(open(path)):
        if not doc or doc.get("kind") != "Overrides": continue
        scope = (doc["project"], doc.get("domain", ""), doc.get("workflow", ""))
        for key, value in doc["spec"].items():
            got[(scope, key)] = norm(value, flytectl=False)
ok = True
skipped = (("flytesnacks", "", ""), "pluginOverrides")
for k, (name, value) in sorted(want.items()):
    if k == skipped:
        if k in got: ok = False; print(f"FAIL {name}: FlyteAdmin cannot store it, yet it is live")
        continue
    if got.get(k) != value:
        ok = False
        print(f"FAIL {name}: live {k} is {got.get(k)}, the file says {value}")
extra = set(got) - set(want)
if extra: ok = False; print(f"FAIL live rows no file asked for: {sorted(extra)}")
if ok: print(f"ok every value of {len(want) - 1} files reads back from the emulator as the file says")
sys.exit(0 if ok else 1)
PY
exit $fail
