package axiomexporter

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

func validConfig() *Config {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.Token = testToken
	cfg.LogsDataset = logsDS
	return cfg
}

func TestDefaultConfig(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	q := cfg.QueueConfig.Get()
	if q == nil || !q.Batch.HasValue() {
		t.Fatal("sending_queue with batching must be on by default")
	}
	b := q.Batch.Get()
	if b.MaxSize > defaultMaxRequestBytes || b.MaxSize < minRequestBytes || b.FlushTimeout.Seconds() != 1 || b.Sizer.String() != "bytes" || q.Sizer.String() != "bytes" {
		t.Errorf("batch defaults = %+v, queue sizer %v", b, q.Sizer)
	}
	// Each signal's batch being built and its requests in flight fit its
	// half of the memory budget.
	if held := b.MaxSize + int64(q.NumConsumers)*requestCost*b.MaxSize; held > defaultMemoryBudget/signalShare {
		t.Errorf("one signal may hold %d bytes, more than half the %d-byte memory budget", held, defaultMemoryBudget)
	}
	if cfg.RetryConfig.MaxElapsedTime != 0 {
		t.Errorf("retry_on_failure gives up after %v: accepted data would be dropped", cfg.RetryConfig.MaxElapsedTime)
	}
	if err := confmap.Validate(validConfig()); err != nil {
		t.Errorf("default config with token and dataset is invalid: %v", err)
	}
	if got := cfg.apiBaseURL().String(); got != defaultURL {
		t.Errorf("default base URL = %s", got)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string // substring of the error; "" = valid
	}{
		{"url and edge", func(c *Config) { c.URL = "https://api.axiom.co"; c.Edge = "eu-central-1.aws.edge.axiom.co" }, "not both"},
		{"edge domain", func(c *Config) { c.Edge = "eu-central-1.aws.edge.axiom.co" }, ""},
		{"edge url", func(c *Config) { c.Edge = "http://127.0.0.1:8080" }, ""},
		{"edge with path", func(c *Config) { c.Edge = "https://edge.example/v1/ingest/x" }, "without path"},
		{"bad url scheme", func(c *Config) { c.URL = "ftp://api.axiom.co" }, "https://"},
		{"url with path", func(c *Config) { c.URL = "https://proxy.example/axiom" }, "without path"},
		{"no token no local_dir", func(c *Config) { c.Token = "" }, "AXIOM_TOKEN"},
		{"no token with local_dir", func(c *Config) { c.Token = ""; c.LocalDir = "/tmp/x" }, ""},
		{"token of the wrong kind", func(c *Config) { c.Token = "secret-abc" }, "xaat-"},
		{"personal token without org", func(c *Config) { c.Token = "xapt-abc" }, "org_id"},
		{"personal token with org", func(c *Config) { c.Token = "xapt-abc"; c.OrgID = "o" }, ""},
		{"personal token on edge", func(c *Config) { c.Token = "xapt-abc"; c.OrgID = "o"; c.Edge = "e.example" }, "API tokens"},
		{"no dataset", func(c *Config) { c.LogsDataset = "" }, "logs_dataset"},
		{"bad dataset chars", func(c *Config) { c.TracesDataset = "my traces" }, "traces_dataset"},
		{"dataset too long", func(c *Config) { c.LogsDataset = strings.Repeat("a", 81) }, "80"},
		{"dataset edge char", func(c *Config) { c.LogsDataset = "logs-" }, "start or end"},
		{"dataset axiom- prefix", func(c *Config) { c.LogsDataset = "axiom-logs" }, "axiom-"},
		{"zero timeout", func(c *Config) { c.Timeout = 0 }, "timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := validConfig()
			tc.edit(cfg)
			err := cfg.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestMissingDatasetForSignal(t *testing.T) {
	cfg := validConfig() // logs only
	_, err := NewFactory().CreateTraces(context.Background(), newHarness().set, cfg)
	if err == nil || !strings.Contains(err.Error(), "traces_dataset") {
		t.Errorf("err = %v, want one naming traces_dataset", err)
	}
}

func TestTokenNeverPrinted(t *testing.T) {
	cfg := validConfig()
	cfg.Token = "xapt-very-secret"
	cfg.Edge = "edge.example"
	if s := fmt.Sprintf("%+v %v %#v", cfg, cfg, cfg); strings.Contains(s, "very-secret") {
		t.Error("formatted config contains the token")
	}
	if err := cfg.Validate(); err == nil || strings.Contains(err.Error(), "very-secret") {
		t.Errorf("validation error missing or contains the token: %v", err)
	}
	// print-config marshals the config: the token must come out redacted.
	conf := confmap.New()
	if err := conf.Marshal(cfg); err != nil {
		t.Fatal(err)
	}
	if s := fmt.Sprint(conf.ToStringMap()); strings.Contains(s, "very-secret") {
		t.Errorf("marshalled config contains the token: %s", s)
	}
}

func TestConfigUnmarshal(t *testing.T) {
	conf := confmap.NewFromStringMap(map[string]any{
		"edge":           "eu-central-1.aws.edge.axiom.co",
		"token":          testToken,
		"logs_dataset":   "l",
		"traces_dataset": "t",
		"local_dir":      "/tmp/axiom",
		"headers":        map[string]any{"X-Extra": "1"},
		"sending_queue":  map[string]any{"storage": "file_storage"},
		"disk":           "100MiB",
		"memory":         64 << 20,
	})
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	if err := conf.Unmarshal(cfg); err != nil {
		t.Fatal(err)
	}
	if err := confmap.Validate(cfg); err != nil {
		t.Fatal(err)
	}
	q := cfg.QueueConfig.Get()
	if q.StorageID == nil || q.StorageID.String() != "file_storage" || q.QueueSize != 50<<20 || q.Sizer.String() != "bytes" || !q.Batch.HasValue() {
		t.Errorf("sending_queue = %+v", q)
	}
	if got := cfg.apiBaseURL().String(); got != "https://eu-central-1.aws.edge.axiom.co" {
		t.Errorf("edge base URL = %s", got)
	}
}

// The queue's sizes come from the budgets only: set by hand they are refused
// with a message that names the budgets.
func TestQueueSizesComeFromBudgets(t *testing.T) {
	for _, key := range []string{"queue_size", "sizer", "num_consumers"} {
		conf := confmap.NewFromStringMap(map[string]any{"sending_queue": map[string]any{key: map[string]any{"queue_size": 1, "sizer": "items", "num_consumers": 2}[key]}})
		err := conf.Unmarshal(NewFactory().CreateDefaultConfig())
		if err == nil || !strings.Contains(err.Error(), "memory, disk") {
			t.Errorf("sending_queue::%s: err = %v, want one naming the budgets", key, err)
		}
	}
	var s ByteSize
	for text, want := range map[string]ByteSize{"1GiB": 1 << 30, "512 KiB": 512 << 10, "1048576": 1 << 20, "3MiB": 3 << 20} {
		if err := s.UnmarshalText([]byte(text)); err != nil || s != want {
			t.Errorf("%q = %d, %v; want %d", text, s, err, want)
		}
	}
	for _, bad := range []string{"1GB", "-1", "lots", "1.5MiB"} {
		if err := s.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("%q was accepted as %d", bad, s)
		}
	}
}

func TestLocalDirMode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	cfg := testConfig("")
	cfg.Token = ""
	cfg.LocalDir = dir
	h := newHarness()
	logs := startLogs(t, h, cfg)
	traces := startTraces(t, h, cfg)
	ld := buildMappingLogs(mappingCases)
	if err := logs.ConsumeLogs(context.Background(), ld); err != nil {
		t.Fatal(err)
	}
	td := richTraces()
	for range 2 {
		if err := traces.ConsumeTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
	}
	if err := logs.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := traces.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	gotLogs, err := os.ReadFile(filepath.Join(dir, logsDS+".ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	// Exactly the lines that would have been sent (the records all carry a
	// timestamp or a raw _time, so "now" does not enter the comparison).
	if want := encodeAll(t, ld); string(gotLogs) != want {
		t.Errorf("logs file:\n%s\nwant:\n%s", gotLogs, want)
	}

	gotSpans, err := os.ReadFile(filepath.Join(dir, tracesDS+".otlp.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(gotSpans), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d span lines, want 2", len(lines))
	}
	var m ptrace.JSONMarshaler
	want, _ := m.MarshalTraces(td)
	for _, line := range lines {
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalJSON([]byte(line)); err != nil {
			t.Fatalf("span line is not an OTLP/JSON ExportTraceServiceRequest: %v", err)
		}
		got, _ := m.MarshalTraces(req.Traces())
		if string(got) != string(want) {
			t.Errorf("span line differs:\n%s\nwant\n%s", got, want)
		}
	}

	warnings := h.logs.FilterMessageSnippet("AXIOM_TOKEN is not set: writing").All()
	if len(warnings) != 2 || !strings.Contains(warnings[0].Message, dir) {
		t.Errorf("want one warning per signal naming %s, got %v", dir, warnings)
	}
}
