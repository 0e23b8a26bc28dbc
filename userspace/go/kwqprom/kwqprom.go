// SPDX-License-Identifier: LGPL-2.1-or-later

// Package kwqprom puts kwq queues' metrics in a process's own Prometheus
// registry, under client-go's workqueue_* names and label (name="QUEUE"),
// so that a controller that switches from client-go's workqueue to kwq
// keeps the series its dashboards and alerts read on its /metrics:
//
//	reg.MustRegister(kwqprom.NewCollector(q))
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// The figures are the kernel's (kwq.Queue.Stats, one KWQ_IOC_STATS a
// queue a scrape): they count every process's adds and gets on the
// queue, not only this one's, and survive its restarts. The same
// metrics, with the same names, help and values, are in the module's
// debugfs file and in kwqctl stats --prometheus (Documentation/
// metrics.rst); kwq's own figures (kwq_*) come with them.
package kwqprom

import (
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"kwq.dev/kwq"
)

// Source is what a Collector reads: a *kwq.Queue.
type Source interface {
	Name() string
	Stats() (kwq.Stats, error)
}

type metric struct {
	desc *prometheus.Desc
	typ  prometheus.ValueType
	val  func(s *kwq.Stats) float64
}

func seconds(d interface{ Seconds() float64 }) float64 { return d.Seconds() }

func bool01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, append([]string{"name"}, labels...), nil)
}

// client-go's help texts (k8s.io/component-base's workqueue metrics),
// kept as the kernel's debugfs file prints them (include/kwq/metrics.h).
var (
	metrics = []metric{
		{desc("workqueue_depth", "Current depth of workqueue"), prometheus.GaugeValue,
			func(s *kwq.Stats) float64 { return float64(s.Depth) }},
		{desc("workqueue_adds_total", "Total number of adds handled by workqueue"), prometheus.CounterValue,
			func(s *kwq.Stats) float64 { return float64(s.AddsTotal) }},
		{desc("workqueue_unfinished_work_seconds", "How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases."), prometheus.GaugeValue,
			func(s *kwq.Stats) float64 { return seconds(s.UnfinishedWork) }},
		{desc("workqueue_longest_running_processor_seconds", "How many seconds has the longest running processor for workqueue been running."), prometheus.GaugeValue,
			func(s *kwq.Stats) float64 { return seconds(s.LongestRunning) }},
		{desc("workqueue_retries_total", "Total number of retries handled by workqueue"), prometheus.CounterValue,
			func(s *kwq.Stats) float64 { return float64(s.RetriesTotal) }},
		{desc("kwq_ready", "Keys ready to be handed out (client-go Len)"), prometheus.GaugeValue,
			func(s *kwq.Stats) float64 { return float64(s.Len) }},
		{desc("kwq_waiting_depth", "Keys waiting for a delay to pass"), prometheus.GaugeValue,
			func(s *kwq.Stats) float64 { return float64(s.Waiting) }},
		{desc("kwq_processing", "Keys handed out and not yet done"), prometheus.GaugeValue,
			func(s *kwq.Stats) float64 { return float64(s.Processing) }},
		{desc("kwq_dropped_at_shutdown_total", "Delayed keys dropped by shutdown"), prometheus.CounterValue,
			func(s *kwq.Stats) float64 { return float64(s.DroppedAtShutdown) }},
		{desc("kwq_lease_returns_total", "Processing keys put back because their holder went away"), prometheus.CounterValue,
			func(s *kwq.Stats) float64 { return float64(s.LeaseReturns) }},
		{desc("kwq_failure_records", "Keys with a non-zero rate limiter failure count"), prometheus.GaugeValue,
			func(s *kwq.Stats) float64 { return float64(s.FailureRecords) }},
		{desc("kwq_failure_records_evicted_total", "Idle failure records forgotten to honour the bound"), prometheus.CounterValue,
			func(s *kwq.Stats) float64 { return float64(s.FailureRecordsEvicted) }},
		{desc("kwq_processing_timeouts_total", "Processing keys taken back at their deadline and requeued as failures"), prometheus.CounterValue,
			func(s *kwq.Stats) float64 { return float64(s.ProcessingTimeouts) }},
		{desc("kwq_shutting_down", "1 once the queue was shut down"), prometheus.GaugeValue,
			func(s *kwq.Stats) float64 { return bool01(s.ShuttingDown) }},
		{desc("kwq_dead", "Keys in the dead set: failed max_retries times, not requeued"), prometheus.GaugeValue,
			func(s *kwq.Stats) float64 { return float64(s.Dead) }},
		{desc("kwq_dead_total", "Keys moved to the dead set"), prometheus.CounterValue,
			func(s *kwq.Stats) float64 { return float64(s.DeadTotal) }},
		{desc("kwq_dead_dropped_total", "Dead keys dropped to honour the dead set's bound"), prometheus.CounterValue,
			func(s *kwq.Stats) float64 { return float64(s.DeadDroppedTotal) }},
	}
	queueDuration = desc("workqueue_queue_duration_seconds", "How long in seconds an item stays in workqueue before being requested.")
	workDuration  = desc("workqueue_work_duration_seconds", "How long in seconds processing an item from workqueue takes.")
	prioReady     = desc("kwq_priority_ready", "Ready keys of the highest priority levels (their Len); other: the rest", "priority")
	scrapeErrors  = prometheus.NewDesc("kwq_scrape_errors_total", "Scrapes of a queue's statistics that failed (the queue destroyed, its fd closed)", []string{"name"}, nil)
)

// Collector is a prometheus.Collector of kwq queues.
type Collector struct {
	sources []Source
	errors  []atomic.Uint64 // per source: Stats that failed
}

// NewCollector collects the metrics of qs (each a *kwq.Queue) on every
// scrape.
func NewCollector(qs ...Source) *Collector {
	return &Collector{sources: qs, errors: make([]atomic.Uint64, len(qs))}
}

// Describe sends the descriptors of every metric the Collector makes.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range metrics {
		ch <- m.desc
	}
	ch <- queueDuration
	ch <- workDuration
	ch <- prioReady
	ch <- scrapeErrors
}

func histogram(d *prometheus.Desc, h *kwq.Histogram, name string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(h.Le))
	for i, n := range h.Le {
		buckets[kwq.HistogramBounds[i]] = n
	}
	return prometheus.MustNewConstHistogram(d, h.Count, h.Sum.Seconds(), buckets, name)
}

// Collect reads each queue's statistics once and sends its metrics; a
// queue whose statistics cannot be read sends none, and counts in
// kwq_scrape_errors_total.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for i, q := range c.sources {
		name := q.Name()
		s, err := q.Stats()
		if err != nil {
			c.errors[i].Add(1)
		}
		ch <- prometheus.MustNewConstMetric(scrapeErrors, prometheus.CounterValue,
			float64(c.errors[i].Load()), name)
		if err != nil {
			continue
		}
		for _, m := range metrics {
			ch <- prometheus.MustNewConstMetric(m.desc, m.typ, m.val(&s), name)
		}
		ch <- histogram(queueDuration, &s.QueueDuration, name)
		ch <- histogram(workDuration, &s.WorkDuration, name)
		for _, p := range s.Priorities {
			ch <- prometheus.MustNewConstMetric(prioReady, prometheus.GaugeValue, float64(p.Len),
				name, strconv.FormatInt(int64(p.Priority), 10))
		}
		if s.OtherPriorities > 0 {
			ch <- prometheus.MustNewConstMetric(prioReady, prometheus.GaugeValue,
				float64(s.OtherPriorities), name, "other")
		}
	}
}
