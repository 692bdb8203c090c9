package sampling

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
)

func loadConfig(t *testing.T, yaml string) (*Config, error) {
	t.Helper()
	conf, err := confmap.NewRetrievedFromYAML([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := conf.AsConf()
	if err != nil {
		t.Fatal(err)
	}
	cfg := createDefaultConfig().(*Config)
	if err := raw.Unmarshal(cfg); err != nil {
		return nil, err
	}
	return cfg, confmap.Validate(cfg)
}

func TestLoadConfig(t *testing.T) {
	conf, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := createDefaultConfig().(*Config)
	if err := conf.Unmarshal(cfg); err != nil {
		t.Fatal(err)
	}
	if err := confmap.Validate(cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.AlwaysKeep.MinDuration != time.Second || len(cfg.Rules) != 4 || cfg.Summaries.Interval != 30*time.Second ||
		cfg.Structure.RecentParents != 1000 || cfg.Rules[0].KeepIf.MinDuration != 25*time.Millisecond ||
		cfg.Rules[1].TargetPerSecond != 20 || cfg.Rules[1].Key[0] != "span.name" ||
		cfg.Hold != (HoldConfig{Window: 5 * time.Second, MaxBytes: 1 << 20}) || cfg.Rules[1].Hold == nil || *cfg.Rules[1].Hold || cfg.Rules[0].Hold != nil {
		t.Fatalf("unexpected config %+v", cfg)
	}
	for i := range cfg.Rules {
		m, err := compileMatch(&cfg.Rules[i].Match)
		if err != nil {
			t.Fatal(err)
		}
		want := []signalMask{signalTraces, signalTraces | signalLogs, signalLogs, signalTraces}[i]
		if m.signals != want {
			t.Errorf("rule %s: signals %b, want %b", cfg.Rules[i].Name, m.signals, want)
		}
	}
}

func TestValidateErrorsNameTheRule(t *testing.T) {
	cases := []struct{ yaml, want string }{
		{"rules: [{name: a, probability: 1.5}]", `rules[0] ("a"): probability must be in [2^-56, 1], got 1.5`},
		{"rules: [{name: a}]", `rules[0] ("a"): one of probability or target_per_second is required`},
		{"rules: [{name: a, probability: 0.5, target_per_second: 3}]", `rules[0] ("a"): set either probability or target_per_second, not both`},
		{"rules: [{probability: 0.5}]", `rules[0] (""): name is required`},
		{"rules: [{name: a, probability: 0.5}, {name: a, probability: 0.5}]", `rules[1] ("a"): name already used by rules[0]`},
		{"rules: [{name: k, probability: 0.5, match: {kind: [sever]}}]", `rules[0] ("k"): match: kind: unknown span kind "sever"`},
		{"rules: [{name: s, probability: 0.5, match: {status: [bad]}}]", `unknown status "bad"`},
		{"rules: [{name: r, probability: 0.5, match: {span_name: {regex: '('}}}]", `rules[0] ("r"): match: span_name: regex: error parsing regexp`},
		{"rules: [{name: o, probability: 0.5, match: {attributes: {x: {like: 1}}}}]", `attributes["x"]: unknown operator "like"`},
		{"rules: [{name: l, probability: 0.5, match: {signal: logs, kind: [client]}}]", `signal is logs but span_name, kind, status or operation conditions only apply to spans`},
		{"rules: [{name: l, probability: 0.5, match: {kind: [client], severity: [info]}}]", `mixes span-only conditions`},
		{"rules: [{name: v, probability: 0.5, match: {severity: [loud]}}]", `unknown level "loud"`},
		{"rules: [{name: d, target_per_second: 5, key: [span.name], interval: -1s}]", `rules[0] ("d"): interval must not be negative`},
		{"rules: [{name: d, probability: 0.5, key: [span.name]}]", `key is only used with target_per_second`},
		{"summaries: {interval: 0s}", `summaries.interval must be positive`},
		{"structure: {recent_parents: 0}", `structure.recent_parents must be positive`},
		{"upstream_probability: 0", `upstream_probability must be in (0, 1], got 0`},
		{"hold: {window: 0s}", `hold.window must be positive, got 0s`},
		{"hold: {max_bytes: -1}", `hold.max_bytes must not be negative (0 turns holding off), got -1`},
		{"rules: [{name: u, probability: 0.5, upstream_probability: 2}]", `rules[0] ("u"): upstream_probability must be in (0, 1], got 2`},
	}
	for _, c := range cases {
		_, err := loadConfig(t, c.yaml)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", c.yaml, err, c.want)
		}
	}
	if _, err := loadConfig(t, "upstream_probability: 0.1\nrules: [{name: ok, probability: 0.25, match: {operation: [get]}, upstream_probability: 0.5}]"); err != nil {
		t.Errorf("valid config rejected: %v", err)
	}
}

// TestReadmeExamples keeps the README's YAML examples valid configs.
func TestReadmeExamples(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(readme), "```yaml\n")[1:]
	if len(blocks) < 4 {
		t.Fatalf("found %d YAML examples", len(blocks))
	}
	for _, b := range blocks {
		text, _, _ := strings.Cut(b, "```")
		conf, err := confmap.NewRetrievedFromYAML([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		raw, err := conf.AsConf()
		if err != nil {
			t.Fatalf("%v in\n%s", err, text)
		}
		if raw.IsSet("processors") {
			if raw, err = raw.Sub("processors::sampling"); err != nil {
				t.Fatal(err)
			}
		}
		cfg := createDefaultConfig().(*Config)
		if err := raw.Unmarshal(cfg); err != nil {
			t.Fatalf("README example does not load: %v\n%s", err, text)
		}
		if err := confmap.Validate(cfg); err != nil {
			t.Fatalf("README example is invalid: %v\n%s", err, text)
		}
	}
}
