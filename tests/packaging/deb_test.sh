#!/usr/bin/env bash
# Builds the .deb from a configured build directory, installs it with dpkg -i on this machine,
# and checks what was installed: the binary runs, the unit passes `systemd-analyze verify`, its
# exposure score is at most 2.0, the config is a conffile and dependencies came from shlibdeps.
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
         /usr/share/doc/flytecd/examples/repo-layout-example/README.md; do
  grep -q " \.$f\$" <<<"$contents" || { echo "FAIL: $f is not in the package"; exit 1; }
done

"${sudo_cmd[@]}" dpkg -i "$deb"
/usr/bin/flytecd --version
[[ "$(dpkg-query -W -f='${Conffiles}' flytecd)" == *" /etc/flytecd/config.yaml "* ]] \
  || { echo "FAIL: /etc/flytecd/config.yaml is not a conffile"; exit 1; }
unit=/usr/lib/systemd/system/flytecd.service
systemd-analyze verify "$unit"
score=$(systemd-analyze security --offline=true "$unit" 2>&1 | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
echo "systemd-analyze security --offline=true $unit: exposure $score"
awk -v s="$score" 'BEGIN { exit !(s != "" && s <= 2.0) }' || { echo "FAIL: exposure $score > 2.0"; exit 1; }
# The installed default configuration is valid for the installed binary.
/usr/bin/flytecd validate /usr/share/doc/flytecd/examples/repo-layout-example >/dev/null
if [[ "$purge" == --purge ]]; then "${sudo_cmd[@]}" dpkg --purge flytecd >/dev/null; fi
echo "deb: ok"
