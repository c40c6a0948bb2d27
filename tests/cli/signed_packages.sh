#!/usr/bin/env bash
# Issue 28: register only what was signed, the binary as a user runs it. A real docker-registry
# holds two packages; one carries cosign's key signature (sha256-<hex>.sig, made with openssl),
# the other none. Both registrations require keys/cosign.pub:
#  * validate accepts the policy, and rejects with file:line a regexp that does not compile, a
#    key that is not in the repository and a policy on a non-OCI package;
#  * apply (embedded emulator) registers the signed package, says who signed it, fails the
#    unsigned one as "unsigned" at its file:line, and exits 1; -o json carries the signature;
#  * get registrations shows the signer; a second apply changes nothing for the signed one.
# Usage: signed_packages.sh FLYTECD_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
source "$src/tests/cli/lib.sh"
reg_sh="$src/tests/oci/registry.sh"
if ! command -v docker-registry > /dev/null; then
  echo "SKIP docker-registry is not installed (packaging/setup-debian.sh --tests)"
  [[ "${FLYTECD_REQUIRE_TOOLS:-}" == 1 ]] && exit 1
  exit 77
fi
trap '"$reg_sh" stop "$tmp/registry" 2>/dev/null; cleanup' EXIT
mkdir -p "$tmp/registry"
host="$("$reg_sh" start "$tmp/registry")" || { echo "FAIL registry did not start"; exit 1; }
pkgs="$src/../shared/fixtures/flyte-packages"
[[ -d "$pkgs" ]] || pkgs=/work/shared/fixtures/flyte-packages
signed="$("$reg_sh" push "http://$host" flyte/signed v1 "$pkgs/valid-register.tgz")"
"$reg_sh" push "http://$host" flyte/unsigned v1 "$pkgs/flyte-package.tgz" > /dev/null

repo="$tmp/repo"
cp -r "$example" "$repo"
mkdir -p "$repo/keys"
openssl ecparam -genkey -name prime256v1 -noout -out "$tmp/cosign.key" 2> /dev/null
openssl ec -in "$tmp/cosign.key" -pubout -out "$repo/keys/cosign.pub" 2> /dev/null
"$reg_sh" sign "http://$host" flyte/signed "$signed" "$tmp/cosign.key"
# registration NAME REPO_PATH FILE: a WorkflowRegistration of oci://$host/REPO_PATH:v1 whose
# verify: block is read from stdin (indented by the caller).
registration() {
  { printf 'apiVersion: flytecd/v1\nkind: WorkflowRegistration\nmetadata: {name: %s}\n' "$1"
    printf 'project: flytesnacks\ndomain: development\nversion: v1\n'
    printf 'package: oci://%s/%s:v1\nverify:\n' "$host" "$2"
    cat; } > "$3"
}
for name in signed unsigned; do
  printf '  provider: cosign\n  key: keys/cosign.pub\n' |
    registration "$name" "flyte/$name" "$repo/registrations/$name.yaml"
done

# 1. validate: the policy's syntax and files.
out="$("$bin" validate "$repo" 2>&1)"; rc=$?
[[ $rc -eq 0 ]] && ok "validate accepts the policies" || bad "validate: exit $rc: $out"
bad_repo="$tmp/bad"
cp -r "$repo" "$bad_repo"
registration regexp flyte/signed "$bad_repo/registrations/regexp.yaml" <<'YAML'
  matchOIDCIdentity:
    - issuer: ^https://token\.actions\.githubusercontent\.com$
      subject: ^https://github\.com/acme/(flows$
YAML
sed -i 's|key: keys/cosign.pub|key: keys/missing.pub|' "$bad_repo/registrations/unsigned.yaml"
out="$("$bin" validate "$bad_repo" 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && ok "validate rejects the broken policies" || bad "validate: exit $rc"
grep -q 'registrations/regexp.yaml:11:.*verify.matchOIDCIdentity\[0\].subject.*is not an RE2 expression' <<<"$out" &&
  ok "a regexp that does not compile: file:line and RE2's reason" || bad "regexp: $out"
grep -q 'registrations/unsigned.yaml:9:.*verify.key.*cannot read keys/missing.pub' <<<"$out" &&
  ok "a key that is not in the repository: file:line" || bad "missing key: $out"

# A keyless policy needs the configuration's trusted root: validate --config says so at the policy.
keyless_repo="$tmp/keyless"
cp -r "$repo" "$keyless_repo"
registration regexp flyte/signed "$keyless_repo/registrations/regexp.yaml" <<'YAML'
  matchOIDCIdentity:
    - issuer: ^https://token\.actions\.githubusercontent\.com$
      subject: ^https://github\.com/acme/flows/.*$
YAML
printf 'packages: {plainHttpRegistries: ["%s"]}\n' "$host" > "$tmp/no-root.yaml"
out="$("$bin" validate --config "$tmp/no-root.yaml" "$keyless_repo" 2>&1)"
grep -q 'registrations/regexp.yaml:9:.*verify.matchOIDCIdentity: a keyless policy, and the configuration sets no packages.trustedRoot' <<<"$out" &&
  ok "validate --config: a keyless policy without packages.trustedRoot, at the policy" || bad "no trusted root: $out"

# 2. apply on the embedded emulator.
cat > "$tmp/config.yaml" <<YAML
repo: $repo
stateDir: $tmp/state
packages: {plainHttpRegistries: ["$host"], fetchTimeout: 20s}
YAML
out="$("$bin" apply --config "$tmp/config.yaml" 2>&1)"; rc=$?
[[ $rc -eq 1 ]] && ok "apply exits 1 (the unsigned registration failed)" || bad "apply: exit $rc: $(head -c 3000 <<<"$out")"
line="$(grep 'registration/flytesnacks/development/signed:' <<<"$out" | head -1)"
[[ "$line" == *"registered v1"* && "$line" == *"signed with key keys/cosign.pub (SHA256:"* ]] &&
  ok "the signed package registered, saying who signed it" || bad "signed: '$line'"
line="$(grep 'registration/flytesnacks/development/unsigned:' <<<"$out" | head -1)"
[[ "$line" == *"FAILED: (registrations/unsigned.yaml:1) unsigned: no signature for sha256:"* ]] &&
  ok "the unsigned package failed as unsigned at its file:line" || bad "unsigned: '$line'"
grep -q 'registration/flytesnacks/development/[a-z-]*: registered' <<<"$(grep -v '/signed:' <<<"$out")" &&
  ok "registrations without a policy still registered" || bad "others: $(grep '^registration' <<<"$out")"

# 3. get registrations and JSON show the signer; a second apply leaves the signed one in sync.
out="$("$bin" get registrations --config "$tmp/config.yaml" 2>&1)"
grep -A8 '^registration/flytesnacks/development/signed$' <<<"$out" | grep -q '  signature:   signed with key keys/cosign.pub (SHA256:[0-9a-f]*) over sha256:' &&
  ok "get registrations shows the signer" || bad "get registrations: $(head -c 2000 <<<"$out")"
"$bin" apply --config "$tmp/config.yaml" -o json > "$tmp/apply.json" 2> /dev/null
python3 - "$tmp/apply.json" "$signed" <<'PY' && ok "-o json: the signature of the signed registration, in sync" || bad "apply -o json: $(head -c 2000 "$tmp/apply.json")"
import json, sys
d = json.load(open(sys.argv[1]))
items = {i["name"]: i for i in d["registrations"]}
s = items["signed"]
assert s["state"] == "in-sync", s["state"]
assert s["signature"]["digest"] == sys.argv[2], s["signature"]
assert s["signature"]["by"].startswith("signed with key keys/cosign.pub"), s["signature"]
assert items["unsigned"]["signature"] is None
PY
exit $fail
