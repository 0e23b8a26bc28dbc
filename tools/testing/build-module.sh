#!/bin/bash
# Build kwq.ko (where the kernel has KUnit, kwq_test.ko; the example
# consumer kwq_example.ko; and the memcg test module kwq_memcg_test.ko)
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
# The example consumer: its own module, linked against kwq's exports only.
rm -rf "$out/example"
mkdir -p "$out/example/tools"
cp -r "$KWQ_ROOT/tools/example" "$out/example/tools/"
ln -s "$out/src/include" "$out/example/include"
if ! make -C "$kdir" M="$out/example/tools/example" W=1 "$@" \
	KBUILD_EXTRA_SYMBOLS="$out/src/Module.symvers" modules >>"$out/build.log" 2>&1; then
	grep -E 'error|warning' "$out/build.log" | head -20 >&2
	die "example module build against $kdir failed (log: $out/build.log)"
fi
if grep -E '(warning|error):' "$out/build.log" >&2; then
	die "module build against $kdir has warnings (log: $out/build.log)"
fi
# The memcg test module (userspace/tests/memcg_test.c loads it), likewise.
rm -rf "$out/memcg"
mkdir -p "$out/memcg/tools/testing"
cp -r "$KWQ_ROOT/tools/testing/memcg" "$out/memcg/tools/testing/"
ln -s "$out/src/include" "$out/memcg/include"
if ! make -C "$kdir" M="$out/memcg/tools/testing/memcg" W=1 "$@" \
	KBUILD_EXTRA_SYMBOLS="$out/src/Module.symvers" modules >>"$out/build.log" 2>&1; then
	grep -E 'error|warning' "$out/build.log" | head -20 >&2
	die "memcg test module build against $kdir failed (log: $out/build.log)"
fi
if grep -E '(warning|error):' "$out/build.log" >&2; then
	die "module build against $kdir has warnings (log: $out/build.log)"
fi
find "$out/src" "$out/example" "$out/memcg" -name '*.ko' -exec cp {} "$out/" \;
