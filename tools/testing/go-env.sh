#!/bin/bash
# Run a command with the Go toolchain and client-go of Debian unstable,
# offline: the packages named "golang-*" in tools/testing/sid-pins are
# fetched and unpacked by sid-fetch.sh (nothing is installed), a GOROOT is
# assembled from golang-1.27-go and golang-1.27-src in $KWQ_OUT/go/goroot,
# and GOPATH lists kwq's own tree ($KWQ_OUT/go/path, where
# userspace/go is kwq.dev/kwq) followed by every unpacked
# /usr/share/gocode; the build cache is $KWQ_CACHE/go-build. GOPATH
# mode (GO111MODULE=off), GOPROXY=off, GOTOOLCHAIN=local, CGO_ENABLED=0:
# the build reads nothing from the network and links static binaries.
#
# With KWQ_GO_MODULES=1 the build is in module mode instead, from
# userspace/go/go.mod: a workspace ($KWQ_OUT/go/go.work) uses that module
# and replaces every module an unpacked package holds (its go.mod's
# "module" line) with the package's sources, so that the requirements of
# go.mod resolve offline (a package with no go.mod gets one, naming its
# top source directory, in a copy of links); run CMD in userspace/go.
#
# usage: go-env.sh CMD [ARG...]	(e.g. go-env.sh go build kwq.dev/kwq)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -gt 0 ] || die "usage: go-env.sh CMD [ARG...]"
mkdir -p "$KWQ_OUT"
out=$(realpath "$KWQ_OUT")/go
fetch() { "$KWQ_ROOT/tools/testing/sid-fetch.sh" "$1"; }

# The toolchain: golang-X.Y-go's usr/lib/go-X.Y links its api, lib, misc,
# src and test to ../../share/go-X.Y, which golang-X.Y-src holds.
gopkg=$(awk '$1 ~ /^golang-[0-9.]+-go$/ { print $1; exit }' "$KWQ_SID_PINS")
[ -n "$gopkg" ] || die "$KWQ_SID_PINS pins no golang-X.Y-go"
gover=${gopkg#golang-}
gover=${gover%-go}
godir=$(fetch "$gopkg")
srcdir=$(fetch "golang-$gover-src")
root=$out/goroot
stamp="$godir $srcdir"
if [ "$(cat "$root/.kwq-stamp" 2>/dev/null)" != "$stamp" ]; then
	rm -rf "$root"
	mkdir -p "$root"
	# The binaries, go.env and VERSION from one, the rest from the other.
	for f in "$godir/usr/lib/go-$gover"/* "$srcdir/usr/share/go-$gover"/*; do
		[ -L "$f" ] || ln -s "$f" "$root/$(basename "$f")"
	done
	echo "$stamp" >"$root/.kwq-stamp"
fi
if [ ! -x "$root/bin/go" ] || [ ! -d "$root/src/runtime" ]; then
	die "$root is not a Go root (from $godir and $srcdir)"
fi

# The libraries: every other golang-* pin is a -dev package of Go sources.
gopath=$out/path
mkdir -p "$gopath/src/kwq.dev"
ln -sfn "$KWQ_ROOT/userspace/go" "$gopath/src/kwq.dev/kwq"
while read -r pkg _; do
	gopath+=:$(fetch "$pkg")/usr/share/gocode
done < <(awk '$1 ~ /^golang-.*-dev$/' "$KWQ_SID_PINS")

export GOROOT=$root GOPATH=$gopath GO111MODULE=off GOTOOLCHAIN=local GOWORK=off
if [ "${KWQ_GO_MODULES:-0}" = 1 ]; then
	work=$out/go.work
	{
		echo "go $gover"
		echo "use $KWQ_ROOT/userspace/go"
		echo "replace ("
		IFS=: read -ra dirs <<<"${gopath#*:}"
		for d in "${dirs[@]}"; do
			find "$d" -name go.mod ! -path '*/_*' ! -path '*/testdata/*' | sort |
				while read -r m; do
					mod=$(awk '$1 == "module" { print $2; exit }' "$m")
					echo "	$mod => $(dirname "$m")"
				done
			# A package of sources with no go.mod (a module from before
			# modules, as github.com/munnerz/goautoneg): its top source
			# directory is the module, given a go.mod in a copy of links.
			if [ -z "$(find "$d" -name go.mod -print -quit)" ]; then
				top=$(find "$d" -name '*.go' -printf '%h\n' | awk '{ print length, $0 }' |
					sort -n | head -1 | cut -d' ' -f2-)
				[ -n "$top" ] || continue
				mod=${top#"$d"/src/}
				shadow=$out/nomod/$mod
				mkdir -p "$shadow"
				ln -sfn "$top"/* "$shadow"/
				echo "module $mod" >"$shadow/go.mod"
				echo "	$mod => $shadow"
			fi
		done
		echo ")"
	} >"$work.tmp"
	mv "$work.tmp" "$work"
	export GO111MODULE=on GOWORK=$work GOSUMDB=off
fi
# The build cache is content-addressed and safe to share: in $KWQ_CACHE
# (beside the kernels), a fresh clone's first build reuses it.
export GOPROXY=off GOFLAGS='' CGO_ENABLED=0 GOCACHE=$KWQ_CACHE/go-build GOTELEMETRY=off
export PATH=$root/bin:$PATH
exec "$@"
