// Package selftelemetry is the sidecar's own telemetry (service::telemetry):
// its log through zap, its metrics through the OpenTelemetry SDK (the
// Prometheus endpoint README.md's "Self-metrics" describes), and its spans
// if a config asks for them.
//
// It replaces the collector's otelconftelemetry, whose config it reads the
// same way, so that the binary does not link that package's cloud resource
// detectors (service::telemetry::resource::detection/development): they
// brought the AWS SDK and the GCP, Azure and Kubernetes clients, 205 of the
// binary's 1,011 packages and 7.4 of its 40.6 MB, and heap their
// package initialisation built that every garbage collection cycle marked
// (bench/COMPARISON.md, "The collector's telemetry"). A config with that
// key, or with logs::processors (the log exported over OTLP), is refused
// by name when it loads.
package selftelemetry

import (
	"context"
	"maps"
	"slices"

	"github.com/google/uuid"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configtelemetry"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/service/telemetry"
	otelconf "go.opentelemetry.io/contrib/otelconf/v0.3.0"
	"go.opentelemetry.io/contrib/propagators/b3"
	"go.opentelemetry.io/otel"
	noopmetric "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	nooptrace "go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// NewFactory returns the factory for otelcol.Factories.Telemetry.
func NewFactory() telemetry.Factory {
	return telemetry.NewFactory(
		func() component.Config { return createDefaultConfig() },
		telemetry.WithCreateResource(createResource),
		telemetry.WithCreateLogger(createLogger),
		telemetry.WithCreateMeterProvider(createMeterProvider),
		telemetry.WithCreateTracerProvider(createTracerProvider),
	)
}

// createResource describes this process: service.name (the command),
// service.version and a random service.instance.id, with the config's
// attributes over them. Keys are in order, as the log prints them.
func createResource(_ context.Context, set telemetry.Settings, c component.Config) (pcommon.Resource, string, error) {
	values := map[string]any{
		"service.name":        set.BuildInfo.Command,
		"service.version":     set.BuildInfo.Version,
		"service.instance.id": uuid.NewString(),
	}
	for _, a := range c.(*Config).Resource.Attributes {
		if a.Value == nil {
			delete(values, a.Name)
			continue
		}
		values[a.Name] = a.Value
	}
	res := pcommon.NewResource()
	for _, k := range slices.Sorted(maps.Keys(values)) {
		if err := res.Attributes().PutEmpty(k).FromRaw(values[k]); err != nil {
			return pcommon.Resource{}, "", err
		}
	}
	return res, "", nil
}

func createLogger(_ context.Context, set telemetry.LoggerSettings, c component.Config) (*zap.Logger, component.ShutdownFunc, error) {
	cfg := c.(*Config).Logs
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	build := set.BuildZapLogger
	if build == nil {
		build = zap.Config.Build
	}
	logger, err := build(zap.Config{
		Level:             zap.NewAtomicLevelAt(cfg.Level),
		Development:       cfg.Development,
		Encoding:          cfg.Encoding,
		EncoderConfig:     enc,
		OutputPaths:       cfg.OutputPaths,
		ErrorOutputPaths:  cfg.ErrorOutputPaths,
		DisableCaller:     cfg.DisableCaller,
		DisableStacktrace: cfg.DisableStacktrace,
		InitialFields:     cfg.InitialFields,
	})
	if err != nil {
		return nil, nil, err
	}
	// The SDK's own errors (a metric reader that fails) go to this log
	// rather than straight to stderr.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		logger.Error("OpenTelemetry internal telemetry error", zap.Error(err))
	}))
	if res := set.Resource; !cfg.DisableZapResource && res != nil && res.Attributes().Len() > 0 {
		var fields []zap.Field
		for k, v := range res.Attributes().All() {
			fields = append(fields, zap.String(k, v.AsString()))
		}
		resource := zap.Dict("resource", fields...)
		logger = logger.WithOptions(zap.WrapCore(func(core zapcore.Core) zapcore.Core {
			return core.With([]zap.Field{resource})
		}))
	}
	if s := cfg.Sampling; s != nil && s.Enabled {
		logger = logger.WithOptions(zap.WrapCore(func(core zapcore.Core) zapcore.Core {
			return zapcore.NewSamplerWithOptions(core, s.Tick, s.Initial, s.Thereafter)
		}))
	}
	return logger, nil, nil
}

func createMeterProvider(ctx context.Context, set telemetry.MeterSettings, c component.Config) (telemetry.MeterProvider, error) {
	cfg := c.(*Config).Metrics
	if cfg.Level == configtelemetry.LevelNone {
		return noopMeterProvider{MeterProvider: noopmetric.NewMeterProvider()}, nil
	}
	mp := otelconf.MeterProvider{Views: cfg.Views}
	if mp.Views == nil && set.DefaultViews != nil {
		mp.Views = set.DefaultViews(cfg.Level)
	}
	for _, r := range cfg.Readers {
		mp.Readers = append(mp.Readers, withPrometheusDefaults(r))
	}
	sdk, err := otelconf.NewSDK(otelconf.WithContext(ctx), otelconf.WithOpenTelemetryConfiguration(otelconf.OpenTelemetryConfiguration{
		Resource:      sdkResource(set.Resource),
		MeterProvider: &mp,
	}))
	if err != nil {
		return nil, err
	}
	return sdk.MeterProvider().(telemetry.MeterProvider), nil
}

// withPrometheusDefaults names the metrics exactly as registered (no unit
// or _total suffix, no otel_scope_* labels) unless the reader's config
// says otherwise: README.md's table lists them so.
func withPrometheusDefaults(r otelconf.MetricReader) otelconf.MetricReader {
	if r.Pull == nil || r.Pull.Exporter.Prometheus == nil {
		return r
	}
	pull := *r.Pull
	p := *pull.Exporter.Prometheus
	for _, b := range []**bool{&p.WithoutScopeInfo, &p.WithoutUnits, &p.WithoutTypeSuffix} {
		if *b == nil {
			*b = new(true)
		}
	}
	pull.Exporter.Prometheus = &p
	r.Pull = &pull
	return r
}

var propagators = map[string]propagation.TextMapPropagator{
	"tracecontext": propagation.TraceContext{},
	"b3":           b3.New(),
}

func createTracerProvider(ctx context.Context, set telemetry.TracerSettings, c component.Config) (telemetry.TracerProvider, error) {
	cfg := c.(*Config).Traces
	if cfg.Level == configtelemetry.LevelNone || len(cfg.Processors) == 0 {
		return noopTracerProvider{TracerProvider: nooptrace.NewTracerProvider()}, nil
	}
	var props []propagation.TextMapPropagator
	for _, p := range cfg.Propagators {
		props = append(props, propagators[p])
	}
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(props...))
	sdk, err := otelconf.NewSDK(otelconf.WithContext(ctx), otelconf.WithOpenTelemetryConfiguration(otelconf.OpenTelemetryConfiguration{
		Resource:       sdkResource(set.Resource),
		TracerProvider: &cfg.TracerProvider,
	}))
	if err != nil {
		return nil, err
	}
	return sdk.TracerProvider().(telemetry.TracerProvider), nil
}

// sdkResource is the resource in the SDK's configuration form.
func sdkResource(res *pcommon.Resource) *otelconf.Resource {
	r := &otelconf.Resource{}
	if res != nil {
		for k, v := range res.Attributes().All() {
			r.Attributes = append(r.Attributes, otelconf.AttributeNameValue{Name: k, Value: v.AsRaw()})
		}
	}
	return r
}

type noopMeterProvider struct {
	noopmetric.MeterProvider
	component.ShutdownFunc
}

type noopTracerProvider struct {
	nooptrace.TracerProvider
	component.ShutdownFunc
}
