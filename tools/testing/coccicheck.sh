#!/bin/bash
# The kernel's own semantic patches (scripts/coccinelle, through `make
# coccicheck MODE=report`) over kwq's module sources: src/, include/ and
# kunit/. Any report fails. A .c file that passed is remembered by a
# hash of what its check read (the file; spatch's version, the kernel's
# semantic patches, Kbuild and every header, which all files share), so
# a second run checks only the .c files that changed: all of them when
# a header or a semantic patch did. Each semantic patch examines one
# file at a time. spatch's start for each of the ~70 semantic patches
# is a floor of about 30 CPU seconds once anything changed.
# KWQ_NO_MEMO=1 checks every file.
#
# usage: coccicheck.sh KDIR	(a configured kernel tree with scripts/coccinelle)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kdir=${1:?usage: coccicheck.sh KDIR}
[ -d "$kdir/scripts/coccinelle" ] || die "no scripts/coccinelle in $kdir"
command -v spatch >/dev/null || die "spatch is missing (Debian: coccinelle)"

common=$( {
	spatch --version | head -1
	cd "$kdir" && find scripts/coccinelle -name '*.cocci' | sort | xargs sha256sum
	cd "$KWQ_ROOT" && find Kbuild src include kunit -type f ! -name '*.c' | sort | xargs sha256sum
} | sha256sum | cut -c1-16)
stamps=$KWQ_CACHE/coccicheck
todo=() all=0
while IFS= read -r f; do
	all=$((all + 1))
	key=$({ echo "$common" && cat "$KWQ_ROOT/$f"; } | sha256sum | cut -c1-16)
	memo_hit "$stamps/$key.ok" || todo+=("$f=$key")
done < <(cd "$KWQ_ROOT" && find src include kunit -name '*.c' | sort)
if [ ${#todo[@]} = 0 ]; then
	echo "coccicheck: all $all files passed before with these bytes ($stamps)"
	exit 0
fi

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp -r "$KWQ_ROOT/Kbuild" "$KWQ_ROOT/dkms.conf" "$KWQ_ROOT/src" "$KWQ_ROOT/include" "$KWQ_ROOT/kunit" "$dir/"
# The .c files that passed before leave the copy; the headers stay.
find "$dir/src" "$dir/include" "$dir/kunit" -name '*.c' -delete
for t in "${todo[@]}"; do
	cp "$KWQ_ROOT/${t%=*}" "$dir/${t%=*}"
done
log=$dir/coccicheck.log
make -C "$kdir" M="$dir" coccicheck MODE=report J="$(nproc)" >"$log" 2>&1 ||
	{ tail -20 "$log"; die "make coccicheck failed"; }
# Reports name the file; everything else is spatch talking about itself.
if grep "^$dir/" "$log" | sed "s#^$dir/##"; then
	die "coccicheck reported the lines above"
fi
grep -q "files match" "$log" || { tail -20 "$log"; die "coccicheck ran no semantic patch"; }
echo "coccicheck: $(grep -c 'cocci-file' "$log") semantic patches over ${#todo[@]} of $all files" \
	"(the others passed before with these bytes), no report"
mkdir -p "$stamps"
for t in "${todo[@]}"; do
	touch "$stamps/${t#*=}.ok"
done
