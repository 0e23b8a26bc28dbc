# SPDX-License-Identifier: GPL-2.0
#
# kwq top-level Makefile.
#
#   make                 build kwq.ko against KDIR (default: running kernel)
#   make demo            a narrated controller story in QEMU
#   make check           the full test suite in QEMU (see README.md)
#   make bench           benchmarks against the workqueue, a workqueue +
#                        rhashtable peer, mqueue and delayed_work in QEMU,
#                        ending with one "target NAME MEASURED GOAL met|missed"
#                        line per target (Documentation/benchmarks.rst);
#                        results and charts in build/bench
#   make bench-host      the unmodified core in userspace under callgrind:
#                        instructions and LL cache misses per operation,
#                        deterministic (Documentation/benchmarks.rst, "Host
#                        benchmark"); results in build/bench-host
#   make bench-host-tables  the kernel's rhashtable against kwq's own hash
#                        table, same keys, shims and cache model
#                        (Documentation/benchmarks.rst, "rhashtable against
#                        kwq's table"); results in build/bench-host/tables
#   make kernel          build/cache the debug test kernels (6.12, 7.2) only
#   make fuzz            the ioctl fuzzer on the debug kernel, SECONDS=N (300)
#                        SEED=S (random, printed) PROCS=P THREADS=T; its
#                        reproducers in build/fuzz/repro-*; REPLAY=FILE
#                        replays one (one thread, each call's result)
#   make torture         the torture run (issue 34) on the debug 6.12 kernel,
#                        SECONDS=N (300) SEED=S; PLANT=BUG loads a kwq.ko
#                        with a planted bug (tools/testing/plant/BUG.patch);
#                        KERNEL=kcsan runs it on the KCSAN kernel (7.2: the
#                        debug 7.2), CPUS=4 with four vCPUs
#   make torture-plants  each planted bug must be caught (one VM each, 60 s)
#   make check-kcsan     KUnit + userspace tests on the KCSAN test kernel
#   make coverage        line and branch coverage of src/ (gcov, lcov): the
#                        debug 6.12 VMs of make check alone; HTML in
#                        $(KWQ_OUT)/coverage (Documentation/testing.rst)
#   make deb             Debian packages kwq-dkms, libkwq1, libkwq-dev, kwqctl
#                        in $(KWQ_OUT)/deb, built from a copy of the tree
#                        (tools/deb/deb.sh), then lintian
#   make check-system    the packages on a real Debian 12 system in QEMU
#                        (as root): mmdebstrap's root filesystem (cached),
#                        stock 6.12 kernel, systemd; apt install, reboot,
#                        a service, metrics, upgrades, purge
#                        (tools/testing/system/, Documentation/testing.rst)
#   make man             kwqctl.1, libkwq.3 and kwq.4 from Documentation/
#                        (tools/man/mkman.py, docutils) in $(KWQ_OUT)/man
#   make install         module (modules_install), udev rule (the kwq group
#                        gets the device; the group is created when
#                        DESTDIR is empty), man pages; for consumer
#                        modules the kernel API header and Module.symvers in
#                        KWQ_SRCDIR (/usr/src/kwq-VERSION, DKMS's layout); from
#                        userspace/: headers, libkwq, pkg-config, kwqctl;
#                        DESTDIR and PREFIX honoured
#   make uninstall
#   make clean
# Given KDIR alone, install for the kernel it was configured for.
ifdef KDIR
KRELEASE ?= $(or $(shell cat $(KDIR)/include/config/kernel.release 2>/dev/null),$(shell uname -r))
endif
KRELEASE ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KRELEASE)/build
KWQ_OUT ?= $(CURDIR)/build
PREFIX ?= /usr/local
DESTDIR ?=
UDEVDIR ?= /lib/udev/rules.d
MANDIR ?= $(PREFIX)/share/man
KWQ_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' $(CURDIR)/dkms.conf)
# What a consumer module builds against: KWQ_SRCDIR/include and
# KWQ_SRCDIR/symvers/<kernel release>/Module.symvers. DKMS builds from a copy
# of this tree in /usr/src/kwq-VERSION and keeps the same layout there
# (dkms.conf, tools/dkms/symvers.sh).
KWQ_SRCDIR ?= /usr/src/kwq-$(KWQ_VERSION)
export KWQ_OUT

.PHONY: all modules modules_clean clean check bench bench-host bench-host-tables demo kernel userspace install uninstall
.PHONY: fuzz check-kcsan coverage deb man torture torture-plants check-system

# Man pages: NAME.SECTION from one page of Documentation/ each, with its
# NAME line's description.
MAN_PAGES := $(addprefix $(KWQ_OUT)/man/,kwqctl.1 libkwq.3 kwq.4)
man_desc_kwqctl.1 := drive kwq queues from the shell
man_desc_libkwq.3 := C library of the kwq keyed work queue
man_desc_kwq.4 := the /dev/kwq keyed work queue device and its ioctls
man_rst_kwqctl.1 := Documentation/kwqctl.rst
man_rst_libkwq.3 := Documentation/libkwq.rst
man_rst_kwq.4 := Documentation/ioctl.rst

all: modules

modules:
	@test -f $(KDIR)/Makefile || { echo "error: no kernel build tree at $(KDIR);" \
		"install linux-headers-$$(uname -r) or pass KDIR=" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

userspace:
	$(MAKE) -C userspace

check:
	tools/testing/check.sh

demo:
	tools/demo/demo.sh

bench:
	tools/bench/bench.sh

bench-host:
	tools/bench-host/run.sh

bench-host-tables:
	tools/bench-host/tables.sh

kernel:
	tools/testing/build-kernel.sh tools/testing/config/debug.config 6.12
	tools/testing/build-kernel.sh tools/testing/config/debug.config 7.2

SECONDS ?= 300
PROCS ?= 3
THREADS ?= 3
fuzz:
	tools/testing/fuzz.sh -t $(SECONDS) -p $(PROCS) -j $(THREADS) $(if $(SEED),-s $(SEED)) \
		$(if $(REPLAY),-r $(abspath $(REPLAY)))

# The torture run (userspace/tests/torture_test.c) for SECONDS on the debug
# 6.12 kernel; PLANT=BUG loads a kwq.ko with a planted bug
# (tools/testing/plant/BUG.patch). torture-plants proves each is caught.
# KERNEL=kcsan|7.2 another kernel, CPUS=N vCPUs (try.sh -v, -c).
comma := ,
torture:
	tools/testing/try.sh -o torture$(if $(KERNEL),-$(KERNEL)) -t $$(($(SECONDS) * 3 + 600)) \
		$(if $(KERNEL),-v $(KERNEL)) $(if $(CPUS),-c $(CPUS)) \
		$(if $(PLANT),-P $(PLANT)) torture:-t,$(SECONDS)$(if $(SEED),$(comma)-s$(comma)$(SEED))

torture-plants:
	tools/testing/torture-plants.sh $(if $(filter command line,$(origin SECONDS)),$(SECONDS),60)

check-kcsan:
	KWQ_CHECK_ONLY=kcsan tools/testing/check.sh

coverage:
	KWQ_CHECK_ONLY=coverage tools/testing/check.sh

man: $(MAN_PAGES)

.SECONDEXPANSION:
$(KWQ_OUT)/man/%: $$(man_rst_%) tools/man/mkman.py dkms.conf
	@mkdir -p $(@D)
	@python3 -c 'import docutils' 2>/dev/null || { echo "error: the man" \
		"pages need docutils: apt-get install python3-docutils" >&2; exit 1; }
	tools/man/mkman.py $< $@ "$(man_desc_$*)" $(KWQ_VERSION)

deb:
	tools/deb/deb.sh

check-system:
	tools/testing/system/check-system.sh

install: modules userspace man
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_PATH=$(DESTDIR) \
		INSTALL_MOD_DIR=updates modules_install
	install -D -m 644 tools/udev/60-kwq.rules $(DESTDIR)$(UDEVDIR)/60-kwq.rules
	@# The rule gives the device to the group kwq (Documentation/security.rst).
	if [ -z "$(DESTDIR)" ] && ! getent group kwq >/dev/null; then \
		groupadd --system kwq; fi
	for p in $(MAN_PAGES); do \
		s=$${p##*.}; install -D -m 644 $$p $(DESTDIR)$(MANDIR)/man$$s/$${p##*/}; \
	done
	install -D -m 644 include/linux/kwq.h $(DESTDIR)$(KWQ_SRCDIR)/include/linux/kwq.h
	install -D -m 644 include/uapi/linux/kwq.h \
		$(DESTDIR)$(KWQ_SRCDIR)/include/uapi/linux/kwq.h
	install -D -m 644 Module.symvers \
		$(DESTDIR)$(KWQ_SRCDIR)/symvers/$(KRELEASE)/Module.symvers
	$(MAKE) -C userspace install DESTDIR=$(DESTDIR) PREFIX=$(PREFIX)

uninstall:
	rm -f $(DESTDIR)/lib/modules/$(KRELEASE)/updates/kwq.ko*
	rm -f $(DESTDIR)$(UDEVDIR)/60-kwq.rules
	for p in $(notdir $(MAN_PAGES)); do \
		rm -f $(DESTDIR)$(MANDIR)/man$${p##*.}/$$p; done
	rm -f $(DESTDIR)$(KWQ_SRCDIR)/symvers/$(KRELEASE)/Module.symvers
	rmdir $(DESTDIR)$(KWQ_SRCDIR)/symvers/$(KRELEASE) 2>/dev/null || true
	@# The headers serve every kernel: they go with the last Module.symvers.
	if rmdir $(DESTDIR)$(KWQ_SRCDIR)/symvers 2>/dev/null || \
			! test -d $(DESTDIR)$(KWQ_SRCDIR)/symvers; then \
		rm -f $(DESTDIR)$(KWQ_SRCDIR)/include/linux/kwq.h \
			$(DESTDIR)$(KWQ_SRCDIR)/include/uapi/linux/kwq.h; \
		rmdir $(DESTDIR)$(KWQ_SRCDIR)/include/linux \
			$(DESTDIR)$(KWQ_SRCDIR)/include/uapi/linux \
			$(DESTDIR)$(KWQ_SRCDIR)/include/uapi $(DESTDIR)$(KWQ_SRCDIR)/include \
			$(DESTDIR)$(KWQ_SRCDIR) 2>/dev/null || true; \
	fi
	$(MAKE) -C userspace uninstall DESTDIR=$(DESTDIR) PREFIX=$(PREFIX)

# Only the module's objects (DKMS's CLEAN uses this).
modules_clean:
	-test -f $(KDIR)/Makefile && $(MAKE) -C $(KDIR) M=$(CURDIR) clean

clean: modules_clean
	-test -d userspace && $(MAKE) -C userspace clean
	rm -rf $(KWQ_OUT)
