#!/usr/bin/env bash
# Builds the .deb from a configured build directory, installs it with dpkg -i on this machine,
# and checks what was installed: the binary runs, the unit passes `systemd-analyze verify`, its
# exposure score is at most 2.0, the config is a conffile and dependencies came from shlibdeps;
# the man page and the bash/zsh/fish completion are installed and work; lintian reports no error
# (overrides, each with its reason, are in packaging/deb/lintian-overrides).
#   tests/packaging/deb_test.sh build
# Needs root (dpkg -i). Leaves the package installed (CI machines are throwaway); pass
# --purge to remove it afterwards.
set -euo pipefail
build="${1:?usage: deb_test.sh BUILD_DIR [--purge]}"
purge="${2:-}"
sudo_cmd=()
[[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)

rm -f "$build"/flytecd_*.deb
(cd "$build" && cpack -G DEB >/dev/null 2>&1) || (cd "$build" && cpack -G DEB)
deb=$(ls "$build"/flytecd_*.deb)
echo "deb: $deb ($(du -h "$deb" | cut -f1))"
dpkg-deb --info "$deb" | sed -n 's/^ \(Package\|Version\|Architecture\|Depends\):/  \1:/p'
# Dependencies must come from dpkg-shlibdeps (libgit2, libgrpc++, ...), not be empty.
[[ "$(dpkg-deb --field "$deb" Depends)" == *libgit2* ]] || { echo "FAIL: Depends lacks libgit2 (shlibdeps?)"; exit 1; }
contents=$(dpkg-deb --contents "$deb")
for f in /usr/bin/flytecd /usr/lib/systemd/system/flytecd.service /etc/flytecd/config.yaml \
         /usr/share/doc/flytecd/README.md /usr/share/doc/flytecd/copyright \
         /usr/share/doc/flytecd/examples/repo-layout-example/README.md \
         /usr/share/doc/flytecd/changelog.gz /usr/share/man/man1/flytecd.1.gz \
         /usr/share/bash-completion/completions/flytecd /usr/share/zsh/vendor-completions/_flytecd \
         /usr/share/fish/vendor_completions.d/flytecd.fish /usr/share/lintian/overrides/flytecd; do
  grep -q " \.$f\$" <<<"$contents" || { echo "FAIL: $f is not in the package"; exit 1; }
done
# The licence (issue 21): Apache-2.0, named in the copyright file in the machine-readable format.
dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/share/doc/flytecd/copyright | grep -qx 'License: Apache-2.0' \
  || { echo "FAIL: the copyright file does not name Apache-2.0"; exit 1; }
version=$(dpkg-deb --field "$deb" Version)
changelog_version=$(dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/share/doc/flytecd/changelog.gz | gzip -dc \
  | sed -n '1s/^flytecd (\([^)]*\)).*/\1/p')
[[ "$changelog_version" == "$version" ]] || { echo "FAIL: changelog's version '$changelog_version' is not $version"; exit 1; }
command -v lintian >/dev/null 2>&1 || { echo "FAIL: lintian not found: run packaging/setup-debian.sh --tests" >&2; exit 1; }
lint=$(lintian --tag-display-limit 0 "$deb" 2>&1 | grep -v '^running with root privileges' || true)
echo "lintian: ${lint:-no findings}"
if grep -q '^E:' <<<"$lint"; then echo "FAIL: lintian reports errors"; exit 1; fi

"${sudo_cmd[@]}" dpkg -i "$deb"
/usr/bin/flytecd --version
[[ "$(dpkg-query -W -f='${Conffiles}' flytecd)" == *" /etc/flytecd/config.yaml "* ]] \
  || { echo "FAIL: /etc/flytecd/config.yaml is not a conffile"; exit 1; }
unit=/usr/lib/systemd/system/flytecd.service
systemd-analyze verify "$unit"
score=$(systemd-analyze security --offline=true "$unit" 2>&1 | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
echo "systemd-analyze security --offline=true $unit: exposure $score"
awk -v s="$score" 'BEGIN { exit !(s != "" && s <= 2.0) }' || { echo "FAIL: exposure $score > 2.0"; exit 1; }
# The man page is found by man; the installed completion scripts are the binary's and load.
[[ "$(man -w flytecd)" == /usr/share/man/man1/flytecd.1.gz ]] || { echo "FAIL: man -w flytecd: $(man -w flytecd 2>&1)"; exit 1; }
MANWIDTH=80 man flytecd 2>/dev/null | grep -q 'flytecd plan' || { echo "FAIL: man flytecd does not render the commands"; exit 1; }
cmp -s /usr/share/bash-completion/completions/flytecd <(/usr/bin/flytecd completion bash) \
  || { echo "FAIL: the installed bash completion is not the binary's"; exit 1; }
bash -c 'source /usr/share/bash-completion/completions/flytecd && complete -p flytecd' | grep -q -- '-F _flytecd' \
  || { echo "FAIL: the bash completion does not register"; exit 1; }
if command -v zsh >/dev/null 2>&1; then zsh -n /usr/share/zsh/vendor-completions/_flytecd; fi
if command -v fish >/dev/null 2>&1; then
  fish -c 'complete -C "flytecd val"' | grep -q '^validate' || { echo "FAIL: fish does not load the completion"; exit 1; }
fi
echo "man page and completion: installed and working"
# The installed default configuration is valid for the installed binary.
/usr/bin/flytecd validate /usr/share/doc/flytecd/examples/repo-layout-example >/dev/null
if [[ "$purge" == --purge ]]; then "${sudo_cmd[@]}" dpkg --purge flytecd >/dev/null; fi
echo "deb: ok"
