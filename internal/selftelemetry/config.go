package selftelemetry

import (
	"errors"
	"time"

	"go.opentelemetry.io/collector/config/configtelemetry"
	otelconf "go.opentelemetry.io/contrib/otelconf/v0.3.0"
	"go.uber.org/zap/zapcore"
)

// Config is service::telemetry. Its keys are the collector's
// (otelconftelemetry's), less the ones README.md says are refused.
type Config struct {
	Logs     LogsConfig     `mapstructure:"logs"`
	Metrics  MetricsConfig  `mapstructure:"metrics"`
	Traces   TracesConfig   `mapstructure:"traces"`
	Resource ResourceConfig `mapstructure:"resource"`
}

// LogsConfig is the log's zap settings.
type LogsConfig struct {
	Level             zapcore.Level   `mapstructure:"level"`
	Development       bool            `mapstructure:"development"`
	Encoding          string          `mapstructure:"encoding"` // console or json
	DisableCaller     bool            `mapstructure:"disable_caller"`
	DisableStacktrace bool            `mapstructure:"disable_stacktrace"`
	Sampling          *SamplingConfig `mapstructure:"sampling"`
	OutputPaths       []string        `mapstructure:"output_paths"`
	ErrorOutputPaths  []string        `mapstructure:"error_output_paths"`
	InitialFields     map[string]any  `mapstructure:"initial_fields"`
	// DisableZapResource leaves out the "resource" field every line carries.
	DisableZapResource bool `mapstructure:"disable_zap_resource"`
}

// SamplingConfig caps repeated log lines: per Tick, the first Initial
// lines with the same level and message, then every Thereafter-th.
type SamplingConfig struct {
	Enabled    bool          `mapstructure:"enabled"`
	Tick       time.Duration `mapstructure:"tick"`
	Initial    int           `mapstructure:"initial"`
	Thereafter int           `mapstructure:"thereafter"`
}

// MetricsConfig is the meter provider in OpenTelemetry's declarative
// configuration (readers, views) and the collector's metrics level.
type MetricsConfig struct {
	Level                  configtelemetry.Level `mapstructure:"level"`
	otelconf.MeterProvider `mapstructure:",squash"`
}

// TracesConfig is the tracer provider in OpenTelemetry's declarative
// configuration; without processors the sidecar makes no spans of its own.
type TracesConfig struct {
	Level                   configtelemetry.Level `mapstructure:"level"`
	Propagators             []string              `mapstructure:"propagators"`
	otelconf.TracerProvider `mapstructure:",squash"`
}

// ResourceConfig adds attributes to (or, with a null value, removes them
// from) the resource: service.name, service.version and
// service.instance.id by default.
type ResourceConfig struct {
	Attributes []otelconf.AttributeNameValue `mapstructure:"attributes"`
}

// Validate refuses a metrics level without a reader to serve it, as the
// collector does.
func (c *Config) Validate() error {
	if c.Metrics.Level != configtelemetry.LevelNone && len(c.Metrics.Readers) == 0 {
		return errors.New("service::telemetry::metrics: a level other than none needs a reader")
	}
	if c.Metrics.Views != nil && c.Metrics.Level != configtelemetry.LevelDetailed {
		return errors.New("service::telemetry::metrics::views can only be set when service::telemetry::metrics::level is detailed")
	}
	for _, p := range c.Traces.Propagators {
		if _, ok := propagators[p]; !ok {
			return errors.New("service::telemetry::traces::propagators: " + p + " is not one of tracecontext, b3")
		}
	}
	return nil
}

func createDefaultConfig() *Config {
	return &Config{
		Logs: LogsConfig{
			Level:    zapcore.InfoLevel,
			Encoding: "console",
			Sampling: &SamplingConfig{
				Enabled:    true,
				Tick:       10 * time.Second,
				Initial:    10,
				Thereafter: 100,
			},
			OutputPaths:      []string{"stderr"},
			ErrorOutputPaths: []string{"stderr"},
		},
		Metrics: MetricsConfig{
			Level: configtelemetry.LevelNormal,
			MeterProvider: otelconf.MeterProvider{Readers: []otelconf.MetricReader{{
				Pull: &otelconf.PullMetricReader{Exporter: otelconf.PullMetricExporter{
					Prometheus: &otelconf.Prometheus{Host: new("localhost"), Port: new(8888)},
				}},
			}}},
		},
	}
}
