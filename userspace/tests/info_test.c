// SPDX-License-Identifier: GPL-2.0
/*
 * KWQ_IOC_INFO: the arguments of the CREATE that made a queue, as it
 * accepted them, to whoever opens it: versioned by size as STATS, no
 * byte of the creator's past the name, and libkwq's kwq_queue_info().
 */
#include "kwqtest.h"

#include <sys/ioctl.h>

#define NCASES 11
#define BADPTR ((void *)1)
#define RESIZE(cmd, size) \
	_IOC(_IOC_DIR(cmd), _IOC_TYPE(cmd), _IOC_NR(cmd), (size))

int main(void)
{
	struct kwq_create_args ca, got;
	struct kwq_queue_opts o;
	unsigned char big[sizeof(ca) + 16];
	unsigned int flags = ~0u;
	char name[KWQ_NAME_LEN];
	int fd, fd2, ufd, ok;
	size_t i;

	kt_setup("kwq_info", NCASES, 60);

	/* Every option set, mode 0, junk after the name's NUL. */
	fd = kt_dev();
	memset(&ca, 0, sizeof(ca));
	memset(ca.name, 'J', sizeof(ca.name));
	kt_name(name, "info");
	memcpy(ca.name, name, strlen(name) + 1);
	ca.flags = KWQ_CREATE_EPHEMERAL;
	ca.nr_limits = 1;
	ca.limits[0].type = KWQ_LIMIT_EXPONENTIAL;
	ca.limits[0].a = 1000;
	ca.limits[0].b = 2000000;
	ca.max_items = 7;
	ca.max_wait_ns = 5000000;
	ca.processing_timeout_ns = KWQ_PROCESSING_TIMEOUT_MIN;
	ca.max_retries = 3;
	ca.max_dead = 9;
	if (ioctl(fd, KWQ_IOC_CREATE, &ca) < 0) {
		printf("    # create %s: %s\n", name, strerror(errno));
		return 1;
	}
	fd2 = kt_attach(name);
	memset(&got, 0xaa, sizeof(got));
	ok = ioctl(fd2, KWQ_IOC_INFO, &got) == 0;
	ktap_check(ok && !strcmp(got.name, name) && got.flags == ca.flags &&
		   got.mode == 0600 && got.nr_limits == 1 &&
		   !memcmp(got.limits, ca.limits, sizeof(ca.limits)) &&
		   got.max_items == 7 && got.max_wait_ns == 5000000 &&
		   got.processing_timeout_ns == KWQ_PROCESSING_TIMEOUT_MIN &&
		   got.max_retries == 3 && got.max_dead == 9,
		   "info_returns_create_args_to_another_fd",
		   "%s; name '%.*s' flags %u mode %#o limits %u max_items %u",
		   ok ? "ok" : kt_ename(errno), KWQ_NAME_LEN, got.name,
		   got.flags, got.mode, got.nr_limits, got.max_items);
	for (i = strlen(name); i < sizeof(got.name) && !got.name[i]; i++)
		;
	ktap_check(ok && i == sizeof(got.name), "info_name_zero_past_nul",
		   "byte %zu past the name is %#x", i,
		   i < sizeof(got.name) ? (unsigned char)got.name[i] : 0);

	/* Version 1 gets its prefix; a larger struct zeros past ours. */
	memset(&got, 0xaa, sizeof(got));
	ok = ioctl(fd2, RESIZE(KWQ_IOC_INFO, KWQ_CREATE_ARGS_SIZE_VER1),
		   &got) == 0;
	ktap_check(ok && got.max_items == 7 &&
		   got.processing_timeout_ns == 0xaaaaaaaaaaaaaaaaULL,
		   "info_version_1_prefix_only", "%s processing %#llx",
		   ok ? "ok" : kt_ename(errno),
		   (unsigned long long)got.processing_timeout_ns);
	memset(big, 0xaa, sizeof(big));
	ok = ioctl(fd2, RESIZE(KWQ_IOC_INFO, sizeof(big)), big) == 0;
	for (i = sizeof(ca); ok && i < sizeof(big) && !big[i]; i++)
		;
	ktap_check(ok && i == sizeof(big), "info_larger_struct_zero_tail",
		   "%s, byte %zu", ok ? "ok" : kt_ename(errno), i);
	KT_ERR(ioctl(fd2, RESIZE(KWQ_IOC_INFO, 100), &got), EINVAL,
	       "info_smaller_than_version_1_einval");
	KT_ERR(ioctl(fd2, KWQ_IOC_INFO, BADPTR), EFAULT,
	       "info_bad_pointer_efault");
	KT_ERR(ioctl(fd2, _IOW(KWQ_IOC_MAGIC, 0x15, struct kwq_create_args),
		     &got), ENOTTY, "info_write_direction_enotty");
	ufd = kt_dev();
	KT_ERR(ioctl(ufd, KWQ_IOC_INFO, &got), ENOTCONN,
	       "info_unattached_enotconn");
	close(ufd);

	/* libkwq: the options and flags back in its own struct. */
	memset(&o, 0xaa, sizeof(o));
	ok = kwq_queue_info(fd2, &o, &flags) == 0;
	ktap_check(ok && flags == KWQ_CREATE_EPHEMERAL && o.mode == 0600 &&
		   o.nr_limits == 1 && o.limits[0].b == 2000000 &&
		   o.max_items == 7 && o.max_wait_ns == 5000000 &&
		   o.processing_timeout_ns == KWQ_PROCESSING_TIMEOUT_MIN &&
		   o.max_retries == 3 && o.max_dead == 9,
		   "libkwq_queue_info_fills_opts", "%s flags %u mode %#o",
		   ok ? "ok" : kt_ename(errno), flags, o.mode);

	/* Defaults read as given: zeros, mode 0600. */
	close(fd);
	close(fd2);
	fd = kt_queue("infodef", NULL, name);
	ok = ioctl(fd, KWQ_IOC_INFO, &got) == 0;
	ktap_check(ok && got.flags == 0 && got.mode == 0600 &&
		   got.nr_limits == 0 && got.max_items == 0 &&
		   got.processing_timeout_ns == 0 && got.max_retries == 0,
		   "info_of_defaults", "%s mode %#o", ok ? "ok" : kt_ename(errno),
		   got.mode);
	fd2 = kt_dev();
	kwq_destroy(fd2, name);
	close(fd2);
	KT_ERR(ioctl(fd, KWQ_IOC_INFO, &got), EIDRM, "info_destroyed_eidrm");
	close(fd);
	return ktap_end();
}
