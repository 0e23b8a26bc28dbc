#!/bin/bash
# make check-system: kwq's Debian packages on a real Debian 12 system.
# The packages are built three times (make deb: the tree's version V, then
# V+sys1 and V+sys2 for the upgrades, KWQ_DEB_VERSION), written with the
# test script (run.sh) and the example consumer to a small test disk, and
# the Debian root filesystem of rootfs.sh (cached) is booted from a
# snapshot (QEMU -snapshot: the cached image is never written) under TCG
# with its own stock 6.12 kernel and initrd, no network. systemd runs
# run.sh at every boot (kwq-system-test.service); its KTAP arrives on the
# second serial port. Judged here: every planned case printed once and
# passed, the guest ended by itself, no kernel splat on the console.
#
# usage: check-system.sh     logs in $KWQ_OUT/system (console.log, ktap.log)
# Exit 0 when every case passed.
set -euo pipefail
# shellcheck source=tools/testing/lib.sh
. "$(dirname "$0")/../lib.sh"

need_pkgs "${KWQ_PKGS_VM[@]}" "${KWQ_PKGS_DEB[@]}" e2fsprogs:mkfs.ext4
[ "$(id -u)" = 0 ] || die "make check-system runs as root (mmdebstrap, mkfs.ext4 -d of a root filesystem)"
t0=$SECONDS
out=$(realpath -m "$KWQ_OUT")/system
rm -rf "$out"
mkdir -p "$out/disk/example"

rootfs=$("$KWQ_ROOT/tools/testing/system/rootfs.sh") || die "rootfs.sh failed (exit $?)"
mapfile -t sys <<<"$rootfs"
[ ${#sys[@]} = 3 ] || die "rootfs.sh printed no image, kernel and initrd: $rootfs"
say "Debian root filesystem: ${sys[0]} ($((SECONDS - t0)) s)"

ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$KWQ_ROOT/dkms.conf")
i=1
for v in "$ver" "$ver+sys1" "$ver+sys2"; do
	say "make deb as $v (log: $out/deb-v$i.log)"
	KWQ_OUT=$out/build-v$i KWQ_DEB_VERSION=$v "$KWQ_ROOT/tools/deb/deb.sh" \
		>"$out/deb-v$i.log" 2>&1 || { tail -20 "$out/deb-v$i.log" >&2; die "make deb as $v failed"; }
	mkdir -p "$out/disk/v$i"
	cp "$out/build-v$i"/deb/*.deb "$out/disk/v$i/"
	echo "$v" >"$out/disk/v$i/version"
	i=$((i + 1))
done
say "packages built ($((SECONDS - t0)) s)"
cp "$KWQ_ROOT/tools/testing/system/run.sh" "$out/disk/"
cp "$KWQ_ROOT/tools/example/kwq_example.c" "$KWQ_ROOT/tools/example/Kbuild" "$out/disk/example/"
mkfs.ext4 -q -L kwqtest -d "$out/disk" "$out/test.img" 64M

# pc (not microvm): ACPI power-off and reboot, as a Debian system expects.
# The guest reboots once (QEMU resets it and boots the same kernel) and
# powers off at the end. No panic= on the command line: a panicking guest
# must not reboot into the test again; the timeout ends it.
timeout=${KWQ_SYSTEM_TIMEOUT:-3600}
say "booting the Debian system (TCG; console: $out/console.log, KTAP: $out/ktap.log)"
rc=0
timeout -k 10 "$timeout" qemu-system-x86_64 -accel tcg -cpu max -smp 2 -m 2048 \
	-machine pc -nodefaults -display none \
	-kernel "${sys[1]}" -initrd "${sys[2]}" \
	-append "root=/dev/vda rw console=ttyS0 loglevel=4 no_timer_check" \
	-drive "file=${sys[0]},format=raw,if=virtio,snapshot=on" \
	-drive "file=$out/test.img,format=raw,if=virtio,readonly=on" \
	-serial "file:$out/console.log" -serial "file:$out/ktap.log" \
	</dev/null >"$out/qemu.log" 2>&1 || rc=$?
vm_s=$((SECONDS - t0))

# The judgement: the plan, each case once, the guest's own end.
ktap=$(tr -d '\r' <"$out/ktap.log")
echo "$ktap"
plan=$(echo "$ktap" | sed -n 's/^1\.\.\([0-9]*\)$/\1/p' | head -1)
passed=0 failed=0 skipped=0
if [ -z "$plan" ]; then
	echo "not ok - the guest printed no KTAP plan"
	failed=1
else
	for n in $(seq 1 "$plan"); do
		lines=$(echo "$ktap" | grep -cE "^(not )?ok $n( |$)" || true)
		line=$(echo "$ktap" | grep -E "^(not )?ok $n( |$)" | head -1 || true)
		if [ "$lines" != 1 ]; then
			echo "not ok $n - printed $lines times"
			failed=$((failed + 1))
		elif [[ $line == *"# SKIP"* ]]; then
			skipped=$((skipped + 1))
		elif [[ $line == ok* ]]; then
			passed=$((passed + 1))
		else
			failed=$((failed + 1))
		fi
	done
fi
extra() {
	if [ "$2" = 0 ]; then
		echo "ok - $1"
		passed=$((passed + 1))
	else
		echo "not ok - $1"
		failed=$((failed + 1))
	fi
}
r=0
if [ $rc != 0 ] || ! echo "$ktap" | grep -qx '# kwq-system-test: done'; then
	r=1
	echo "# QEMU exit $rc (124: timed out after ${timeout}s); last console lines:"
	tr -d '\r' <"$out/console.log" | tail -20 | sed 's/^/#   | /'
fi
extra "the guest powered itself off after its last case (${vm_s} s in all)" $r
r=0
tr -d '\r' <"$out/console.log" |
	grep -aE 'WARNING:|BUG:|Oops|Call Trace|Kernel panic|general protection' && r=1
extra "no kernel splat on the guest's console" $r
echo "# check-system: $passed passed, $failed failed, $skipped skipped ($((SECONDS - t0)) s)"
[ "$failed" = 0 ]
