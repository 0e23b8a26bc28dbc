#!/bin/bash
# The Debian 12 system of make check-system: a bookworm root filesystem
# made with mmdebstrap, with Debian's stock 6.12 kernel, its headers and
# everything the test needs preinstalled (the guest has no network), as
# an ext4 image; cached under $KWQ_CACHE/system-HASH, HASH being this
# recipe's (the kernel release, the packages, the hooks, the unit).
#
# usage: rootfs.sh     prints three lines: the image, the kernel, the initrd
# Building takes 5-15 min and ~400 MB of downloads; a cached one, nothing.
set -euo pipefail
# shellcheck source=tools/testing/lib.sh
. "$(dirname "$0")/../lib.sh"

need_pkgs mmdebstrap:mmdebstrap e2fsprogs:mkfs.ext4
# The stock 6.12 kernel the other stock VMs boot, by its exact release
# (its headers and image packages carry it in their names).
kdir=$("$KWQ_ROOT/tools/testing/stock-kernel.sh" 6.12 | head -1)
krel=${kdir#/usr/src/linux-headers-}

# What the test runs in the guest: systemd as init, DKMS with the headers
# of the booted kernel and a compiler, node_exporter and curl, man.
pkgs=(systemd systemd-sysv udev dbus kmod adduser initramfs-tools
	"linux-image-$krel" "linux-headers-$krel" dkms build-essential
	prometheus-node-exporter curl man-db procps less)
mirror=http://deb.debian.org/debian
sources=("deb $mirror bookworm main" "deb $mirror bookworm-updates main"
	"deb http://deb.debian.org/debian-security bookworm-security main")

unit=$KWQ_ROOT/tools/testing/system/kwq-system-test.service
# Root's password is empty, for a look at the console by hand; the unit
# runs the test disk's script at each boot (the disk is its condition).
# shellcheck disable=SC2016 # mmdebstrap's hooks expand $1 (the root)
hooks=('echo kwq-system >"$1/etc/hostname"'
	'echo "LABEL=kwqroot / ext4 defaults 0 1" >"$1/etc/fstab"'
	'chroot "$1" passwd -d root'
	"cp $unit \"\$1/etc/systemd/system/\""
	'chroot "$1" systemctl enable kwq-system-test.service'
	'mkdir -p "$1/mnt/kwqtest"')
# The cache's name: a hash of the recipe (not of this file's comments).
hash=$( {
	cat "$unit"
	printf '%s\n' "$krel" "${pkgs[@]}" "${sources[@]}" "${hooks[@]}" minbase ext4+1536
} | sha256sum | cut -c1-12)
dir=$KWQ_CACHE/system-$hash
if [ ! -f "$dir/done" ]; then
	rm -rf "$dir"
	mkdir -p "$dir"
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	log=$(realpath -m "$KWQ_OUT")/logs/system-rootfs.log
	mkdir -p "$(dirname "$log")"
	say "building the Debian 12 root filesystem in $dir (5-15 min; log: $log)"
	hookargs=()
	for h in "${hooks[@]}"; do hookargs+=(--customize-hook="$h"); done
	mmdebstrap --mode=root --variant=minbase --format=directory \
		--include="$(IFS=,; echo "${pkgs[*]}")" "${hookargs[@]}" \
		bookworm "$tmp/root" "${sources[@]}" >"$log" 2>&1 ||
		{ tail -20 "$log" >&2; die "mmdebstrap failed (log: $log)"; }
	cp "$tmp/root/boot/vmlinuz-$krel" "$tmp/root/boot/initrd.img-$krel" "$dir/"
	# Room for two DKMS builds, the consumer module and the packages.
	size=$(( $(du -sm "$tmp/root" | cut -f1) + 1536 ))
	mkfs.ext4 -q -L kwqroot -d "$tmp/root" "$dir/root.img" "${size}M" >>"$log" 2>&1 ||
		die "mkfs.ext4 -d failed (log: $log)"
	echo "$krel" >"$dir/done"
	say "root filesystem ready: $dir ($size MB)"
fi
echo "$dir/root.img"
echo "$dir/vmlinuz-$krel"
echo "$dir/initrd.img-$krel"
