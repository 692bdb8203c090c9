// Package selfmetrics is how our components register their own counters
// (and the odd gauge),
// in the collector's naming scheme: otelcol_<kind>_<type>_<name> (say
// otelcol_receiver_stdout_lines), beside the collector's
// otelcol_receiver_accepted_log_records and the like, with each
// measurement carrying the component's ID under its kind
// (receiver="stdout"), as the collector's own do. The collector exports
// the names to Prometheus as they are. README.md ("Self-metrics") lists
// every metric.
//
// It stands in for mdatagen's generated telemetry builder, which does not
// resolve at our collector version.
package selfmetrics

import (
	"errors"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Builder registers one component instance's counters and gauges.
type Builder struct {
	meter  metric.Meter
	prefix string
	id     attribute.KeyValue
	err    error
}

// New returns the builder of the component id of the given kind; scope is
// the component's metadata.ScopeName.
func New(set component.TelemetrySettings, scope string, kind component.Kind, id component.ID) *Builder {
	k := strings.ToLower(kind.String())
	return &Builder{
		meter:  set.MeterProvider.Meter(scope),
		prefix: "otelcol_" + k + "_" + id.Type().String() + "_",
		id:     attribute.String(k, id.String()),
	}
}

// Counter registers the monotonic counter otelcol_<kind>_<type>_<name>.
func (b *Builder) Counter(name, unit, description string) metric.Int64Counter {
	c, err := b.meter.Int64Counter(b.prefix+name, metric.WithUnit(unit), metric.WithDescription(description))
	b.err = errors.Join(b.err, err)
	return c
}

// Gauge registers the gauge otelcol_<kind>_<type>_<name>: a state, set
// rather than added up (say 1 while degraded, 0 otherwise).
func (b *Builder) Gauge(name, unit, description string) metric.Int64Gauge {
	g, err := b.meter.Int64Gauge(b.prefix+name, metric.WithUnit(unit), metric.WithDescription(description))
	b.err = errors.Join(b.err, err)
	return g
}

// Attributes is the attribute set of a measurement: the component ID and
// attrs. Build it once per combination where counting is frequent.
func (b *Builder) Attributes(attrs ...attribute.KeyValue) metric.MeasurementOption {
	return metric.WithAttributeSet(attribute.NewSet(append([]attribute.KeyValue{b.id}, attrs...)...))
}

// Err reports every registration that failed.
func (b *Builder) Err() error { return b.err }
