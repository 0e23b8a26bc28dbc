# SPDX-License-Identifier: GPL-2.0
#
# kwq top-level Makefile.
#
#   make                 build kwq.ko against KDIR (default: running kernel)
#   make check           the full test suite in QEMU (see README.md)
#   make kernel          build/cache the debug test kernel only
#   make clean
KDIR ?= /lib/modules/$(shell uname -r)/build
KWQ_OUT ?= $(CURDIR)/build
export KWQ_OUT

.PHONY: all modules clean check kernel userspace

all: modules

modules:
	@test -f $(KDIR)/Makefile || { echo "error: no kernel build tree at $(KDIR);" \
		"install linux-headers-$$(uname -r) or pass KDIR=" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

userspace:
	$(MAKE) -C userspace

check:
	tools/testing/check.sh

kernel:
	tools/testing/build-kernel.sh tools/testing/config/debug.config

clean:
	-test -f $(KDIR)/Makefile && $(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(MAKE) -C userspace clean
	rm -rf $(KWQ_OUT)
