#!/usr/bin/env bash
# The pure core (flytecd_core + flytecd_base, linked whole into flytecd_core_link_check) needs no
# transport library at run time: no libgit2, libcurl or gRPC, directly (readelf -d NEEDED),
# through another library (ldd), or linked in from a static archive (gRPC, protobuf and Abseil
# are, packaging/static-grpc.cmake: their code would be in the program, nm).
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
if ! grep -q '^libyaml-cpp\.so' <<<"$needed"; then
  echo "FAIL: $bin does not link libyaml-cpp: is this the core's link check?" >&2
  exit 1
fi
# protobuf's code is in it, from libprotobuf.so or its archive.
defined="$(nm -C --defined-only "$bin" 2>/dev/null || true)"
if ! grep -q '^libprotobuf\.so' <<<"$needed" && ! grep -q ' google::protobuf::Message::' <<<"$defined"; then
  echo "FAIL: $bin holds no protobuf: is this the core's link check?" >&2
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
if bad="$(grep -m5 -E ' (grpc::|grpc_[a-z_]+\(|git_[a-z_]+\(|curl_[a-z_]+\(|sqlite3_[a-z_]+\()' <<<"$defined")"; then
  echo "FAIL: the core links a transport library statically (its code is in the program):" >&2
  echo "$bad" | sed 's/^/  /' >&2
  status=1
fi
[[ $status -eq 0 ]] && echo "ok: no libgit2, libcurl, gRPC, libssh2 or SQLite"
exit $status
