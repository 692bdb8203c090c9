package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.yaml.in/yaml/v3"

	"github.com/sidecarhq/sidecar/exporters/axiomexporter"
	"github.com/sidecarhq/sidecar/sampling"
)

// Properties of an [OUTPUT] section, as Fluent Bit passes them (it matches
// names case-insensitively).
const (
	propDataset   = "Dataset"
	propToken     = "Token"
	propTokenFile = "Token_File"
	propURL       = "URL"
	propEdge      = "Edge"
	propOrgID     = "Org_ID"
	propRulesFile = "Rules_File"
)

// flushTimeout bounds one request to Axiom during a flush: Fluent Bit's
// scheduler, not the plugin, waits and retries.
const flushTimeout = 30 * time.Second

// config is one instance's configuration, read from its properties.
type config struct {
	axiom    *axiomexporter.Config // for the chunks: no queue, no retries
	sampling *sampling.Config      // nil without Rules_File
}

// readConfig builds an instance's configuration; prop returns a property's
// value, "" when it is not set. Errors never contain the token.
func readConfig(prop func(string) string) (*config, error) {
	ac := axiomexporter.NewFactory().CreateDefaultConfig().(*axiomexporter.Config)
	ac.LogsDataset = prop(propDataset)
	ac.URL = prop(propURL)
	ac.Edge = prop(propEdge)
	ac.OrgID = prop(propOrgID)
	token, tokenFile := prop(propToken), prop(propTokenFile)
	switch {
	case token != "" && tokenFile != "":
		return nil, fmt.Errorf("set %s or %s, not both", propToken, propTokenFile)
	case tokenFile != "":
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", propTokenFile, err)
		}
		token = strings.TrimSpace(string(b))
	}
	if token == "" {
		return nil, fmt.Errorf("no token: set %s or %s", propToken, propTokenFile)
	}
	ac.Token = configopaque.String(token)
	if ac.LogsDataset == "" {
		return nil, fmt.Errorf("%s is not set", propDataset)
	}
	// Fluent Bit holds the chunk (in memory or in its filesystem storage)
	// and retries it when the flush says FLB_RETRY: the exporter sends
	// once and says how it went.
	ac.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	ac.RetryConfig.Enabled = false
	ac.Timeout = flushTimeout
	if err := ac.Validate(); err != nil {
		return nil, err
	}
	cfg := &config{axiom: ac}
	if path := prop(propRulesFile); path != "" {
		sc, err := readRules(path)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", propRulesFile, path, err)
		}
		cfg.sampling = sc
	}
	return cfg, nil
}

// readRules reads a sampling processor configuration (always_keep, rules,
// summaries: the same YAML as under processors.sampling in the sidecar).
func readRules(path string) (*sampling.Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw map[string]any
	if err := yaml.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	sc := sampling.NewFactory().CreateDefaultConfig().(*sampling.Config)
	if err := confmap.NewFromStringMap(raw).Unmarshal(sc); err != nil {
		return nil, err
	}
	if len(sc.Rules) == 0 {
		return nil, errors.New("no rules")
	}
	return sc, sc.Validate()
}

// summaryConfig is the exporter configuration for sampling summaries: the
// plugin makes them itself, so it also holds and retries them, in a small
// in-memory queue drained at exit.
func summaryConfig(flush *axiomexporter.Config, grace time.Duration) *axiomexporter.Config {
	c := axiomexporter.NewFactory().CreateDefaultConfig().(*axiomexporter.Config)
	c.URL, c.Edge, c.Token, c.OrgID, c.LogsDataset = flush.URL, flush.Edge, flush.Token, flush.OrgID, flush.LogsDataset
	c.Timeout = min(c.Timeout, grace)
	c.ShutdownTimeout = grace
	return c
}
