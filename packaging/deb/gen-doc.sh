#!/bin/sh
# Writes the man page (gzipped) and the bash, zsh and fish completion scripts of the flytecd
# binary $1, and the Debian changelog $3 gzipped, into directory $2. Run by the build
# (packaging/cpack.cmake).
set -eu
bin="$1"
out="$2"
mkdir -p "$out"
"$bin" man >"$out/flytecd.1"
gzip -9nf "$out/flytecd.1"
"$bin" completion bash >"$out/flytecd.bash"
"$bin" completion zsh >"$out/_flytecd"
"$bin" completion fish >"$out/flytecd.fish"
gzip -9n <"$3" >"$out/changelog.gz"
