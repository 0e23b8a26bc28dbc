#!/bin/bash
# make install / make uninstall into a DESTDIR with a custom PREFIX, from a
# private copy of the tree: every promised file lands where it should, and
# uninstall removes them all.
#
# usage: install-check.sh KDIR KRELEASE OUTDIR
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kdir=${1:?} krel=${2:?} out=${3:?}
rm -rf "$out"
mkdir -p "$out/tree" "$out/root"
(cd "$KWQ_ROOT" && cp -r Makefile Kbuild dkms.conf src include kunit userspace tools "$out/tree/")
dest=$out/root
make -C "$out/tree" KDIR="$kdir" KRELEASE="$krel" DESTDIR="$dest" PREFIX=/opt/kwq install
# Debian's kernels compress modules at modules_install (kwq.ko.xz).
ko=$(ls "$dest/lib/modules/$krel/updates/"kwq.ko* 2>/dev/null | head -1)
[ -n "$ko" ] || die "make install did not install the module"
want=(
	opt/kwq/include/linux/kwq.h
	opt/kwq/include/kwq.h
	opt/kwq/bin/kwqctl
	lib/udev/rules.d/60-kwq.rules
)
for f in "${want[@]}"; do
	[ -e "$dest/$f" ] || die "make install did not install $f"
done
ls "$dest"/opt/kwq/lib*/libkwq.a "$dest"/opt/kwq/lib*/pkgconfig/libkwq.pc >/dev/null ||
	die "make install did not install libkwq.a and libkwq.pc"
grep -q '^prefix=/opt/kwq' "$dest"/opt/kwq/lib*/pkgconfig/libkwq.pc ||
	die "libkwq.pc does not name PREFIX"
modinfo -F description "$ko"
make -C "$out/tree" KDIR="$kdir" KRELEASE="$krel" DESTDIR="$dest" PREFIX=/opt/kwq uninstall
left=$(find "$dest" -type f)
[ -z "$left" ] || die "make uninstall left files behind: $left"
echo "install/uninstall OK"
