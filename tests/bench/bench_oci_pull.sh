#!/usr/bin/env bash
# Benchmark (prints figures; never pass/fail): pull a 50 MiB random layer from a loopback
# docker-registry with flytecd's client, with curl (manifest + blob + openssl sha256, like the
# recipe's minimal pull, and a bare blob GET), and with `skopeo copy` to dir:, in the same run.
# Usage: tests/bench/bench_oci_pull.sh BUILD_DIR [RUNS=5] [MIB=50]
# Needs: docker-registry, curl, skopeo, python3; BUILD_DIR/tests/flytecd_bench_oci_pull built.
set -euo pipefail
BUILD=${1:?usage: $0 BUILD_DIR [RUNS] [MIB]}
RUNS=${2:-5}
MIB=${3:-50}
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REG="$here/../oci/registry.sh"
work="${TMPDIR:-/tmp}"  # lib.sh's helpers expect $work; only figure() is used here
source "$here/lib.sh"
BENCH="$BUILD/tests/flytecd_bench_oci_pull"
[[ -x "$BENCH" ]] || { echo "missing $BENCH (cmake --build $BUILD --target flytecd_bench_oci_pull)" >&2; exit 2; }
command -v skopeo >/dev/null || { echo "skopeo not installed (apt-get install skopeo)" >&2; exit 2; }

D=$(mktemp -d /tmp/flytecd-bench-oci-XXXXXX)
trap '"$REG" stop "$D/reg"; rm -rf "$D"' EXIT
HOST=$("$REG" start "$D/reg")
BASE="http://$HOST"
head -c $((MIB * 1024 * 1024)) /dev/urandom > "$D/layer.bin"
MD=$("$REG" push "$BASE" bench/pkg v1 "$D/layer.bin")
LD="sha256:$(sha256sum "$D/layer.bin" | cut -d' ' -f1)"
echo "registry $BASE (docker-registry $(docker-registry --version 2>/dev/null | awk '{print $3}'))," \
  "layer $MIB MiB $LD, manifest $MD, $RUNS runs each, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

now_ms() { date +%s%N; }
declare -A T
run() { # name cmd...
  local name=$1 s e; shift
  s=$(now_ms); "$@" > /dev/null; e=$(now_ms)
  T[$name]+="$(( (e - s) / 1000 )) "
}
curl_pull() { # manifest + layer digest + blob + openssl sha256 check (the recipe's minimal curl pull)
  local m l
  m=$(curl -sS -f -H 'Accept: application/vnd.oci.image.manifest.v1+json, application/vnd.oci.image.index.v1+json' "$BASE/v2/bench/pkg/manifests/v1")
  l=$(printf %s "$m" | grep -o '"layers":\[{"mediaType":"[^"]*","digest":"sha256:[0-9a-f]*' | grep -o 'sha256:[0-9a-f]*$')
  curl -sS -f -L -o "$D/curl.bin" "$BASE/v2/bench/pkg/blobs/$l"
  [[ "sha256:$(openssl dgst -sha256 -r "$D/curl.bin" | cut -d' ' -f1)" == "$l" ]]
}
curl_blob() { curl -sS -f -o "$D/blob.bin" "$BASE/v2/bench/pkg/blobs/$LD"; }
skopeo_pull() { skopeo copy -q --src-tls-verify=false "docker://$HOST/bench/pkg:v1" "dir:$D/sk"; }
flytecd_pull() { "$BENCH" "$HOST" bench/pkg v1 "$D/cache"; }

flytecd_pull | sed 's/^/warm-up: /'   # page cache and registry warm for every tool alike
for _ in $(seq "$RUNS"); do   # interleaved so background load hits every tool alike
  rm -rf "$D/cache" "$D/sk" "$D/curl.bin" "$D/blob.bin"   # cleanup outside the timings
  run flytecd flytecd_pull
  run curl curl_pull
  run curl-blob curl_blob
  run skopeo skopeo_pull
done
cmp -s "$D/cache/blobs/sha256/${LD#sha256:}" "$D/layer.bin" && echo "flytecd's cached bytes match the layer"

median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
F=$(echo "${T[flytecd]}" | median)
printf '%-38s %10s %10s %10s  %s\n' "tool" "median ms" "min ms" "max ms" "ratio to flytecd"
for k in flytecd curl curl-blob skopeo; do
  med=$(echo "${T[$k]}" | median)
  min=$(echo "${T[$k]}" | tr ' ' '\n' | grep -v '^$' | sort -n | head -1)
  max=$(echo "${T[$k]}" | tr ' ' '\n' | grep -v '^$' | sort -n | tail -1)
  label=$k
  case $k in
    flytecd) label="flytecd (manifest+blob+verify+cache)";;
    curl) label="curl (manifest+blob+openssl sha256)";;
    curl-blob) label="curl (bare blob GET)";;
    skopeo) label="skopeo copy to dir:";;
  esac
  awk -v l="$label" -v med="$med" -v min="$min" -v max="$max" -v f="$F" \
    'BEGIN { printf "%-38s %10.1f %10.1f %10.1f  %.2fx\n", l, med / 1000, min / 1000, max / 1000, med / f }'
done
C=$(echo "${T[curl]}" | median)
figure "OCI pull, flytecd" "$(awk -v f="$F" 'BEGIN { printf "%.1f", f / 1000 }')" ms \
  "$MIB MiB layer, median of $RUNS; vs curl + openssl sha256: $(awk -v f="$F" -v c="$C" 'BEGIN { printf "%.2fx", (c > 0 ? f / c : 0) }')"
