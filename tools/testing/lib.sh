# shellcheck shell=bash
# Shared helpers for the kwq test harness. Sourced, never run.

KWQ_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KWQ_CACHE=${KWQ_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kwq}
KWQ_OUT=${KWQ_OUT:-$KWQ_ROOT/build}
KWQ_SRC_PKG=linux-source-6.12
KWQ_JOBS=${KWQ_JOBS:-$(nproc)}

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# memo_hit FILE: FILE is a remembered pass that may be used. A check
# that is a pure function of files (checkpatch, coccicheck, the harness
# self-test) keeps its passes, never a failure, under $KWQ_CACHE/KIND,
# named by a hash of every byte it read; KWQ_NO_MEMO=1 uses none.
memo_hit() { [ -z "${KWQ_NO_MEMO:-}" ] && [ -e "$1" ]; }

# wait_for PID SECONDS: true once PID (a child) has ended, false if it
# still runs after SECONDS; for a progress line while a long job runs.
wait_for() {
	local n=$2
	while [ "$n" -gt 0 ]; do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 1
		n=$((n - 1))
	done
	! kill -0 "$1" 2>/dev/null
}

# need_pkgs PACKAGE:COMMAND-OR-PATH...
# Make sure each command (or absolute path) exists. What is missing is
# installed, all in one apt-get call, when running as root
# (KWQ_AUTO_INSTALL=0 turns that off); otherwise stop with one message
# naming every missing Debian package. One policy for make check, make
# demo, make bench and make fuzz, as README.md says; each starts with its
# whole list (KWQ_PKGS_* below) so a non-root user learns it at once.
need_pkgs() {
	local spec pkg what missing=() log t0=$SECONDS
	for spec in "$@"; do
		pkg=${spec%%:*} what=${spec#*:}
		case $what in
		/*) [ -e "$what" ] ;;
		*) [ -x "$(command -v "$what")" ] ;;
		esac && continue
		[[ " ${missing[*]} " == *" $pkg "* ]] || missing+=("$pkg")
	done
	[ ${#missing[@]} = 0 ] && return 0
	if [ "$(id -u)" != 0 ] || [ "${KWQ_AUTO_INSTALL:-1}" = 0 ]; then
		die "missing Debian packages: ${missing[*]}
  install them with: apt-get install ${missing[*]}
  (or run as root, which installs them itself)"
	fi
	# One line here; apt's own output goes to the log.
	mkdir -p "$KWQ_OUT/logs"
	log=$(realpath "$KWQ_OUT")/logs/apt.log
	say "installing Debian packages: ${missing[*]} (apt log: $log; 1-3 min on a fresh machine)"
	if [ -z "${KWQ_APT_UPDATED:-}" ]; then
		apt-get update >>"$log" 2>&1 || die "apt-get update failed (log: $log)"
		export KWQ_APT_UPDATED=1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
		"${missing[@]}" >>"$log" 2>&1 ||
		die "apt-get install ${missing[*]} failed (log: $log)"
	say "installed ${missing[*]} ($((SECONDS - t0)) s)"
}

# need_pkg PACKAGE COMMAND-OR-PATH...: need_pkgs for one package.
need_pkg() {
	local pkg=$1 what specs=()
	shift
	for what in "$@"; do specs+=("$pkg:$what"); done
	need_pkgs "${specs[@]}"
}

# What each command needs, checked at its start.
KWQ_PKGS_BUILD=(gcc:gcc make:make libc6-dev:/usr/include/stdio.h python3:python3
	debian-archive-keyring:/usr/share/keyrings/debian-archive-keyring.gpg)
KWQ_PKGS_VM=(qemu-system-x86:qemu-system-x86_64 busybox-static:/bin/busybox cpio:cpio)
KWQ_PKGS_STOCK612=(linux-headers-6.12-amd64:/usr/share/doc/linux-headers-6.12-amd64)
KWQ_PKGS_KERNEL=(flex:flex bison:bison bc:bc xz-utils:xz libelf-dev:/usr/include/libelf.h
	libssl-dev:/usr/include/openssl/ssl.h linux-source-6.12:/usr/src/linux-source-6.12.tar.xz)
# make deb (tools/deb/deb.sh); the man pages need python3-docutils alone.
KWQ_PKGS_DEB=(dpkg-dev:dpkg-buildpackage debhelper:dh dh-dkms:dh_dkms
	python3-docutils:rst2man lintian:lintian fakeroot:fakeroot cpio:cpio)
# ocaml: spatch compiles the OCaml script rules of some of the kernel's
# semantic patches with ocamlopt, which coccinelle does not depend on.
# shellcheck disable=SC2034 # for the scripts that source this
KWQ_PKGS_CHECK=("${KWQ_PKGS_BUILD[@]}" "${KWQ_PKGS_VM[@]}" "${KWQ_PKGS_STOCK612[@]}"
	"${KWQ_PKGS_KERNEL[@]}" gcc-multilib:/usr/lib32/libc.a sparse:sparse
	shellcheck:shellcheck dkms:dkms kmod:/bin/kmod coccinelle:spatch
	ocaml:ocamlopt
	linux-headers-amd64:/usr/share/doc/linux-headers-amd64
	lcov:lcov lcov:genhtml gcc-12:gcov-12 ccache:/usr/lib/ccache/gcc
	"${KWQ_PKGS_DEB[@]}" man-db:man systemd:systemd-analyze)

# kwq_ccache: compile through ccache (Debian's masquerade directory, so
# kbuild's and the Makefiles' gcc and cc are ccache) with its cache under
# $KWQ_CACHE. A second make check of the same tree replays the compiler
# for the module builds on five kernels (and sparse's, DKMS's and make
# install's) and the userspace programs: their warnings come back with
# them, and W=1, sparse and every other check still run. Only where the
# tree is the same directory: a source's path is part of its hash.
# Kernel builds do not use it (build-kernel.sh): they are cached whole.
kwq_ccache() {
	[ -d /usr/lib/ccache ] && command -v ccache >/dev/null || return 0
	export PATH=/usr/lib/ccache:$PATH
	export CCACHE_DIR=${CCACHE_DIR:-$KWQ_CACHE/ccache}
	export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-2G}
}

# sid_pin PACKAGE: the version of PACKAGE that tools/testing/sid-pins pins
# (the packages taken from Debian unstable; sid-fetch.sh fetches them).
# The latency VM (config/latency.config, walks_test): its kernel command
# line and QEMU options. One vCPU whose clock counts its instructions
# (-icount shift=0: a nanosecond an instruction, as a 1 GHz CPU that
# retires one a cycle; sleep=off: an idle vCPU jumps to its next timer),
# so a section's length is the work done in it, whatever the host's load
# does to QEMU: under real time, the host descheduling QEMU for a few ms
# showed as irqs-off sections of 70 ms ("hrtimer: interrupt took"), and
# with two vCPUs one vCPU's section counted the other's instructions.
# The TSC is that clock (1 GHz): said so, as the guest cannot calibrate
# it (microvm: no PIT or HPET), and trusted, or it falls back to jiffies.
KWQ_LATENCY_VM_APPEND="tsc_early_khz=1000000 tsc=reliable"
KWQ_LATENCY_VM_QEMU="-icount shift=0,sleep=off -smp 1"
# The KCSAN VM: a KCSAN report honours panic_on_warn (vm.sh sets it), so
# one outside kwq would end the run, where only kwq's count
# (report.py --kcsan-only-kwq). Seen in the torture run: the kernel's
# inode time updates from page_mkwrite of the history's shared pages
# (ramfs-backed without CONFIG_SHMEM), and the mono trace clock's fast
# timekeeper. A report still fails the run when its stacks name kwq.
KWQ_KCSAN_VM_APPEND="panic_on_warn=0"
KWQ_SID_PINS=$KWQ_ROOT/tools/testing/sid-pins
sid_pin() {
	local v
	v=$(awk -v p="$1" '$1 == p { print $2 }' "$KWQ_SID_PINS")
	[ -n "$v" ] || die "$KWQ_SID_PINS pins no version of $1"
	echo "$v"
}

# Version of the Debian kernel source package the test kernel is built from.
kwq_src_version() {
	dpkg-query -W -f '${Version}' "$KWQ_SRC_PKG" 2>/dev/null
}

# build_consumer KDIR KWQ_DIR KO: build the example consumer as its own
# module against an installed kwq only (KWQ_DIR holds include/ and
# symvers/<release>/Module.symvers): tools/example/kwq_example.c and its
# Kbuild alone in an empty directory outside the tree. Fails unless every
# kwq symbol resolved, the installed header was the one compiled and the
# module depends on kwq; copies it to KO and the build log to KO.log.
build_consumer() (
	local kdir=$1 kwqdir=$2 ko=$3 dir deps
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
	cp "$KWQ_ROOT/tools/example/kwq_example.c" "$KWQ_ROOT/tools/example/Kbuild" "$dir/"
	if ! make -C "$kdir" M="$dir" KWQ_DIR="$kwqdir" modules >"$ko.log" 2>&1; then
		cat "$ko.log" >&2
		die "the example consumer did not build against $kwqdir"
	fi
	# Without kwq's Module.symvers, modpost reports kwq's symbols undefined.
	if grep -E 'undefined|WARNING: modpost' "$ko.log" >&2; then
		die "the example consumer's build against $kwqdir left symbols unresolved"
	fi
	grep -qF "$kwqdir/include/linux/kwq.h" "$dir/.kwq_example.o.cmd" ||
		die "the example consumer was not compiled against $kwqdir/include"
	deps=$(modinfo -F depends "$dir/kwq_example.ko")
	[ "$deps" = kwq ] || die "the example consumer depends on '$deps', not kwq"
	cp "$dir/kwq_example.ko" "$ko"
	echo "example consumer built against $kwqdir: depends=$deps"
)
