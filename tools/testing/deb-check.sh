#!/bin/bash
# make deb's packages, checked on the host (check.sh, static section).
#
# usage: deb-check.sh build      make deb (dpkg-buildpackage, then lintian
#                                clean), and the source tree as it was
#        deb-check.sh contents   what each package must hold (dpkg-deb -c),
#                                the version of dkms.conf, libkwq's SONAME,
#                                the group in the udev rule and the
#                                maintainer scripts, the systemd units,
#                                the man pages render
# The packages are in $KWQ_OUT/deb (tools/deb/deb.sh).
set -euo pipefail
# shellcheck source=tools/testing/lib.sh
. "$(dirname "$0")/lib.sh"

debs=$(realpath -m "$KWQ_OUT/deb")
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$KWQ_ROOT/dkms.conf")

# What git sees of the tree, ignored files too (a build in the tree would
# make them), but build/ and Python's caches (the harness's scripts, run
# meanwhile by the VMs in the background).
tree_state() {
	git -C "$KWQ_ROOT" status --porcelain --ignored --untracked-files=all |
		grep -v -e '^!! build/' -e '__pycache__/' || true
}

case ${1:?usage: deb-check.sh build|contents} in
build)
	before=$(tree_state)
	make -C "$KWQ_ROOT" deb
	after=$(tree_state)
	[ "$before" = "$after" ] || die "make deb changed the source tree:
$(diff <(echo "$before") <(echo "$after"))"
	exit 0
	;;
contents) ;;
*) die "usage: deb-check.sh build|contents" ;;
esac

need_pkgs man-db:man binutils:objdump systemd:systemd-analyze
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
src=usr/src/kwq-$ver
declare -A want=(
	[kwq-dkms_${ver}_all]="$src/dkms.conf $src/Makefile $src/Kbuild $src/src/main.c
		$src/kunit/Kbuild $src/include/linux/kwq.h $src/include/uapi/linux/kwq.h
		$src/tools/dkms/symvers.sh lib/udev/rules.d/60-kwq.rules
		usr/lib/modules-load.d/kwq.conf usr/share/man/man4/kwq.4.gz
		usr/share/doc/kwq-dkms/copyright"
	[libkwq1_${ver}_$arch]="usr/lib/$ma/libkwq.so.1 usr/share/doc/libkwq1/copyright"
	[libkwq-dev_${ver}_$arch]="usr/include/libkwq.h usr/include/linux/kwq.h
		usr/lib/$ma/libkwq.a usr/lib/$ma/libkwq.so usr/lib/$ma/pkgconfig/libkwq.pc
		usr/share/man/man3/libkwq.3.gz"
	[kwqctl_${ver}_$arch]="usr/bin/kwqctl usr/share/bash-completion/completions/kwqctl
		usr/share/man/man1/kwqctl.1.gz lib/systemd/system/kwq-metrics.service
		lib/systemd/system/kwq-metrics.timer"
)
x=$(mktemp -d)
trap 'rm -rf "$x"' EXIT
for p in "${!want[@]}"; do
	deb=$debs/$p.deb
	[ -f "$deb" ] || die "make deb made no $p.deb"
	[ "$(dpkg-deb -f "$deb" Version)" = "$ver" ] ||
		die "$p.deb is version $(dpkg-deb -f "$deb" Version), dkms.conf says $ver"
	dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./||' >"$x/$p.list"
	for f in ${want[$p]}; do
		grep -qx "$f" "$x/$p.list" || die "$p.deb does not hold $f"
	done
	echo "$p.deb: $(grep -cv '/$' "$x/$p.list") files, the $(echo "${want[$p]}" | wc -w) wanted among them"
	dpkg-deb -x "$deb" "$x/root"
	dpkg-deb -e "$deb" "$x/ctl-${p%%_*}"
done
r=$x/root
[ "$(readlink "$r/usr/lib/$ma/libkwq.so")" = libkwq.so.1 ] ||
	die "libkwq.so does not link to libkwq.so.1"
objdump -p "$r/usr/lib/$ma/libkwq.so.1" | grep -q 'SONAME *libkwq\.so\.1$' ||
	die "libkwq.so.1's SONAME is not libkwq.so.1"
grep -q 'GROUP="kwq", MODE="0660"' "$r/lib/udev/rules.d/60-kwq.rules" ||
	die "the udev rule does not give /dev/kwq to the group kwq"
grep -qx kwq "$r/usr/lib/modules-load.d/kwq.conf" || die "modules-load.d does not load kwq"
grep -q 'addgroup --system --quiet kwq' "$x/ctl-kwq-dkms/postinst" ||
	die "kwq-dkms's postinst does not create the group kwq"
grep -q 'dkms_common\|common.postinst' "$x/ctl-kwq-dkms/postinst" ||
	die "kwq-dkms's postinst does not run DKMS"
grep -q 'delgroup --system --quiet kwq' "$x/ctl-kwq-dkms/postrm" ||
	die "kwq-dkms's postrm does not delete the group kwq"
grep -qx "libdir=/usr/lib/$ma" "$r/usr/lib/$ma/pkgconfig/libkwq.pc" ||
	die "libkwq.pc does not name /usr/lib/$ma"
grep -qx 'ExecStart=/usr/bin/kwqctl stats --all --prometheus -o /var/lib/prometheus/node-exporter/kwq.prom' \
	"$r/lib/systemd/system/kwq-metrics.service" || die "kwq-metrics.service runs something else"
# The package enables no unit (debhelper's postinst-systemd-dont-enable,
# not -enable, whose enable runs on a first install): the timer is the
# operator's choice. Purge still forgets its state (postrm).
if ! grep -q "debian-installed 'kwq-metrics.timer'" "$x/ctl-kwqctl/postinst" ||
	grep -q 'so new installations run enable' "$x/ctl-kwqctl/postinst" ||
	grep -q 'deb-systemd-invoke' "$x/ctl-kwqctl/postinst"; then
	die "kwqctl's postinst enables or starts kwq-metrics.timer"
fi
grep -q "deb-systemd-helper purge 'kwq-metrics.timer'" "$x/ctl-kwqctl/postrm" ||
	die "kwqctl's postrm does not forget kwq-metrics.timer on purge"
# An enabled timer stops when kwqctl goes (--no-start writes no stop).
grep -q 'deb-systemd-invoke stop kwq-metrics.timer kwq-metrics.service' "$x/ctl-kwqctl/prerm" ||
	die "kwqctl's prerm does not stop kwq-metrics.timer on removal"
# systemd reads the units without a word (an unknown key is only a
# warning to it): ExecStart pointed at the extracted kwqctl.
mkdir "$x/units"
sed "s|=/usr/bin/kwqctl |=$r/usr/bin/kwqctl |" "$r/lib/systemd/system/kwq-metrics.service" \
	>"$x/units/kwq-metrics.service"
cp "$r/lib/systemd/system/kwq-metrics.timer" "$x/units/"
if ! w=$(systemd-analyze verify --man=no "$x"/units/kwq-metrics.* 2>&1) || [ -n "$w" ]; then
	die "systemd-analyze verify kwq-metrics.service kwq-metrics.timer: $w"
fi
# The man pages as man shows them: no warning from groff, a NAME section.
for m in "$r"/usr/share/man/man*/*; do
	w=$(MANWIDTH=80 man -l "$m" 2>&1 >/dev/null)
	[ -z "$w" ] || die "man -l ${m#"$r"/}: $w"
	MANWIDTH=80 man -l "$m" | grep -q '^NAME' || die "man -l ${m#"$r"/} has no NAME"
	echo "man -l ${m#"$r"/}: $(MANWIDTH=80 man -l "$m" | sed -n '4p' | sed 's/^ *//')"
done
echo "packages OK"
