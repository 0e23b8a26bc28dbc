#!/bin/bash
# Build kwq through DKMS against Debian's 6.12 headers, in private trees
# (--sourcetree/--dkmstree), so the machine's own DKMS state is untouched.
#
# usage: dkms-check.sh KERNEL-RELEASE OUTDIR
set -euo pipefail
. "$(dirname "$0")/lib.sh"

krel=${1:?} out=${2:?}
need_pkg dkms dkms
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$KWQ_ROOT/dkms.conf")
rm -rf "$out"
mkdir -p "$out/source/kwq-$ver" "$out/dkms" "$out/install"
(cd "$KWQ_ROOT" && cp -r Makefile Kbuild dkms.conf src include kunit "$out/source/kwq-$ver/")
# KWQ_OUT must not leak into the module's own make runs.
d=(env -u KWQ_OUT dkms --sourcetree "$out/source" --dkmstree "$out/dkms" --installtree "$out/install")
"${d[@]}" add -m kwq -v "$ver"
"${d[@]}" build -m kwq -v "$ver" -k "$krel"
ko=$(find "$out/dkms/kwq/$ver/$krel" -name 'kwq.ko*' | head -1)
[ -n "$ko" ] || die "DKMS built no kwq.ko"
modinfo "$ko" | grep -E '^(vermagic|version):'
