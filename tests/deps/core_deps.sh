#!/usr/bin/env bash
# The pure core (flytecd_core + flytecd_base, linked whole into flytecd_core_link_check) needs no
# transport library at run time: no libgit2, libcurl or gRPC, directly (readelf -d NEEDED) or
# through another library (ldd).
set -euo pipefail
bin="$1"
forbidden='lib(git2|curl|grpc|grpc\+\+|gpr|ssh2|sqlite3)[^ ]*\.so'

needed="$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')"
if [[ -z "$needed" ]]; then
  echo "FAIL: readelf found no NEEDED entries in $bin (not a dynamic executable?)" >&2
  exit 1
fi
echo "NEEDED of $(basename "$bin"):"
echo "$needed" | sed 's/^/  /'
if ! grep -q '^libprotobuf\.so' <<<"$needed"; then
  echo "FAIL: $bin does not link libprotobuf: is this the core's link check?" >&2
  exit 1
fi

status=0
if bad="$(grep -E "$forbidden" <<<"$needed")"; then
  echo "FAIL: the core links a transport library directly:" >&2
  echo "$bad" | sed 's/^/  /' >&2
  status=1
fi
if bad="$(ldd "$bin" | grep -E "$forbidden")"; then
  echo "FAIL: the core needs a transport library through another library (ldd):" >&2
  echo "$bad" | sed 's/^/  /' >&2
  status=1
fi
[[ $status -eq 0 ]] && echo "ok: no libgit2, libcurl, gRPC, libssh2 or SQLite"
exit $status
