# shellcheck shell=bash
# Shared helpers for the kwq test harness. Sourced, never run.

KWQ_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KWQ_CACHE=${KWQ_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kwq}
KWQ_OUT=${KWQ_OUT:-$KWQ_ROOT/build}
KWQ_SRC_PKG=linux-source-6.12
KWQ_JOBS=${KWQ_JOBS:-$(nproc)}

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# need_pkg PACKAGE COMMAND-OR-PATH...
# Make sure each command (or absolute path) exists; otherwise install
# PACKAGE when running as root (KWQ_AUTO_INSTALL=0 turns that off), else
# stop with a message that names the package. One policy for make check,
# make demo and make bench, as README.md says.
need_pkg() {
	local pkg=$1 what missing=
	shift
	for what in "$@"; do
		case $what in
		/*) [ -e "$what" ] || missing=$what ;;
		*) command -v "$what" >/dev/null 2>&1 || missing=$what ;;
		esac
	done
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" = 0 ] && [ "${KWQ_AUTO_INSTALL:-1}" != 0 ]; then
		say "installing $pkg (needed for $missing)"
		if [ -z "${KWQ_APT_UPDATED:-}" ]; then
			apt-get update -qq >&2 || die "apt-get update failed"
			export KWQ_APT_UPDATED=1
		fi
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends "$pkg" >&2 ||
			die "apt-get install $pkg failed"
		return 0
	fi
	die "$missing not found: install the Debian package '$pkg' (apt-get install $pkg), or run as root to install it automatically"
}

# sid_pin PACKAGE: the version of PACKAGE that tools/testing/sid-pins pins
# (the packages taken from Debian unstable; sid-fetch.sh fetches them).
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
