// SPDX-License-Identifier: LGPL-2.1-or-later

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sys/unix"
	"kwq.dev/kwq"
	"kwq.dev/kwq/kwqprom"
)

// loopbackUp brings lo up: the test VM's init does not, and the example
// serves its metrics on 127.0.0.1.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// testPrometheus: the example controller serves its queue's workqueue_*
// series on its own /metrics (package kwqprom), with the kernel's values.
// The debug kernels have no networking (tinyconfig): there the example
// runs without -metrics and the same registry is scraped in this process
// (the stock kernels' VMs scrape the example's endpoint over TCP).
func testPrometheus() error {
	name := freshName()
	kwq.Destroy(name)
	defer kwq.Destroy(name)
	args := []string{"-queue", name, "-keys", "30", "-workers", "2"}
	err := loopbackUp()
	network := err == nil
	switch {
	case network:
		args = append(args, "-metrics", "127.0.0.1:0")
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EAFNOSUPPORT):
		fmt.Printf("    # no networking in this kernel (%v): the registry is scraped in this process\n", err)
	default:
		return errorf("lo up: %v", err)
	}
	cmd := exec.Command("/usr/bin/go-example", args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	sc := bufio.NewScanner(out)
	url, ready := "", false
	for !ready && sc.Scan() {
		l := sc.Text()
		fmt.Printf("    # go-example: %s\n", l)
		if u, ok := strings.CutPrefix(l, "example: metrics on "); ok {
			url = u
		}
		ready = strings.HasPrefix(l, "example: reconciled") || !network && strings.HasPrefix(l, "example: 30 keys")
	}
	if !ready || network && url == "" {
		return errorf("go-example did not reconcile and serve its metrics (url %q)", url)
	}
	q, err := kwq.Open(name, nil)
	if err != nil {
		return err
	}
	defer q.Close()
	var body []byte
	if network {
		c := &http.Client{Timeout: 20 * time.Second}
		resp, err := c.Get(url)
		if err != nil {
			return err
		}
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			return errorf("GET %s: %d %v", url, resp.StatusCode, err)
		}
	} else {
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(kwqprom.NewCollector(q))
		rec := httptest.NewRecorder()
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}).
			ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		if rec.Code != 200 {
			return errorf("scrape: %d %s", rec.Code, rec.Body)
		}
		body = rec.Body.Bytes()
	}
	s, err := q.Stats()
	if err != nil {
		return err
	}
	text := string(body)
	for _, want := range []string{
		"# TYPE workqueue_adds_total counter",
		fmt.Sprintf(`workqueue_adds_total{name="%s"} %d`, name, s.AddsTotal),
		fmt.Sprintf(`workqueue_retries_total{name="%s"} %d`, name, s.RetriesTotal),
		fmt.Sprintf(`workqueue_depth{name="%s"} 0`, name),
		fmt.Sprintf(`workqueue_work_duration_seconds_count{name="%s"} %d`, name, s.WorkDuration.Count),
		fmt.Sprintf(`workqueue_queue_duration_seconds_bucket{name="%s",le="+Inf"} %d`, name, s.QueueDuration.Count),
		fmt.Sprintf(`kwq_scrape_errors_total{name="%s"} 0`, name),
	} {
		if !strings.Contains(text, want+"\n") {
			return errorf("/metrics lacks %q", want)
		}
	}
	if s.AddsTotal < 30 || s.RetriesTotal == 0 || s.WorkDuration.Count < 30 {
		return errorf("the example's queue: %+v", s)
	}
	fmt.Printf("    # /metrics: %d bytes, workqueue_adds_total %d, retries %d\n", len(body), s.AddsTotal, s.RetriesTotal)
	if network {
		cmd.Process.Signal(syscall.SIGTERM)
	}
	if err := cmd.Wait(); err != nil {
		return errorf("go-example: %v", err)
	}
	return nil
}
