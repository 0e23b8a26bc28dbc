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
# PACKAGE when running as root under CI (or KWQ_AUTO_INSTALL=1), else stop
# with a message that names the package.
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
	if [ "$(id -u)" = 0 ] && { [ "${CI:-}" = true ] || [ "${KWQ_AUTO_INSTALL:-}" = 1 ]; }; then
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
	die "$missing not found: install the Debian package '$pkg' (apt-get install $pkg), or run as root with CI=true to install it automatically"
}

# Version of the Debian kernel source package the test kernel is built from.
kwq_src_version() {
	dpkg-query -W -f '${Version}' "$KWQ_SRC_PKG" 2>/dev/null
}
