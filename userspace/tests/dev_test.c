// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/kwq basics: the node exists, opens, is not seekable, rejects
 * ioctls it does not know, and closes cleanly.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ktap.h"

#define DEV "/dev/kwq"

int main(void)
{
	struct stat st;
	int fd, ret;

	ktap_suite("kwq_dev_user", 5);

	ret = stat(DEV, &st);
	ktap_check(ret == 0 && S_ISCHR(st.st_mode), "node_is_char_device",
		   "stat %s: ret %d errno %d mode %o", DEV, ret, errno,
		   ret ? 0 : st.st_mode);

	fd = open(DEV, O_RDWR | O_CLOEXEC);
	ktap_check(fd >= 0, "opens_read_write", "open: %s", strerror(errno));

	errno = 0;
	ret = lseek(fd, 0, SEEK_SET);
	ktap_check(ret == -1 && errno == ESPIPE, "is_not_seekable",
		   "lseek: ret %d errno %d", ret, errno);

	errno = 0;
	ret = ioctl(fd, _IO('k', 0xff), 0);
	ktap_check(ret == -1 && errno == ENOTTY, "unknown_ioctl_is_enotty",
		   "ioctl: ret %d errno %d", ret, errno);

	ret = close(fd);
	ktap_check(ret == 0, "closes", "close: %s", strerror(errno));

	return ktap_end();
}
