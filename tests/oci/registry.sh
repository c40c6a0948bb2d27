#!/usr/bin/env bash
# Test/benchmark helper: a plain loopback docker-registry and a curl push client.
#   registry.sh start DIR          start a plain-http registry on a free 127.0.0.1 port; prints
#                                  host:port (PID in DIR/registry.pid, data in DIR/data)
#   registry.sh stop DIR           stop it (by PID; SIGTERM, then SIGKILL after 5 s)
#   registry.sh push http://HOST:PORT REPO TAG FILE
#                                  push FILE as a one-layer Flyte package artifact (the recipe's
#                                  format); prints the manifest digest
#   registry.sh sign http://HOST:PORT REPO DIGEST KEY [REFERENCE]
#                                  cosign's key signature of manifest DIGEST: the simple-signing
#                                  payload (docker-reference REFERENCE, default HOST:PORT/REPO)
#                                  signed with the PEM private KEY by openssl (ASN.1 ECDSA over
#                                  SHA-256), pushed under the tag sha256-<hex>.sig
set -euo pipefail

free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

start() {
  local d=$1 port
  mkdir -p "$d/data"
  port=$(free_port)
  cat > "$d/config.yml" <<EOC
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $d/data
http:
  addr: 127.0.0.1:$port
  secret: test-only-not-secret
EOC
  docker-registry serve "$d/config.yml" > "$d/registry.log" 2>&1 &
  echo $! > "$d/registry.pid"
  for _ in $(seq 200); do
    if curl -s -o /dev/null "http://127.0.0.1:$port/v2/"; then echo "127.0.0.1:$port"; return 0; fi
    sleep 0.05
  done
  echo "registry did not start; log:" >&2; cat "$d/registry.log" >&2; return 1
}

stop() {
  local d=$1 pid
  [[ -f "$d/registry.pid" ]] || return 0
  pid=$(cat "$d/registry.pid")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$d/registry.pid"
}

push_blob() { # base repo file -> digest
  local base=$1 repo=$2 file=$3 digest loc
  digest="sha256:$(sha256sum "$file" | cut -d' ' -f1)"
  loc=$(curl -sS -D - -o /dev/null -X POST "$base/v2/$repo/blobs/uploads/" |
        grep -i '^location:' | cut -d' ' -f2- | tr -d '\r')
  case "$loc" in http*) ;; *) loc="$base$loc" ;; esac
  case "$loc" in *\?*) loc="$loc&" ;; *) loc="$loc?" ;; esac
  curl -sS -f -o /dev/null -X PUT -H 'Content-Type: application/octet-stream' \
    --data-binary "@$file" "${loc}digest=${digest/:/%3A}"
  echo "$digest"
}

push() {
  local base=$1 repo=$2 tag=$3 file=$4 t cfg cd ld size manifest
  t=$(mktemp -d)
  printf '{"packageFormat":"pyflyte-package","fileName":"flyte-package.tgz"}' > "$t/config.json"
  cd=$(push_blob "$base" "$repo" "$t/config.json")
  ld=$(push_blob "$base" "$repo" "$file")
  size=$(stat -c%s "$file")
  manifest=$(printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"application/vnd.flyte.package.v1","config":{"mediaType":"application/vnd.flyte.package.config.v1+json","digest":"%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"%s","size":%s,"annotations":{"org.opencontainers.image.title":"flyte-package.tgz"}}]}' \
    "$cd" "$(stat -c%s "$t/config.json")" "$ld" "$size")
  printf %s "$manifest" > "$t/manifest.json"
  curl -sS -f -o /dev/null -X PUT -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' \
    --data-binary "@$t/manifest.json" "$base/v2/$repo/manifests/$tag"
  echo "sha256:$(sha256sum "$t/manifest.json" | cut -d' ' -f1)"
  rm -rf "$t"
}

sign() {
  local base=$1 repo=$2 digest=$3 key=$4 ref=${5:-} t cd ld sig manifest
  [[ -n "$ref" ]] || ref="${base#http://}/$repo"
  t=$(mktemp -d)
  printf '{"critical":{"identity":{"docker-reference":"%s"},"image":{"docker-manifest-digest":"%s"},"type":"cosign container image signature"},"optional":null}' \
    "$ref" "$digest" > "$t/payload.json"
  openssl dgst -sha256 -sign "$key" -out "$t/payload.sig" "$t/payload.json"
  sig=$(base64 -w0 < "$t/payload.sig")
  printf '{}' > "$t/config.json"
  cd=$(push_blob "$base" "$repo" "$t/config.json")
  ld=$(push_blob "$base" "$repo" "$t/payload.json")
  manifest=$(printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"%s","size":2},"layers":[{"mediaType":"application/vnd.dev.cosign.simplesigning.v1+json","digest":"%s","size":%s,"annotations":{"dev.cosignproject.cosign/signature":"%s"}}]}' \
    "$cd" "$ld" "$(stat -c%s "$t/payload.json")" "$sig")
  printf %s "$manifest" > "$t/manifest.json"
  curl -sS -f -o /dev/null -X PUT -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' \
    --data-binary "@$t/manifest.json" "$base/v2/$repo/manifests/sha256-${digest#sha256:}.sig"
  rm -rf "$t"
}

cmd=${1:-}; shift || true
case "$cmd" in
  start) start "$@" ;;
  stop) stop "$@" ;;
  push) push "$@" ;;
  sign) sign "$@" ;;
  *) echo "usage: $0 start DIR | stop DIR | push http://HOST:PORT REPO TAG FILE | sign http://HOST:PORT REPO DIGEST KEY [REFERENCE]" >&2; exit 2 ;;
esac
