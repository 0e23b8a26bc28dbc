#!/bin/bash
# Fetch one package from Debian unstable (sid) without touching the system:
# a private apt configuration in $KWQ_CACHE/sid/apt (its own sources file,
# lists and cache) reaches the mirror the system's apt uses, apt-get
# download fetches the .deb and dpkg-deb -x unpacks it. Nothing is
# installed, and the system's own lists stay as they are.
#
# usage: sid-fetch.sh PACKAGE [VERSION]
# VERSION defaults to PACKAGE's line in tools/testing/sid-pins. Prints the
# directory the package is unpacked in, $KWQ_CACHE/sid/PACKAGE_VERSION;
# later calls reuse it without the network. A version unstable no longer
# serves fails with one message naming the pin file and the package.
# apt's output goes to $KWQ_OUT/logs/sid-apt.log. KWQ_SID_MIRROR overrides
# the mirror.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

pkg=${1:?usage: sid-fetch.sh PACKAGE [VERSION]}
ver=${2:-$(sid_pin "$pkg")}
sid=$KWQ_CACHE/sid
dir=$sid/${pkg}_$(tr -c 'A-Za-z0-9.+~\n-' _ <<<"$ver")
[ -f "$dir/.kwq-unpacked" ] && { echo "$dir"; exit 0; }

mkdir -p "$sid" "$KWQ_OUT/logs"
exec 9>"$sid/.lock"
flock 9
[ -f "$dir/.kwq-unpacked" ] && { echo "$dir"; exit 0; }

keyring=/usr/share/keyrings/debian-archive-keyring.gpg
need_pkg debian-archive-keyring "$keyring"
log=$(realpath "$KWQ_OUT")/logs/sid-apt.log
# The mirror of the system's main archive (the suite without a dash, not
# -security or -updates); unstable is next to it.
# shellcheck disable=SC2016 # apt expands $(REPO_URI), not the shell
mirror=${KWQ_SID_MIRROR:-$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null |
	awk '$2 !~ /-/ { print $1; exit }')}
mirror=${mirror:-http://deb.debian.org/debian/}

apt=$sid/apt
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
echo "deb [signed-by=$keyring] $mirror sid main" >"$apt/sources.list"
# The cache is private to its user: no download as _apt.
opts=(-o "Dir::Etc::sourcelist=$apt/sources.list" -o Dir::Etc::sourceparts=-
	-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
	-o Dir::State::status=/dev/null -o APT::Sandbox::User=root)

updated=
update() {
	say "sid: updating the package lists of unstable ($mirror; log: $log)"
	apt-get "${opts[@]}" -qq update >>"$log" 2>&1 ||
		die "apt-get update of Debian unstable at $mirror failed (log: $log)"
	touch "$apt/lists/.kwq-updated"
	updated=1
}
# Lists younger than 6 hours are good enough for a pinned version; an
# older or missing version triggers a fresh update below anyway.
if [ -z "$(find "$apt/lists/.kwq-updated" -mmin -360 2>/dev/null)" ]; then
	update
fi
served() { apt-cache "${opts[@]}" show "$pkg" 2>/dev/null | grep -xF "Version: $ver" >/dev/null; }
if ! served && [ -z "$updated" ]; then
	update
fi
if ! served; then
	have=$(apt-cache "${opts[@]}" policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: //p')
	if [ -n "$have" ] && [ "$have" != "(none)" ]; then
		die "Debian unstable no longer serves $pkg $ver (it has $have): update $pkg in $KWQ_SID_PINS"
	fi
	# A package whose name carries a version (a kernel ABI, a toolchain
	# release): name what unstable has in its place.
	re=$(sed -E 's/[.+]/\\&/g; s/[0-9]+(\\\.[0-9]+)+(\\\+[a-z]+[0-9]+)?/[0-9.]+(\\+[a-z]+[0-9]+)?/' <<<"$pkg")
	like=$(apt-cache "${opts[@]}" pkgnames 2>/dev/null | grep -xE "$re" | sort -V | tail -3 |
		tr '\n' ' ' || true)
	die "Debian unstable no longer serves $pkg${like:+ (it has ${like% })}: update $pkg in $KWQ_SID_PINS"
fi

start=$(date +%s)
say "sid: fetching $pkg $ver"
tmp=$(mktemp -d "$sid/.fetch.XXXXXX")
trap 'rm -rf "$tmp" "$dir.tmp"' EXIT
(cd "$tmp" && apt-get "${opts[@]}" -qq download "$pkg=$ver") >>"$log" 2>&1 ||
	die "downloading $pkg $ver from $mirror failed (log: $log)"
rm -rf "$dir.tmp"
mkdir -p "$dir.tmp"
dpkg-deb -x "$tmp"/*.deb "$dir.tmp" || die "dpkg-deb -x of $pkg $ver failed"
touch "$dir.tmp/.kwq-unpacked"
rm -rf "$dir"
mv "$dir.tmp" "$dir"
say "sid: $pkg $ver unpacked in $dir ($(($(date +%s) - start)) s)"
echo "$dir"
