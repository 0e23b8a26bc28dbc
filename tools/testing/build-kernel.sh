#!/bin/bash
# Build (or reuse from the cache) a kwq test kernel: Debian's kernel
# source + tinyconfig + a config fragment.
#
# usage: build-kernel.sh FRAGMENT [6.12|7.2]
# prints the kernel tree (usable as KDIR; bzImage inside) on stdout.
# 6.12 (the default) is bookworm's linux-source-6.12; 7.2 is unstable's
# linux-source-7.2, fetched by sid-fetch.sh at the version
# tools/testing/sid-pins pins, and built with the system's gcc 12 (7.2's
# Documentation/process/changes.rst asks for gcc 8.1 or later).
#
# The tree lives outside the clone, in $KWQ_CACHE/kernel-<name>-<srcver>-<hash>,
# where <hash> covers the fragment and KWQ_KERNEL_RECIPE (bump it when the
# steps below change what gets built; 7.2's also covers gcc's and pahole's
# versions, which its module builds compare with the kernel's), so
# reruns reuse the tree. A build prints a progress line every 30 s.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# Built once and kept whole: not through make check's ccache (lib.sh).
export CCACHE_DISABLE=1

frag=$(realpath "${1:?usage: build-kernel.sh FRAGMENT [6.12|7.2]}")
kv=${2:-6.12}
for p in flex bison bc cpio xz:xz-utils; do need_pkg "${p#*:}" "${p%%:*}"; done
need_pkg libelf-dev /usr/include/libelf.h
need_pkg libssl-dev /usr/include/openssl/ssl.h
need_pkg gcc gcc
need_pkg make make
# Whether pahole is there is part of the kernel's config
# (CONFIG_PAHOLE_VERSION), and 7.2 warns, failing the W=1 module build,
# when a module is built with another pahole than the kernel was: a
# kernel built before something else installed it (dh-dkms pulls it in)
# could not build modules after. So it is always there.
need_pkg pahole pahole

KWQ_KERNEL_RECIPE=1
recipe="recipe $KWQ_KERNEL_RECIPE"
case $kv in
6.12)
	need_pkg "$KWQ_SRC_PKG" /usr/src/linux-source-6.12.tar.xz
	srcpkg=$KWQ_SRC_PKG
	ver=$(kwq_src_version | tr -c 'A-Za-z0-9.+\n-' _)
	tarball=/usr/src/linux-source-6.12.tar.xz
	;;
7.2)
	srcpkg=linux-source-7.2
	ver=$(sid_pin "$srcpkg" | tr -c 'A-Za-z0-9.+\n-' _)
	tarball=$("$KWQ_ROOT/tools/testing/sid-fetch.sh" "$srcpkg")/usr/src/$srcpkg.tar.xz
	[ -f "$tarball" ] || die "$srcpkg has no $tarball"
	recipe+=$'\n'"$(gcc --version | head -1)"
	recipe+=$'\n'"$(pahole --version)"
	;;
*) die "usage: build-kernel.sh FRAGMENT [6.12|7.2]" ;;
esac
# FRAGMENT-VERSION.config beside FRAGMENT, if there is one, is merged
# after it for that version alone (debug-7.2.config: no stack
# auto-initialisation, so that an uninitialised read shows in a test).
frags=("$frag")
[ -f "${frag%.config}-$kv.config" ] && frags+=("${frag%.config}-$kv.config")
hash=$( (cat "${frags[@]}"; echo "$recipe") | sha256sum | cut -c1-12)
name=$(basename "$frag" .config)
tree=$KWQ_CACHE/kernel-$name-$ver-$hash
mkdir -p "$KWQ_CACHE"

exec 9>"$KWQ_CACHE/.lock-$name${kv#6.12}"
flock 9
if [ -f "$tree/.kwq-built" ]; then
	echo "$tree"
	exit 0
fi

start=$(date +%s)
say "building the $name test kernel ($srcpkg $ver, fragment $hash) in $tree"
say "about 7 min on 2 cores when idle, once; later runs reuse it"
rm -rf "$tree" "$tree.tmp"
mkdir -p "$tree.tmp"
tar -C "$tree.tmp" --strip-components=1 -xf "$tarball"
cd "$tree.tmp"
log=$tree.tmp/kwq-build.log
{
	make ARCH=x86_64 tinyconfig
	scripts/kconfig/merge_config.sh -m .config "${frags[@]}"
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
done < <(cat "${frags[@]}")
[ $bad = 0 ] || die "config fragment ${frags[*]} did not survive olddefconfig"

say "compiling (make -j$KWQ_JOBS; log: $log)"
make ARCH=x86_64 -j"$KWQ_JOBS" >>"$log" 2>&1 &
make=$!
# Progress: the compiled objects so far (a tinyconfig debug kernel has
# about 800) and the time spent, every 30 s.
while ! wait_for "$make" 30; do
	say "  $name $kv kernel: $(grep -c '^  CC ' "$log" || true) of ~800 objects compiled, $(($(date +%s) - start)) s"
done
wait "$make" || { tail -40 "$log" >&2; die "kernel build failed (log: $log)"; }
[ -f arch/x86/boot/bzImage ] && [ -f Module.symvers ] ||
	die "kernel build produced no bzImage/Module.symvers"
touch .kwq-built
cd /
mv "$tree.tmp" "$tree"
say "$name $kv kernel built in $(($(date +%s) - start)) s"
echo "$tree"
