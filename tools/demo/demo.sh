#!/bin/bash
# make demo: boot Debian's stock 6.12 kernel in QEMU, load kwq, and run a
# small controller story with kwqctl and then the Go example controller
# (tools/demo/story.sh, userspace/go/example), narrating as it goes.
# Installs what it needs when run as root (KWQ_AUTO_INSTALL=0: never).
set -euo pipefail
. "$(dirname "$0")/../testing/lib.sh"
KWQ_AUTO_INSTALL=${KWQ_AUTO_INSTALL:-$([ "$(id -u)" = 0 ] && echo 1 || echo 0)}
export KWQ_AUTO_INSTALL

need_pkgs "${KWQ_PKGS_BUILD[@]}" "${KWQ_PKGS_VM[@]}" "${KWQ_PKGS_STOCK612[@]}"
out=$KWQ_OUT/demo
mkdir -p "$out"
say "locating Debian's stock 6.12 kernel and headers"
mapfile -t k < <("$KWQ_ROOT/tools/testing/stock-kernel.sh" 6.12)
say "building kwq.ko against ${k[0]}"
"$KWQ_ROOT/tools/testing/build-module.sh" "${k[0]}" "$out/mod" >/dev/null
say "building kwqctl (static, for the VM)"
make -s -C "$KWQ_ROOT/userspace" tests OUT="$out/user" >/dev/null
say "building the Go example controller (Go from Debian unstable; the first time fetches it)"
"$KWQ_ROOT/tools/testing/go-env.sh" go build -trimpath -o "$out/go-example" kwq.dev/kwq/example
cat >"$out/plan" <<'PLAN'
load_module /kwq/kwq.ko
echo "KWQ-DEMO-BEGIN"
sh /demo/story.sh 2>&1
echo "KWQ-DEMO-END"
unload_module kwq
PLAN
log=$out/console.log
say "booting $(basename "${k[1]}") in QEMU (console log: $log)"
: >"$log"
rc=0
"$KWQ_ROOT/tools/testing/vm.sh" -k "${k[1]}" -o "$log" -p "$out/plan" -t 180 \
	"$out/mod/kwq.ko=/kwq/kwq.ko" "$out/user/bin/kwqctl=/usr/bin/kwqctl" \
	"$out/go-example=/usr/bin/go-example" \
	"$KWQ_ROOT/tools/demo/story.sh=/demo/story.sh" \
	"$KWQ_ROOT/tools/demo/reconcile.sh=/demo/reconcile.sh" \
	"$KWQ_ROOT/tools/demo/deadline.sh=/demo/deadline.sh" \
	"$KWQ_ROOT/tools/demo/job.sh=/demo/job.sh" &
vm=$!
# Narrate live: print the story's lines as the VM writes them. The serial
# console ends lines with \r\n: strip the \r or no line matches.
tail -n +1 -F --pid=$vm "$log" 2>/dev/null | tr -d '\r' |
	sed -un '/^KWQ-DEMO-BEGIN$/,/^KWQ-DEMO-END$/{/^KWQ-DEMO-/d;/^\[ *[0-9.]*\]/d;p}'
wait $vm || rc=$?
if [ $rc != 0 ] || ! grep -q KWQ-DEMO-END "$log" ||
	! "$KWQ_ROOT/tools/testing/report.py" "$log" >"$out/report.txt"; then
	cat "$out/report.txt" 2>/dev/null || true
	die "the demo did not complete (console log: $log)"
fi
echo
say "demo complete: kwq loaded, used and unloaded cleanly on $(basename "${k[1]}")"
