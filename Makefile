# SPDX-License-Identifier: GPL-2.0
#
# kwq top-level Makefile.
#
#   make                 build kwq.ko against KDIR (default: running kernel)
#   make check           the full test suite in QEMU (see README.md)
#   make kernel          build/cache the debug test kernel only
#   make install         module (modules_install), uapi header, udev rule,
#                        libkwq + kwqctl; DESTDIR and PREFIX honoured
#   make uninstall
#   make clean
KRELEASE ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KRELEASE)/build
KWQ_OUT ?= $(CURDIR)/build
PREFIX ?= /usr/local
DESTDIR ?=
UDEVDIR ?= /lib/udev/rules.d
export KWQ_OUT

.PHONY: all modules clean check kernel userspace install uninstall

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

install: modules userspace
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_PATH=$(DESTDIR) \
		INSTALL_MOD_DIR=updates modules_install
	install -D -m 644 include/uapi/linux/kwq.h $(DESTDIR)$(PREFIX)/include/linux/kwq.h
	install -D -m 644 tools/udev/60-kwq.rules $(DESTDIR)$(UDEVDIR)/60-kwq.rules
	$(MAKE) -C userspace install DESTDIR=$(DESTDIR) PREFIX=$(PREFIX)

uninstall:
	rm -f $(DESTDIR)/lib/modules/$(KRELEASE)/updates/kwq.ko*
	rm -f $(DESTDIR)$(PREFIX)/include/linux/kwq.h $(DESTDIR)$(UDEVDIR)/60-kwq.rules
	$(MAKE) -C userspace uninstall DESTDIR=$(DESTDIR) PREFIX=$(PREFIX)

clean:
	-test -f $(KDIR)/Makefile && $(MAKE) -C $(KDIR) M=$(CURDIR) clean
	-test -d userspace && $(MAKE) -C userspace clean
	rm -rf $(KWQ_OUT)
