package designbridge

// design_bridge's metrics in Caddy's registry.

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// bridgeMetrics are design_bridge's collectors in Caddy's metrics registry
// (the admin endpoint's /metrics). The registry belongs to the loaded
// config, so a reload starts them afresh; the bridges of one config share
// them.
type bridgeMetrics struct {
	exports   *prometheus.CounterVec   // by path and upstream status
	cache     *prometheus.CounterVec   // by result: hit, miss, bypass, coalesced
	held      prometheus.Gauge         // bytes the caches hold
	upstreams *prometheus.HistogramVec // upstream time by path
}

func newBridgeMetrics(reg prometheus.Registerer) (*bridgeMetrics, error) {
	const ns, sub = "caddy", "design_bridge"
	m := &bridgeMetrics{
		exports: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "exports_total",
			Help: "Exports answered by the content service, by export path and upstream status.",
		}, []string{"path", "status"}),
		cache: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "cache_requests_total",
			Help: "Exports by what the cache and coalescing did: hit, miss, bypass, or coalesced (waited for an identical export in flight).",
		}, []string{"result"}),
		held: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: sub, Name: "cache_bytes",
			Help: "Bytes held by the export caches.",
		}),
		upstreams: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: ns, Subsystem: sub, Name: "upstream_duration_seconds",
			Help:    "Time the content service took to answer an export, by export path.",
			Buckets: prometheus.DefBuckets,
		}, []string{"path"}),
	}
	var err error
	if m.exports, err = registerOnce(reg, m.exports); err != nil {
		return nil, err
	}
	if m.cache, err = registerOnce(reg, m.cache); err != nil {
		return nil, err
	}
	if m.held, err = registerOnce(reg, m.held); err != nil {
		return nil, err
	}
	if m.upstreams, err = registerOnce(reg, m.upstreams); err != nil {
		return nil, err
	}
	return m, nil
}

// registerOnce registers c, or returns the collector of the same name
// another bridge of this config registered first.
func registerOnce[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	var dup prometheus.AlreadyRegisteredError
	if errors.As(err, &dup) {
		if existing, ok := dup.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}
