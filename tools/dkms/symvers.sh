#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# DKMS hook (dkms.conf POST_BUILD and POST_REMOVE): keep the Module.symvers
# of each kernel kwq is built for where consumer modules look for it,
# SRCDIR/symvers/KERNELRELEASE/Module.symvers, the layout `make install`
# uses (SRCDIR is /usr/src/kwq-VERSION, the tree DKMS builds from).
#
# usage: symvers.sh install SRCDIR KERNELRELEASE   (in DKMS's build directory)
#        symvers.sh remove SRCDIR KERNELRELEASE
set -eu

usage() {
	echo "usage: symvers.sh install|remove SRCDIR KERNELRELEASE" >&2
	exit 2
}

[ $# = 3 ] || usage
dir=$2/symvers/$3
case $1 in
install)
	[ -f Module.symvers ] || { echo "symvers.sh: no Module.symvers in $(pwd)" >&2; exit 1; }
	mkdir -p "$dir"
	cp Module.symvers "$dir/Module.symvers"
	echo "kwq: Module.symvers for $3 in $dir"
	;;
remove)
	rm -f "$dir/Module.symvers"
	rmdir "$dir" 2>/dev/null || true
	rmdir "$2/symvers" 2>/dev/null || true
	;;
*)
	usage
	;;
esac
