#!/bin/bash
# Build kwq.ko (where the kernel has KUnit, kwq_test.ko; the example
# consumer kwq_example.ko; the memcg test module kwq_memcg_test.ko; the
# torture run's kernel threads, kwq_torture.ko)
# against one kernel tree, in a private copy of the sources so builds
# against several kernels never share objects. W=1; any compiler warning
# fails the build.
#
# usage: [KWQ_PLANT=NAME] build-module.sh KDIR OUTDIR [MAKE-ARGS...]
# leaves the .ko files and build.log in OUTDIR.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kdir=${1:?usage: build-module.sh KDIR OUTDIR}
out=${2:?usage: build-module.sh KDIR OUTDIR}
shift 2
[ -f "$kdir/Makefile" ] || die "no kernel build tree at $kdir"
mkdir -p "$out"
out=$(realpath "$out")
rm -rf "$out/src"
mkdir -p "$out/src"
for d in Kbuild dkms.conf src include kunit; do
	[ -e "$KWQ_ROOT/$d" ] && cp -r "$KWQ_ROOT/$d" "$out/src/"
done
# KWQ_PLANT=NAME: a deliberately broken kwq.ko (tools/testing/plant/NAME.patch
# applied to this copy), for proving that torture_test catches the bug.
if [ -n "${KWQ_PLANT:-}" ]; then
	patch -s -d "$out/src" -p1 <"$KWQ_ROOT/tools/testing/plant/$KWQ_PLANT.patch" ||
		die "planted bug $KWQ_PLANT does not apply"
fi
if ! make -C "$kdir" M="$out/src" W=1 "$@" modules >"$out/build.log" 2>&1; then
	grep -E 'error|warning' "$out/build.log" | head -20 >&2 || tail -20 "$out/build.log" >&2
	die "module build against $kdir failed (log: $out/build.log)"
fi
if grep -E '(warning|error):' "$out/build.log" >&2; then
	die "module build against $kdir has warnings (log: $out/build.log)"
fi
# A module linked against kwq's exports only, from $KWQ_ROOT/$1 (its
# own directory), built in $out/$2.
build_user() {
	local src=$1 dir=$2
	shift 2
	rm -rf "${out:?}/$dir"
	mkdir -p "$out/$dir/$(dirname "$src")"
	cp -r "$KWQ_ROOT/$src" "$out/$dir/$(dirname "$src")/"
	ln -s "$out/src/include" "$out/$dir/include"
	if ! make -C "$kdir" M="$out/$dir/$src" W=1 "$@" \
		KBUILD_EXTRA_SYMBOLS="$out/src/Module.symvers" modules >>"$out/build.log" 2>&1; then
		grep -E 'error|warning' "$out/build.log" | head -20 >&2
		die "$src module build against $kdir failed (log: $out/build.log)"
	fi
	if grep -E '(warning|error):' "$out/build.log" >&2; then
		die "module build against $kdir has warnings (log: $out/build.log)"
	fi
}
# The example consumer; the memcg test module (userspace/tests/memcg_test.c
# loads it); the torture run's kernel threads (torture_test.c loads it).
build_user tools/example example "$@"
build_user tools/testing/memcg memcg "$@"
build_user tools/testing/torture torture "$@"
find "$out/src" "$out/example" "$out/memcg" "$out/torture" -name '*.ko' -exec cp {} "$out/" \;
