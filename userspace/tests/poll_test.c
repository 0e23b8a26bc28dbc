// SPDX-License-Identifier: GPL-2.0
/*
 * poll/epoll: readable when a key is ready, woken by an add from another
 * process and by a delay passing, EPOLLHUP once shut down and empty
 * (also waking a blocked poller), EPOLLERR|EPOLLHUP on a destroyed
 * queue.
 */
#include "kwqtest.h"

#include <poll.h>
#include <sys/epoll.h>

static short revents(int fd, int timeout_ms)
{
	struct pollfd p = { fd, POLLIN, 0 };
	int r = poll(&p, 1, timeout_ms);

	return r < 0 ? -1 : r == 0 ? 0 : p.revents;
}

int main(void)
{
	struct epoll_event ev;
	char name[KWQ_NAME_LEN], buf[256];
	int fd, ep, r;
	short re;
	int64_t t0;
	pid_t pid;

	kt_setup("kwq_poll", 13, 120);
	fd = kt_queue("poll", NULL, name);

	re = revents(fd, 0);
	ktap_check(re == 0, "empty_not_readable", "revents %#x", re);
	kt_add(fd, "a");
	re = revents(fd, 0);
	ktap_check(re == (POLLIN | POLLRDNORM) || re == POLLIN, "ready_is_pollin",
		   "revents %#x", re);
	kt_take(fd, 0, 0, 1, buf, sizeof(buf));
	re = revents(fd, 0);
	ktap_check(re == 0, "processing_only_not_readable", "revents %#x", re);
	kt_done(fd, "a");

	/* a blocked poll is woken by an add from another process */
	pid = fork();
	if (pid == 0) {
		int cfd = kt_attach(name);

		kt_sleep_ms(200);
		_exit(kt_add(cfd, "b") ? 1 : 0);
	}
	re = revents(fd, 20000);
	ktap_check((re & POLLIN) && kt_wait(pid) == 0, "poll_woken_by_add",
		   "revents %#x", re);
	kt_take(fd, 0, 0, 1, buf, sizeof(buf));
	kt_done(fd, "b");

	/* epoll: woken when a delay passes, not before */
	ep = epoll_create1(EPOLL_CLOEXEC);
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.u32 = 7;
	KT_OK(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), "epoll_ctl_add");
	r = epoll_wait(ep, &ev, 1, 0);
	ktap_check(r == 0, "epoll_empty_no_event", "r %d", r);
	t0 = kt_now();
	kwq_add_after(fd, "later", 5, 300 * KT_MS);
	memset(&ev, 0, sizeof(ev));
	r = epoll_wait(ep, &ev, 1, 20000);
	ktap_check(r == 1 && (ev.events & EPOLLIN) && ev.data.u32 == 7 &&
		   kt_now() - t0 >= 300 * KT_MS, "epoll_woken_when_delay_passes",
		   "r %d events %#x after %lld ms", r, ev.events,
		   (long long)((kt_now() - t0) / KT_MS));
	kt_take(fd, 0, 0, 1, buf, sizeof(buf));
	kt_done(fd, "later");

	/* shutdown with a key still ready: readable, then hang-up */
	kt_add(fd, "last");
	kwq_shutdown(fd, 0);
	re = revents(fd, 0);
	ktap_check((re & POLLIN) && !(re & POLLHUP), "shut_down_with_ready_key_pollin",
		   "revents %#x", re);
	kt_take(fd, 0, 0, 1, buf, sizeof(buf));
	re = revents(fd, 0);
	ktap_check(re & POLLHUP, "shut_down_and_empty_pollhup", "revents %#x", re);
	memset(&ev, 0, sizeof(ev));
	r = epoll_wait(ep, &ev, 1, 5000);
	ktap_check(r == 1 && (ev.events & EPOLLHUP), "epoll_hup", "r %d events %#x",
		   r, ev.events);
	kt_done(fd, "last");
	close(ep);
	close(fd);

	/* a blocked poller is woken by shutdown */
	fd = kt_queue("poll-hup", NULL, name);
	pid = fork();
	if (pid == 0) {
		int cfd = kt_attach(name);

		kt_sleep_ms(200);
		_exit(kwq_shutdown(cfd, 0) ? 1 : 0);
	}
	re = revents(fd, 20000);
	ktap_check((re & POLLHUP) && kt_wait(pid) == 0, "poll_woken_by_shutdown",
		   "revents %#x", re);

	/* a blocked get is woken by shutdown: ESHUTDOWN */
	close(fd);
	fd = kt_queue("get-hup", NULL, name);
	pid = fork();
	if (pid == 0) {
		int cfd = kt_attach(name);

		kt_sleep_ms(200);
		_exit(kwq_shutdown(cfd, 0) ? 1 : 0);
	}
	KT_ERR(kwq_get(fd, buf, sizeof(buf), 0, 20 * KT_SEC), ESHUTDOWN,
	       "blocked_get_woken_by_shutdown");
	kt_wait(pid);

	/* destroyed: error and hang-up */
	kwq_destroy(fd, name);
	re = revents(fd, 0);
	ktap_check((re & POLLERR) && (re & POLLHUP), "destroyed_pollerr_pollhup",
		   "revents %#x", re);
	close(fd);
	return ktap_end();
}
