package main

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/processor/memorylimiterprocessor"

	"github.com/sidecarhq/sidecar/exporters/axiomexporter"
	"github.com/sidecarhq/sidecar/receivers/otlpreceiver"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver"
	"github.com/sidecarhq/sidecar/sampling"
)

// TestSidecarConfigsValidate decodes every component section of the
// sidecar's benchmark configs with the real factories and validates it, so
// a renamed or removed option fails here rather than in a benchmark run.
func TestSidecarConfigsValidate(t *testing.T) {
	defaults := map[string]func() component.Config{
		"receivers::stdout":          stdoutreceiver.NewFactory().CreateDefaultConfig,
		"receivers::otlp":            otlpreceiver.NewFactory().CreateDefaultConfig,
		"processors::memory_limiter": memorylimiterprocessor.NewFactory().CreateDefaultConfig,
		"processors::sampling":       sampling.NewFactory().CreateDefaultConfig,
		"exporters::axiom":           axiomexporter.NewFactory().CreateDefaultConfig,
	}
	env := &runEnv{sinkURL: "http://127.0.0.1:1", logFile: "/tmp/app.log", grpcPort: 2, httpPort: 3, forwardPort: 4}
	for _, sc := range scenarios(options{logRate: 1, spanRate: 1, mixedRPS: 1}) {
		t.Run(sc.name, func(t *testing.T) {
			text := sidecarConfig(env, sc.sidecar)
			conf, err := confmap.NewRetrievedFromYAML([]byte(text))
			if err != nil {
				t.Fatal(err)
			}
			all, err := conf.AsConf()
			if err != nil {
				t.Fatalf("%v\n%s", err, text)
			}
			seen := 0
			for key, def := range defaults {
				if !all.IsSet(key) {
					continue
				}
				seen++
				sub, err := all.Sub(key)
				if err != nil {
					t.Fatal(err)
				}
				cfg := def()
				if err := sub.Unmarshal(cfg); err != nil {
					t.Fatalf("%s: %v\n%s", key, err, text)
				}
				if err := confmap.Validate(cfg); err != nil {
					t.Fatalf("%s: %v\n%s", key, err, text)
				}
			}
			if want := 2 + strings.Count(text, "  stdout:") + strings.Count(text, "  otlp:") + strings.Count(text, "  sampling:"); seen != want {
				t.Fatalf("validated %d sections, want %d:\n%s", seen, want, text)
			}
		})
	}
}

func TestSustainedUsesTheSteadyWindow(t *testing.T) {
	// 1,000 events/s at the sink, after a slow first two seconds.
	series := []point{{T: 0, SinkLogs: 0}, {T: 1, SinkLogs: 10}, {T: 2, SinkLogs: 100}, {T: 4, SinkLogs: 2100}, {T: 6, SinkLogs: 4100}, {T: 8, SinkLogs: 4100}}
	if got := sustained(series, inputs{logs: inputStdin}, 6); got != 1000 {
		t.Fatalf("logs: %v events/s, want 1000", got)
	}
	// Spans count what the collector accepted.
	spans := []point{{T: 2, Sent: 0}, {T: 4, Sent: 5000}}
	if got := sustained(spans, inputs{spans: true}, 5); got != 2500 {
		t.Fatalf("spans: %v events/s, want 2500", got)
	}
	if got := sustained(series[:2], inputs{logs: inputStdin}, 6); got != 0 {
		t.Fatalf("too short a series: %v, want 0", got)
	}
}
