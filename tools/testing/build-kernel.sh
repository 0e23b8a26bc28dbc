#!/bin/bash
# Build (or reuse from the cache) the kwq test kernel: Debian's
# linux-source-6.12 + tinyconfig + a config fragment.
#
# usage: build-kernel.sh FRAGMENT
# prints the kernel tree (usable as KDIR; bzImage inside) on stdout.
#
# The tree lives outside the clone, in $KWQ_CACHE/kernel-<srcver>-<hash>,
# where <hash> covers the fragment and KWQ_KERNEL_RECIPE (bump it when the
# steps below change what gets built), so reruns reuse the tree.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

frag=$(realpath "${1:?usage: build-kernel.sh FRAGMENT}")
need_pkg "$KWQ_SRC_PKG" /usr/src/linux-source-6.12.tar.xz
for p in flex bison bc cpio xz:xz-utils; do need_pkg "${p#*:}" "${p%%:*}"; done
need_pkg libelf-dev /usr/include/libelf.h
need_pkg libssl-dev /usr/include/openssl/ssl.h
need_pkg gcc gcc
need_pkg make make

KWQ_KERNEL_RECIPE=1
ver=$(kwq_src_version | tr -c 'A-Za-z0-9.+\n-' _)
hash=$( (cat "$frag"; echo "recipe $KWQ_KERNEL_RECIPE") | sha256sum | cut -c1-12)
name=$(basename "$frag" .config)
tree=$KWQ_CACHE/kernel-$name-$ver-$hash
mkdir -p "$KWQ_CACHE"

exec 9>"$KWQ_CACHE/.lock-$name"
flock 9
if [ -f "$tree/.kwq-built" ]; then
	echo "$tree"
	exit 0
fi

say "building the $name test kernel ($KWQ_SRC_PKG $ver, fragment $hash) in $tree"
say "this takes a few minutes once; later runs reuse it"
rm -rf "$tree" "$tree.tmp"
mkdir -p "$tree.tmp"
tar -C "$tree.tmp" --strip-components=1 -xf /usr/src/linux-source-6.12.tar.xz
cd "$tree.tmp"
log=$tree.tmp/kwq-build.log
{
	make ARCH=x86_64 tinyconfig
	scripts/kconfig/merge_config.sh -m .config "$frag"
	make ARCH=x86_64 olddefconfig
} >"$log" 2>&1 || { tail -30 "$log" >&2; die "kernel configuration failed (log: $log)"; }

# Every option of the fragment must have survived olddefconfig: a
# dependency that silently drops an option (KASAN without SLUB_TINY unset,
# say) would make the whole test run meaningless.
bad=0
while IFS= read -r line; do
	case $line in
	CONFIG_*=*) want=$line; opt=${line%%=*} ;;
	"# CONFIG_"*" is not set") want=$line; opt=${line#\# }; opt=${opt%% *} ;;
	*) continue ;;
	esac
	have=$(grep -E "^($opt=|# $opt is not set)" .config || true)
	if [ -z "$have" ] && [ "${want#\# }" != "$want" ]; then
		continue # "not set" and absent are the same thing
	fi
	if [ "$have" != "$want" ]; then
		printf 'error: fragment option lost: wanted "%s", .config has "%s"\n' \
			"$want" "${have:-nothing}" >&2
		bad=1
	fi
done <"$frag"
[ $bad = 0 ] || die "config fragment $frag did not survive olddefconfig"

say "compiling (make -j$KWQ_JOBS; log: $log)"
make ARCH=x86_64 -j"$KWQ_JOBS" >>"$log" 2>&1 ||
	{ tail -40 "$log" >&2; die "kernel build failed (log: $log)"; }
[ -f arch/x86/boot/bzImage ] && [ -f Module.symvers ] ||
	die "kernel build produced no bzImage/Module.symvers"
touch .kwq-built
cd /
mv "$tree.tmp" "$tree"
echo "$tree"
