#!/bin/bash
# The kernel's own semantic patches (scripts/coccinelle, through `make
# coccicheck MODE=report`) over kwq's module sources: src/, include/ and
# kunit/. Any report fails. A run that passed is remembered by a hash of
# what it read (the sources, spatch's version and the kernel's semantic
# patches), so an unchanged tree is not checked twice.
#
# usage: coccicheck.sh KDIR	(a configured kernel tree with scripts/coccinelle)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kdir=${1:?usage: coccicheck.sh KDIR}
[ -d "$kdir/scripts/coccinelle" ] || die "no scripts/coccinelle in $kdir"
command -v spatch >/dev/null || die "spatch is missing (Debian: coccinelle)"

key=$( {
	spatch --version | head -1
	cd "$kdir" && find scripts/coccinelle -name '*.cocci' | sort | xargs sha256sum
	cd "$KWQ_ROOT" && find Kbuild src include kunit -type f | sort | xargs sha256sum
} | sha256sum | cut -c1-16)
stamp=$KWQ_CACHE/coccicheck/$key.ok
if [ -f "$stamp" ]; then
	echo "coccicheck: these sources passed before ($stamp)"
	exit 0
fi

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp -r "$KWQ_ROOT/Kbuild" "$KWQ_ROOT/src" "$KWQ_ROOT/include" "$KWQ_ROOT/kunit" "$dir/"
log=$dir/coccicheck.log
make -C "$kdir" M="$dir" coccicheck MODE=report J="$(nproc)" >"$log" 2>&1 ||
	{ tail -20 "$log"; die "make coccicheck failed"; }
# Reports name the file; everything else is spatch talking about itself.
if grep "^$dir/" "$log" | sed "s#^$dir/##"; then
	die "coccicheck reported the lines above"
fi
grep -q "files match" "$log" || { tail -20 "$log"; die "coccicheck ran no semantic patch"; }
echo "coccicheck: $(grep -c 'cocci-file' "$log") semantic patches, no report"
mkdir -p "$(dirname "$stamp")"
touch "$stamp"
