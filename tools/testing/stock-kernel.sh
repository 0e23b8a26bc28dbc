#!/bin/bash
# Locate (installing if needed) one of Debian's stock kernels: its headers
# for building kwq.ko and its bzImage for booting it in QEMU.
#
# usage: stock-kernel.sh 6.1|6.12|7.2
# prints two lines: the headers directory (KDIR) and the kernel image.
# 6.1 and 6.12 are bookworm's; 7.2 comes from unstable (sid-kernel.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

case ${1:-} in
6.1) meta=linux-headers-amd64 ;;
6.12) meta=linux-headers-6.12-amd64 ;;
7.2) exec "$KWQ_ROOT/tools/testing/sid-kernel.sh" "$1" ;;
*) die "usage: stock-kernel.sh 6.1|6.12|7.2" ;;
esac
need_pkg "$meta" "/usr/share/doc/$meta"
# The metapackage depends on the versioned headers package, whose name
# carries the kernel release the image must match exactly (vermagic).
krel=$(dpkg-query -W -f '${Depends}' "$meta" | tr ',' '\n' |
	sed -n 's/^ *linux-headers-\([^ ]*-amd64\).*/\1/p' | head -1)
[ -n "$krel" ] || die "cannot tell which kernel $meta depends on"
kdir=/usr/src/linux-headers-$krel
[ -f "$kdir/Makefile" ] || die "$kdir missing: apt-get install linux-headers-$krel"

image=/boot/vmlinuz-$krel
if [ ! -f "$image" ]; then
	# Extract the image package into the cache rather than installing it:
	# nothing on the host boots it, and this needs no initramfs hooks.
	dir=$KWQ_CACHE/stock-$krel
	image=$dir/boot/vmlinuz-$krel
	if [ ! -f "$image" ]; then
		say "fetching linux-image-$krel into $dir"
		mkdir -p "$dir"
		tmp=$(mktemp -d)
		chmod 755 "$tmp" # apt downloads as _apt
		(cd "$tmp" && apt-get download -qq "linux-image-$krel" >&2) ||
			{ [ "$(id -u)" = 0 ] && apt-get update -qq >&2 &&
				(cd "$tmp" && apt-get download -qq "linux-image-$krel" >&2); } ||
			die "cannot download linux-image-$krel (apt-get download)"
		dpkg-deb -x "$tmp"/linux-image-*.deb "$dir"
		rm -rf "$tmp"
	fi
fi
[ -f "$image" ] || die "no kernel image for $krel"
echo "$kdir"
echo "$image"
