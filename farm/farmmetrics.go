package farm

import (
	"context"
	"net/http"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// StatusHandler serves the farm's queue and every worker's last health
// report as Prometheus metrics, read from js at each scrape (what `farm
// serve --metrics-addr` shows): one place to watch a whole farm, and the
// queue's depth to scale the workers by. A scrape whose reading fails
// answers with the error.
func StatusHandler(js jetstream.JetStream) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(newStatusCollector(js), prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
}

// statusCollector reads the farm's status at each scrape.
type statusCollector struct {
	js                                     jetstream.JetStream
	jobs, redelivered, outcomes            *prometheus.Desc
	runJobs, runOutcomes, runLate          *prometheus.Desc
	workers, sims                          *prometheus.Desc
	wDialogues, wSims, wBusy, wCores, wRSS *prometheus.Desc
	wAge, limitWait, limitTaken            *prometheus.Desc
	slotsInFlight, slotsMax                *prometheus.Desc
}

func newStatusCollector(js jetstream.JetStream) *statusCollector {
	worker := []string{"worker", "host", "key"}
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &statusCollector{js: js,
		jobs:        d("dialogfarm_farm_jobs", "Jobs on the farm: waiting (for a worker) or in_flight (delivered to one, not settled).", "state"),
		redelivered: d("dialogfarm_farm_jobs_redelivered", "Jobs in flight that were delivered before."),
		outcomes:    d("dialogfarm_farm_outcomes_waiting", "Configs whose outcome (result or dead letter) the farm holds: a run's stay until it has collected them all and forgets them.", "kind"),
		runJobs:     d("dialogfarm_farm_run_jobs", "A run's jobs on the farm, waiting or in flight.", "run"),
		runOutcomes: d("dialogfarm_farm_run_outcomes_waiting", "A run's configs whose outcome (result or dead letter) the farm holds for its collector.", "run", "kind"),
		runLate: d("dialogfarm_farm_run_outcomes_late",
			"A run's configs whose outcome came after its collector was gone (the run was collected or forgotten): kept 30 days, unless the run starts again or farm forget takes them off.", "run", "kind"),
		workers: d("dialogfarm_farm_workers", "Workers by their last health report: healthy (within 15 s), paused (reporting, but pulling no job for a while after too many failures in a row) or silent.", "state"),
		sims:    d("dialogfarm_farm_simulators", "Simulators of the workers that report: busy, or idle (of the healthy ones).", "state"),
		wDialogues: d("dialogfarm_farm_worker_dialogues_total", "A worker's dialogues since it started, by outcome: ok, failed, retried, refused (its recipe differs from the run's).",
			append(worker, "status")...),
		wSims:  d("dialogfarm_farm_worker_simulators", "A worker's simulator slots.", worker...),
		wBusy:  d("dialogfarm_farm_worker_simulators_busy", "A worker's simulators driving a dialogue.", worker...),
		wCores: d("dialogfarm_farm_worker_editor_cores", "CPU a worker's editor (code-server and Chromium) used between its last two reports, in cores.", worker...),
		wRSS:   d("dialogfarm_farm_worker_editor_resident_bytes", "Resident memory of a worker's editor.", worker...),
		wAge:   d("dialogfarm_farm_worker_report_age_seconds", "Time since a worker's last health report (it reports every 5 s).", worker...),
		limitWait: d("dialogfarm_farm_rate_limit_wait_seconds",
			"How long a call to a model that came now would wait for the farm's shared rate limit (limit: a hash of its base URL, model and key variable; unit: calls for rpm, tokens for tpm): above 0, the limit, not the workers, sets the pace.", "limit", "model", "unit"),
		limitTaken: d("dialogfarm_farm_rate_limit_taken",
			"Units (calls or tokens) of a shared rate limit booked and not yet refilled: beyond its burst, calls wait.", "limit", "model", "unit"),
		slotsInFlight: d("dialogfarm_farm_model_calls_in_flight",
			"Calls in flight to a model with a farm_max_concurrency, from every process of the farm (limit: as for the rate limits).", "limit", "model"),
		slotsMax: d("dialogfarm_farm_model_calls_in_flight_max",
			"A model's farm_max_concurrency: at most this many calls in flight across the farm; calls beyond it wait.", "limit", "model"),
	}
}

func (c *statusCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.jobs, c.redelivered, c.outcomes, c.runJobs, c.runOutcomes, c.runLate, c.workers, c.sims, c.wDialogues, c.wSims, c.wBusy, c.wCores, c.wRSS, c.wAge, c.limitWait, c.limitTaken, c.slotsInFlight, c.slotsMax} {
		ch <- d
	}
}

func (c *statusCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := ReadStatus(ctx, c.js, "")
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.jobs, err)
		return
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	// The jobs stream holds a job until it is settled: Queued counts the
	// ones in flight too.
	gauge(c.jobs, float64(st.Queued-min(uint64(st.InFlight), st.Queued)), "waiting")
	gauge(c.jobs, float64(st.InFlight), "in_flight")
	gauge(c.redelivered, float64(st.Redeliver))
	gauge(c.outcomes, float64(st.Results), "results")
	gauge(c.outcomes, float64(st.Dead), "dead")
	for _, l := range st.Limits {
		gauge(c.limitWait, l.Wait.Seconds(), l.Limit, l.Model, l.Unit)
		gauge(c.limitTaken, float64(l.Taken), l.Limit, l.Model, l.Unit)
	}
	for _, sl := range st.Slots {
		gauge(c.slotsInFlight, float64(sl.InFlight), sl.Limit, sl.Model)
		gauge(c.slotsMax, float64(sl.Max), sl.Limit, sl.Model)
	}
	for _, r := range st.Runs {
		gauge(c.runJobs, float64(r.Jobs), r.Run)
		outcomes := c.runOutcomes
		if r.Late {
			outcomes = c.runLate
		}
		gauge(outcomes, float64(r.Results), r.Run, "results")
		gauge(outcomes, float64(r.Dead), r.Run, "dead")
	}
	now := time.Now()
	var healthy, paused, silent, busy, idle int
	for _, h := range st.Workers {
		age := now.Sub(h.Updated)
		switch {
		case age > 3*healthEvery:
			silent++
		case h.Paused(now):
			paused++
			busy += h.Busy
		default:
			healthy++
			busy += h.Busy
			idle += max(h.Slots-h.Busy, 0)
		}
		l := []string{h.Worker, h.Host, h.User}
		for status, n := range map[string]int{"ok": h.Done, "failed": h.Failed, "retried": h.Retried, "refused": h.Refused} {
			ch <- prometheus.MustNewConstMetric(c.wDialogues, prometheus.CounterValue, float64(n), append(l, status)...)
		}
		gauge(c.wSims, float64(h.Slots), l...)
		gauge(c.wBusy, float64(h.Busy), l...)
		gauge(c.wCores, h.EditorCores, l...)
		gauge(c.wRSS, float64(h.EditorRSS), l...)
		gauge(c.wAge, age.Seconds(), l...)
	}
	gauge(c.workers, float64(healthy), "healthy")
	gauge(c.workers, float64(paused), "paused")
	gauge(c.workers, float64(silent), "silent")
	gauge(c.sims, float64(busy), "busy")
	gauge(c.sims, float64(idle), "idle")
}
