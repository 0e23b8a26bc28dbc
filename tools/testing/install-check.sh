#!/bin/bash
# make install / make uninstall into a DESTDIR with a custom PREFIX, from a
# private copy of the tree: every promised file lands where it should, a
# consumer module (the example's two files, alone in an empty directory)
# builds against the installed header and Module.symvers only, and
# uninstall removes them all.
#
# usage: install-check.sh KDIR KRELEASE OUTDIR
# leaves the consumer module in OUTDIR/kwq_example.ko (check.sh loads it).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kdir=${1:?} krel=${2:?} out=${3:?}
need_pkgs python3-docutils:rst2man man-db:man
rm -rf "$out"
mkdir -p "$out/tree" "$out/root"
out=$(realpath "$out")
(cd "$KWQ_ROOT" && cp -r Makefile Kbuild dkms.conf src include kunit userspace tools \
	Documentation "$out/tree/")
dest=$out/root
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$KWQ_ROOT/dkms.conf")
kwqdir=$dest/usr/src/kwq-$ver
make -C "$out/tree" KDIR="$kdir" KRELEASE="$krel" DESTDIR="$dest" PREFIX=/opt/kwq install
# Debian's kernels compress modules at modules_install (kwq.ko.xz).
ko=$(ls "$dest/lib/modules/$krel/updates/"kwq.ko* 2>/dev/null | head -1)
[ -n "$ko" ] || die "make install did not install the module"
want=(
	opt/kwq/include/linux/kwq.h
	opt/kwq/include/libkwq.h
	opt/kwq/bin/kwqctl
	opt/kwq/share/bash-completion/completions/kwqctl
	opt/kwq/share/man/man1/kwqctl.1
	opt/kwq/share/man/man3/libkwq.3
	opt/kwq/share/man/man4/kwq.4
	opt/kwq/lib/systemd/system/kwq-metrics.service
	opt/kwq/lib/systemd/system/kwq-metrics.timer
	lib/udev/rules.d/60-kwq.rules
	"usr/src/kwq-$ver/include/linux/kwq.h"
	"usr/src/kwq-$ver/include/uapi/linux/kwq.h"
	"usr/src/kwq-$ver/symvers/$krel/Module.symvers"
)
for f in "${want[@]}"; do
	[ -e "$dest/$f" ] || die "make install did not install $f"
done
ls "$dest"/opt/kwq/lib*/libkwq.a "$dest"/opt/kwq/lib*/pkgconfig/libkwq.pc >/dev/null ||
	die "make install did not install libkwq.a and libkwq.pc"
grep -q '^prefix=/opt/kwq' "$dest"/opt/kwq/lib*/pkgconfig/libkwq.pc ||
	die "libkwq.pc does not name PREFIX"
modinfo -F description "$ko"
grep -qx 'ExecStart=/opt/kwq/bin/kwqctl stats --all --prometheus -o /var/lib/prometheus/node-exporter/kwq.prom' \
	"$dest/opt/kwq/lib/systemd/system/kwq-metrics.service" ||
	die "kwq-metrics.service does not run the installed kwqctl"
# The man pages render, without a warning from groff.
for p in "$dest"/opt/kwq/share/man/man*/*; do
	w=$(MANWIDTH=80 man -l "$p" 2>&1 >/dev/null)
	[ -z "$w" ] || die "man -l $p: $w"
	MANWIDTH=80 man -l "$p" | grep -q '^NAME' || die "man -l $p has no NAME"
done
grep -q '	kwq_create	' "$kwqdir/symvers/$krel/Module.symvers" ||
	die "the installed Module.symvers does not export kwq_create"
# A consumer module needs nothing else.
build_consumer "$kdir" "$kwqdir" "$out/kwq_example.ko"

make -C "$out/tree" KDIR="$kdir" KRELEASE="$krel" DESTDIR="$dest" PREFIX=/opt/kwq uninstall
left=$(find "$dest" -type f)
[ -z "$left" ] || die "make uninstall left files behind: $left"
echo "install/uninstall OK"
