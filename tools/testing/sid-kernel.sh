#!/bin/bash
# A stock Debian kernel that only unstable (sid) has: its image, and a
# build tree for modules, from the packages tools/testing/sid-pins pins
# (fetched and unpacked by sid-fetch.sh; nothing is installed).
#
# Unstable's headers package cannot build modules here: its scripts come
# from linux-kbuild-V, whose binaries need a newer glibc than bookworm's.
# So the tree is prepared from linux-source-V instead, with the headers
# package's .config, Module.symvers and kernel release, by make
# olddefconfig modules_prepare with the system's gcc (7.2's
# Documentation/process/changes.rst asks for gcc 8.1 or later). Only
# compiler-dependent options change (CONFIG_CC_*, CONFIG_GCC_VERSION,
# Rust); the kernel release must be the headers' own, or the module's
# vermagic would not match the image.
#
# usage: sid-kernel.sh VERSION   (7.2)
# prints two lines: the module build tree (KDIR) and the kernel image. The
# tree is cached in $KWQ_CACHE/linux-headers-<release>-<hash>, the hash
# covering the pins, the system's gcc and KWQ_SID_RECIPE.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

v=${1:?usage: sid-kernel.sh VERSION}
headers=$(awk -v p="linux-headers-$v." \
	'index($1, p) == 1 && $1 ~ /-amd64$/ { print $1 }' "$KWQ_SID_PINS")
[ -n "$headers" ] || die "$KWQ_SID_PINS pins no linux-headers-$v.*-amd64"
krel=${headers#linux-headers-}
pkgs=(linux-source-"$v" "$headers" linux-binary-"$krel")

KWQ_SID_RECIPE=1
need_pkg gcc gcc
hash=$( (for p in "${pkgs[@]}"; do echo "$p $(sid_pin "$p")"; done
	gcc --version | head -1; echo "recipe $KWQ_SID_RECIPE") | sha256sum | cut -c1-12)
tree=$KWQ_CACHE/linux-headers-$krel-$hash

fetch() { "$KWQ_ROOT/tools/testing/sid-fetch.sh" "$1"; }
image=$(fetch "linux-binary-$krel")/usr/lib/modules/$krel/vmlinuz
[ -f "$image" ] || die "linux-binary-$krel has no usr/lib/modules/$krel/vmlinuz"
# The image's own release string (the setup header's kernel_version) must
# be the one the module is built for.
off=$(od -An -tu2 -j $((0x20e)) -N2 "$image" | tr -d ' ')
irel=$(dd if="$image" bs=1 skip=$((0x200 + off)) count=128 status=none | tr '\0' '\n' |
	head -1 | cut -d' ' -f1)
[ "$irel" = "$krel" ] || die "$image is release '$irel', not $krel"

mkdir -p "$KWQ_CACHE"
exec 9>"$KWQ_CACHE/.lock-sid-$krel"
flock 9
if [ ! -f "$tree/.kwq-prepared" ]; then
	for p in flex bison bc xz:xz-utils; do need_pkg "${p#*:}" "${p%%:*}"; done
	need_pkg make make
	need_pkg libelf-dev /usr/include/libelf.h
	need_pkg libssl-dev /usr/include/openssl/ssl.h
	src=$(fetch "linux-source-$v")/usr/src/linux-source-$v.tar.xz
	hdr=$(fetch "$headers")/usr/src/$headers
	[ -f "$src" ] || die "linux-source-$v has no $src"
	rel=$(cat "$hdr/include/config/kernel.release")
	[ "$rel" = "$krel" ] || die "$hdr is release '$rel', not $krel"

	start=$(date +%s)
	say "preparing the $krel module build tree in $tree (about 1 min on 2 cores)"
	rm -rf "$tree" "$tree.tmp"
	mkdir -p "$tree.tmp"
	tar -C "$tree.tmp" --strip-components=1 -xf "$src"
	cp "$hdr/.config" "$hdr/Module.symvers" "$tree.tmp/"
	mkdir -p "$tree.tmp/include/generated" "$tree.tmp/include/config"
	cp "$hdr/include/generated/utsrelease.h" "$tree.tmp/include/generated/"
	cp "$hdr/include/config/kernel.release" "$tree.tmp/include/config/"
	log=$tree.tmp/kwq-prepare.log
	make -C "$tree.tmp" -j"$KWQ_JOBS" KERNELRELEASE="$krel" \
		olddefconfig modules_prepare >"$log" 2>&1 ||
		{ tail -30 "$log" >&2; die "make modules_prepare of $krel failed (log: $log)"; }
	cmp -s "$hdr/include/generated/utsrelease.h" "$tree.tmp/include/generated/utsrelease.h" ||
		die "the prepared tree's utsrelease.h is not $headers's (log: $log)"
	# What olddefconfig changed for this compiler, for the curious.
	diff "$hdr/.config" "$tree.tmp/.config" >"$tree.tmp/kwq-config.diff" || true
	touch "$tree.tmp/.kwq-prepared"
	mv "$tree.tmp" "$tree"
	say "$krel module build tree ready ($(($(date +%s) - start)) s)"
fi
echo "$tree"
echo "$image"
