// SPDX-License-Identifier: LGPL-2.1-or-later

package kwqprom_test

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"kwq.dev/kwq"
	"kwq.dev/kwq/kwqprom"
)

// fake is a Source with the statistics a test sets.
type fake struct {
	name  string
	stats kwq.Stats
	err   error
}

func (f *fake) Name() string              { return f.name }
func (f *fake) Stats() (kwq.Stats, error) { return f.stats, f.err }

func scrape(t *testing.T, c prometheus.Collector) string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}).
		ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// The series a client-go controller's dashboards read, with its names,
// label and values, for two queues in one exposition.
func TestSeries(t *testing.T) {
	a := &fake{name: "pods", stats: kwq.Stats{Depth: 7, AddsTotal: 42, RetriesTotal: 3,
		Len: 5, UnfinishedWork: 1500 * time.Millisecond, LongestRunning: 250 * time.Millisecond,
		Priorities:    []kwq.PriorityLen{{Priority: 10, Len: 2}, {Priority: 0, Len: 3}},
		WorkDuration:  kwq.Histogram{Le: [10]uint64{0, 0, 0, 0, 1, 2, 3, 3, 3, 3}, Count: 4, Sum: 2 * time.Second},
		QueueDuration: kwq.Histogram{Count: 0}}}
	b := &fake{name: "nodes", stats: kwq.Stats{AddsTotal: 1, ShuttingDown: true}}
	out := scrape(t, kwqprom.NewCollector(a, b))
	for _, want := range []string{
		`# TYPE workqueue_adds_total counter`,
		`workqueue_adds_total{name="pods"} 42`,
		`workqueue_adds_total{name="nodes"} 1`,
		`workqueue_depth{name="pods"} 7`,
		`workqueue_retries_total{name="pods"} 3`,
		`workqueue_unfinished_work_seconds{name="pods"} 1.5`,
		`workqueue_longest_running_processor_seconds{name="pods"} 0.25`,
		`workqueue_work_duration_seconds_bucket{name="pods",le="0.0001"} 1`,
		`workqueue_work_duration_seconds_bucket{name="pods",le="0.001"} 2`,
		`workqueue_work_duration_seconds_bucket{name="pods",le="+Inf"} 4`,
		`workqueue_work_duration_seconds_sum{name="pods"} 2`,
		`workqueue_queue_duration_seconds_count{name="pods"} 0`,
		`kwq_priority_ready{name="pods",priority="10"} 2`,
		`kwq_shutting_down{name="nodes"} 1`,
		`kwq_scrape_errors_total{name="pods"} 0`,
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("missing %q", want)
		}
	}
	if strings.Contains(out, `priority="other"`) {
		t.Errorf("an empty other level is not a series (as the kernel's text)")
	}
	if t.Failed() {
		t.Log(out)
	}
}

// A queue whose statistics cannot be read (destroyed, closed) drops its
// series and counts the failure; the other queues are scraped.
func TestScrapeError(t *testing.T) {
	a := &fake{name: "gone", err: errors.New("EIDRM")}
	b := &fake{name: "ok", stats: kwq.Stats{AddsTotal: 5}}
	c := kwqprom.NewCollector(a, b)
	scrape(t, c)
	out := scrape(t, c)
	for _, want := range []string{`kwq_scrape_errors_total{name="gone"} 2`, `workqueue_adds_total{name="ok"} 5`} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, `workqueue_adds_total{name="gone"}`) {
		t.Errorf("a failed queue's series are sent")
	}
}
