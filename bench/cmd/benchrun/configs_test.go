package main

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/processor/memorylimiterprocessor"

	"github.com/sidecarhq/sidecar/exporters/axiomexporter"
	"github.com/sidecarhq/sidecar/extensions/dirstorage"
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
		"extensions::dir_storage":    dirstorage.NewFactory().CreateDefaultConfig,
	}
	env := &runEnv{dir: "/tmp/bench", sinkURL: "http://127.0.0.1:1", logFile: "/tmp/app.log", grpcPort: 2, httpPort: 3, forwardPort: 4}
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
			if want := 2 + strings.Count(text, "  stdout:") + strings.Count(text, "  otlp:") + strings.Count(text, "  sampling:") + strings.Count(text, "  dir_storage:"); seen != want {
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

// TestDiskVariantsPutTheQueueOnDisk checks that each -disk scenario's sidecar
// runs the shipped configs' durable queue (and file offsets beside it), and
// that its base scenario does not.
func TestDiskVariantsPutTheQueueOnDisk(t *testing.T) {
	env := &runEnv{dir: "/tmp/bench", sinkURL: "http://127.0.0.1:1", logFile: "/tmp/app.log"}
	all := scenarios(options{logRate: 1, spanRate: 1, mixedRPS: 1})
	byName := map[string]scenario{}
	for _, sc := range all {
		byName[sc.name] = sc
	}
	disk := 0
	for _, sc := range all {
		base, ok := strings.CutSuffix(sc.name, "-disk")
		if !ok {
			continue
		}
		disk++
		on, off := sidecarConfig(env, sc.sidecar), sidecarConfig(env, byName[base].sidecar)
		for _, want := range []string{"sending_queue: {storage: dir_storage}", "extensions: [dir_storage]", `directory: "/tmp/bench/state"`} {
			if !strings.Contains(on, want) {
				t.Errorf("%s lacks %q:\n%s", sc.name, want, on)
			}
		}
		if sc.sidecar.logs == inputFileCRI && !strings.Contains(on, "    storage: dir_storage") {
			t.Errorf("%s keeps file offsets in memory:\n%s", sc.name, on)
		}
		if strings.Contains(off, "dir_storage") {
			t.Errorf("%s (the memory queue) uses dir_storage:\n%s", base, off)
		}
		if !sc.sidecarOnly || sc.axiom != byName[base].axiom || sc.maxOnly != byName[base].maxOnly {
			t.Errorf("%s should be %s's sidecar run with only the disk buffer changed", sc.name, base)
		}
	}
	if disk == 0 {
		t.Fatal("no -disk scenario")
	}
}

// TestBaselineQueueIsBoundedInBytes checks the stock exporter's queue: the
// bytes sizer and the sidecar's memory budget, not a count of items.
func TestBaselineQueueIsBoundedInBytes(t *testing.T) {
	env := &runEnv{dir: "/tmp/bench", sinkURL: "http://127.0.0.1:1", logFile: "/tmp/app.log"}
	text := baselineConfig(env, inputs{logs: inputFileCRI, spans: true})
	conf, err := confmap.NewRetrievedFromYAML([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	all, err := conf.AsConf()
	if err != nil {
		t.Fatal(err)
	}
	want := axiomexporter.NewFactory().CreateDefaultConfig().(*axiomexporter.Config).Memory
	for _, exp := range []string{"otlp_http/logs", "otlp_http/traces"} {
		q := "exporters::" + exp + "::sending_queue::"
		if got := all.Get(q + "sizer"); got != "bytes" {
			t.Errorf("%s sizer %v, want bytes", exp, got)
		}
		if got := all.Get(q + "queue_size"); got != int(want) {
			t.Errorf("%s queue_size %v, want the sidecar's memory budget %d", exp, got, want)
		}
		if got := all.Get(q + "batch::sizer"); got != "bytes" {
			t.Errorf("%s batch sizer %v, want bytes", exp, got)
		}
	}
}

// TestAxiomFaultsKeepTheShippedWhenFull checks that against a slow or down
// Axiom the sidecar's stdin keeps its shipped drop_oldest (the app is
// never blocked), while the capacity scenarios, span lines on stdin too,
// block as the stock receivers do.
func TestAxiomFaultsKeepTheShippedWhenFull(t *testing.T) {
	env := &runEnv{dir: "/tmp/bench", sinkURL: "http://127.0.0.1:1", logFile: "/tmp/app.log"}
	faults := 0
	for _, sc := range scenarios(options{logRate: 1, spanRate: 1, mixedRPS: 1}) {
		if sc.sidecar.logs != inputStdin && !sc.sidecar.stdinSpans {
			continue
		}
		blocks := strings.Contains(sidecarConfig(env, sc.sidecar), "when_full: block")
		if sc.axiom != "" {
			faults++
		}
		if blocks == (sc.axiom != "") {
			t.Errorf("%s (axiom %q): when_full: block is %v", sc.name, sc.axiom, blocks)
		}
	}
	if faults == 0 {
		t.Fatal("no stdin scenario against a slow or down Axiom")
	}
}
