#!/bin/bash
# Build kwq through DKMS against Debian's 6.12 headers, in private trees
# (--sourcetree/--dkmstree), so the machine's own DKMS state is untouched.
# The POST_BUILD hook must leave that kernel's Module.symvers where consumer
# modules look for it (/usr/src/kwq-VERSION/symvers/RELEASE/Module.symvers),
# the example consumer must build against that tree alone, and POST_REMOVE
# must take the Module.symvers away again.
# Given the kwq-dkms package, the tree is the one the package installs
# in /usr/src/kwq-VERSION (dpkg-deb -x), dkms.conf and all: it alone must
# be enough.
#
# usage: dkms-check.sh KERNEL-RELEASE OUTDIR [kwq-dkms_VERSION_all.deb]
set -euo pipefail
. "$(dirname "$0")/lib.sh"

krel=${1:?} out=${2:?} deb=${3:-}
need_pkg dkms dkms
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$KWQ_ROOT/dkms.conf")
rm -rf "$out"
mkdir -p "$out/source/kwq-$ver" "$out/dkms" "$out/install"
out=$(realpath "$out")
if [ -n "$deb" ]; then
	dpkg-deb -x "$deb" "$out/deb"
	[ -f "$out/deb/usr/src/kwq-$ver/dkms.conf" ] || die "$deb has no usr/src/kwq-$ver/dkms.conf"
	rmdir "$out/source/kwq-$ver"
	mv "$out/deb/usr/src/kwq-$ver" "$out/source/"
else
	(cd "$KWQ_ROOT" && cp -r Makefile Kbuild dkms.conf src include kunit tools "$out/source/kwq-$ver/")
fi
# KWQ_OUT must not leak into the module's own make runs.
# --no-depmod: install and remove touch only the private --installtree.
d=(env -u KWQ_OUT dkms --sourcetree "$out/source" --dkmstree "$out/dkms"
	--installtree "$out/install" --no-depmod)
"${d[@]}" add -m kwq -v "$ver"
"${d[@]}" build -m kwq -v "$ver" -k "$krel"
ko=$(find "$out/dkms/kwq/$ver/$krel" -name 'kwq.ko*' | head -1)
[ -n "$ko" ] || die "DKMS built no kwq.ko"
modinfo "$ko" | grep -E '^(vermagic|version):'
symvers=$out/source/kwq-$ver/symvers/$krel/Module.symvers
[ -f "$symvers" ] || die "DKMS's POST_BUILD left no $symvers"
grep -q '	kwq_create	' "$symvers" || die "$symvers does not export kwq_create"
build_consumer "/lib/modules/$krel/build" "$out/source/kwq-$ver" "$out/kwq_example.ko"
# POST_REMOVE runs when dkms uninstalls the module from a kernel.
mkdir -p "$out/install/$krel"
"${d[@]}" install -m kwq -v "$ver" -k "$krel"
"${d[@]}" remove -m kwq -v "$ver" -k "$krel"
[ ! -e "$symvers" ] || die "DKMS's POST_REMOVE left $symvers behind"
echo "DKMS build/install/remove OK"
