#!/usr/bin/env bash
# Idempotent developer/CI setup for flytecd on Debian 12:
#   1. the Debian packages flytecd builds and tests against;
#   2. the pinned official Flyte IDL (npm package @flyteorg/flyteidl, see packaging/idl/).
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
  clang libclang-rt-14-dev llvm-14  # fuzz targets: clang 14, libFuzzer/ASan runtimes, symbolizer
  # packaging: CPack DEB (dpkg-shlibdeps, file), manifest checks (python3-yaml)
  dpkg-dev file python3-yaml
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

# The Flyte IDL, exactly as pinned by packaging/idl/package-lock.json.
if [[ ! -f "$here/idl/node_modules/@flyteorg/flyteidl/protos/flyteidl/admin/matchable_resource.proto" ]]; then
  echo "setup: installing the pinned Flyte IDL (npm ci)"
  (cd "$here/idl" && npm ci --no-audit --no-fund --ignore-scripts)
fi
echo "setup: ok"
