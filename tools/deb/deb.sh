#!/bin/bash
# make deb: kwq's Debian packages (kwq-dkms, libkwq1, libkwq-dev, kwqctl)
# with debhelper and dh-dkms, built in a copy of the tree under
# $KWQ_OUT/deb (the tree itself is never written), then lintian on them.
# The version is dkms.conf's, the one place it lives: debian/changelog is
# written here from it.
#
# usage: deb.sh            the .deb files end up in $KWQ_OUT/deb
# KWQ_DEB_VERSION=V builds the packages (and the module, whose version is
# dkms.conf's) as version V: make check-system's upgrades (a version that
# sorts after dkms.conf's, e.g. 0.1.0+up1; the tree itself is untouched).
# Lintian's verdict is the exit status; its report is $KWQ_OUT/deb/lintian.txt.
set -euo pipefail
# shellcheck source=tools/testing/lib.sh
. "$(dirname "$0")/../testing/lib.sh"

need_pkgs "${KWQ_PKGS_DEB[@]}"
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$KWQ_ROOT/dkms.conf")
[ -n "$ver" ] || die "dkms.conf names no PACKAGE_VERSION"
if [ -n "${KWQ_DEB_VERSION:-}" ]; then
	[[ $KWQ_DEB_VERSION =~ ^[0-9][A-Za-z0-9.+~]*$ ]] ||
		die "KWQ_DEB_VERSION=$KWQ_DEB_VERSION is no Debian upstream version"
	ver=$KWQ_DEB_VERSION
fi
mkdir -p "$KWQ_OUT"
out=$(realpath "$KWQ_OUT")/deb
src=$out/kwq-$ver
rm -rf "$out"
mkdir -p "$src"

# The files git knows, as they are in the work tree now (a tree that is no
# git checkout: all of it but the build output).
cd "$KWQ_ROOT"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -z --cached | while IFS= read -r -d '' f; do
		[ -e "$f" ] && printf '%s\0' "$f"
	done | cpio -0 -pdm --quiet "$src"
	stamp=$(git log -1 --format=%ct)
	what="git $(git describe --always --dirty)"
else
	tar -c --exclude=./build --exclude=./userspace/build . | tar -x -C "$src"
	stamp=$(date +%s)
	what="a tree without git"
fi
# The copy's dkms.conf carries the version (KWQ_DEB_VERSION's, if given).
sed -i "s/^PACKAGE_VERSION=.*/PACKAGE_VERSION=\"$ver\"/" "$src/dkms.conf"

# One entry, the version of dkms.conf; the changes themselves are in
# Documentation/changelog.rst (and /usr/share/doc/*/changelog.gz).
maint=$(sed -n 's/^Maintainer: //p' debian/control)
cat >"$src/debian/changelog" <<EOF
kwq ($ver) unstable; urgency=medium

  * kwq $ver, built from $what.
    Documentation/changelog.rst lists the changes.

 -- $maint  $(date -u -R -d "@$stamp")
EOF

say "dpkg-buildpackage in $src (log: $out/build.log)"
(cd "$src" && SOURCE_DATE_EPOCH=$stamp dpkg-buildpackage -b -uc -us) >"$out/build.log" 2>&1 ||
	{ tail -30 "$out/build.log" >&2; die "dpkg-buildpackage failed (log: $out/build.log)"; }
ls "$out"/*.deb
changes=$(ls "$out"/kwq_"$ver"_*.changes)
# --fail-on warning: an error or a warning fails; each tag kept has an
# override with its reason in debian/*.lintian-overrides.
say "lintian $changes (report: $out/lintian.txt)"
if ! lintian --fail-on error,warning --info --display-info --show-overrides \
	"$changes" >"$out/lintian.txt" 2>&1; then
	cat "$out/lintian.txt" >&2
	die "lintian found the tags above"
fi
cat "$out/lintian.txt"
say "packages in $out: sudo apt install $out/kwq-dkms_${ver}_all.deb $out/kwqctl_${ver}_*.deb $out/libkwq1_${ver}_*.deb"
