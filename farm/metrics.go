package farm

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"dialogfarm/dialog"
)

// Metrics are the farm's Prometheus metrics, on a registry of their own.
// A nil *Metrics records nothing.
type Metrics struct {
	reg       *prometheus.Registry
	dialogues *prometheus.CounterVec
	retries   prometheus.Counter
	dead      prometheus.Counter
	refused   prometheus.Counter
	busySims  prometheus.Gauge
	dialogue  prometheus.Histogram
	turn      prometheus.Histogram
	model     prometheus.Histogram
	ui        prometheus.Histogram
	editors   *editorCollector
}

// NewMetrics registers the metrics, labelled with the worker's id.
func NewMetrics(worker string) *Metrics {
	reg := prometheus.NewRegistry()
	labels := prometheus.Labels{"worker": worker}
	buckets := []float64{0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 40, 80, 160}
	m := &Metrics{
		reg: reg,
		dialogues: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dialogfarm_dialogues_total",
			Help: "Dialogues driven to an outcome, by status (ok, failed).", ConstLabels: labels}, []string{"status"}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{Name: "dialogfarm_dialogues_retried_total",
			Help: "Failed dialogues handed back to be driven again.", ConstLabels: labels}),
		dead: prometheus.NewCounter(prometheus.CounterOpts{Name: "dialogfarm_dialogues_dead_total",
			Help: "Configs dead-lettered after their last delivery.", ConstLabels: labels}),
		refused: prometheus.NewCounter(prometheus.CounterOpts{Name: "dialogfarm_results_refused_total",
			Help: "Results and attempts the collector refused: not from a worker their job was delivered to.", ConstLabels: labels}),
		busySims: prometheus.NewGauge(prometheus.GaugeOpts{Name: "dialogfarm_simulators_busy",
			Help: "Simulators driving a dialogue now.", ConstLabels: labels}),
		dialogue: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "dialogfarm_dialogue_seconds",
			Help: "Wall time of a whole dialogue.", ConstLabels: labels, Buckets: buckets}),
		turn: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "dialogfarm_turn_seconds",
			Help: "Wall time of one turn: query typed to answer shown.", ConstLabels: labels, Buckets: buckets}),
		model: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "dialogfarm_model_seconds",
			Help: "Time the capture endpoint spent getting a turn's answer.", ConstLabels: labels, Buckets: buckets}),
		ui: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "dialogfarm_ui_overhead_seconds",
			Help: "Dialogue wall time not spent waiting for the model.", ConstLabels: labels, Buckets: buckets}),
		editors: newEditorCollector(labels),
	}
	reg.MustRegister(m.dialogues, m.retries, m.dead, m.refused, m.busySims, m.dialogue, m.turn, m.model, m.ui, m.editors,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return m
}

// WatchEditors adds the CPU time and resident memory of the editor
// processes pids names, driven by n simulators, to the metrics; a later
// call replaces an earlier one (a worker that started its editor again).
func (m *Metrics) WatchEditors(pids EditorPIDs, n int) {
	if m != nil {
		m.editors.watch(pids, n)
	}
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

func (m *Metrics) observe(d dialog.Dialogue) {
	if m == nil {
		return
	}
	m.dialogues.WithLabelValues(d.Status).Inc()
	m.dialogue.Observe(d.Seconds)
	model := 0.0
	for _, t := range d.Turns {
		var turn float64
		for _, s := range t.Steps {
			turn += s.Seconds
		}
		m.turn.Observe(turn)
		m.model.Observe(t.Seconds)
		model += t.Seconds
	}
	m.ui.Observe(max(d.Seconds-model, 0))
}

func (m *Metrics) retried() {
	if m != nil {
		m.retries.Inc()
	}
}

// Dead counts a dead-lettered config.
func (m *Metrics) Dead() {
	if m != nil {
		m.dead.Inc()
	}
}

// Refused counts a result or attempt the collector refused.
func (m *Metrics) Refused() {
	if m != nil {
		m.refused.Inc()
	}
}

func (m *Metrics) busy(n int) {
	if m != nil {
		m.busySims.Add(float64(n))
	}
}
