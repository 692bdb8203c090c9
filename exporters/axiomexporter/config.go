package axiomexporter

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/config/configtls"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
)

// defaultURL is Axiom's API host; it is used when neither url nor edge is set.
const defaultURL = "https://api.axiom.co"

// tokenEnvVar is what users are told to set when the token is missing.
const tokenEnvVar = "AXIOM_TOKEN"

// Config is the configuration of the axiom exporter. See README.md.
type Config struct {
	// URL is the API base URL (default https://api.axiom.co). Logs go to
	// {url}/v1/datasets/{logs_dataset}/ingest, spans to {url}/v1/traces.
	URL string `mapstructure:"url"`
	// Edge is a regional edge domain (eu-central-1.aws.edge.axiom.co) or an
	// http(s) URL without a path. Logs go to {edge}/v1/ingest/{logs_dataset},
	// spans to {edge}/v1/traces. Mutually exclusive with URL.
	Edge string `mapstructure:"edge"`

	// Token is an Axiom API token (xaat-…) or personal token (xapt-…, needs
	// org_id). configopaque keeps it out of logs and print-config.
	Token configopaque.String `mapstructure:"token"`
	OrgID string              `mapstructure:"org_id"`

	LogsDataset   string `mapstructure:"logs_dataset"`
	TracesDataset string `mapstructure:"traces_dataset"`

	// LocalDir is used only when Token is empty: events and spans are
	// appended to files there instead of being sent (local development).
	LocalDir string `mapstructure:"local_dir"`

	// Timeout bounds one HTTP request, including reading the answer.
	Timeout time.Duration `mapstructure:"timeout"`
	// ShutdownTimeout bounds how long Shutdown keeps trying to deliver what
	// is queued and in flight; after it, requests are cancelled and what
	// they carried is counted as dropped (or stays in a persistent queue).
	ShutdownTimeout time.Duration `mapstructure:"shutdown_timeout"`

	TLS      configtls.ClientConfig `mapstructure:"tls"`
	ProxyURL string                 `mapstructure:"proxy_url"`
	// Headers are added to every request (after the exporter's own).
	Headers configopaque.MapList `mapstructure:"headers"`

	// Memory bounds, in bytes, what the exporter holds in memory for both
	// signals together: the batch being built and the requests in flight
	// (and the queue, when it has no storage).
	Memory ByteSize `mapstructure:"memory"`
	// Disk bounds, in bytes, the queue on disk (sending_queue.storage) for
	// both signals together.
	Disk ByteSize `mapstructure:"disk"`
	// CheckToken makes one empty ingest request at start, so that a token
	// Axiom refuses is reported at once rather than at the first batch.
	CheckToken bool `mapstructure:"check_token"`

	// MaxRequestBytes caps the uncompressed body of one request to Axiom.
	MaxRequestBytes ByteSize `mapstructure:"max_request_bytes"`

	// QueueConfig is exporterhelper's sending queue. Its sizes (sizer,
	// queue_size, num_consumers, batch min_size and max_size) are derived
	// from memory, disk and max_request_bytes; storage, flush_timeout and
	// the rest are used as set.
	QueueConfig configoptional.Optional[exporterhelper.QueueBatchConfig] `mapstructure:"sending_queue"`
	RetryConfig configretry.BackOffConfig                                `mapstructure:"retry_on_failure"`

	_ struct{}
}

var (
	_ confmap.Validator   = (*Config)(nil)
	_ confmap.Unmarshaler = (*Config)(nil)
)

// derivedQueueKeys are the sending_queue settings the budgets decide.
var derivedQueueKeys = []string{"sizer", "queue_size", "num_consumers", "batch::sizer", "batch::min_size", "batch::max_size"}

// Unmarshal reads the config and derives the sending queue's sizes from
// the budgets, refusing those sizes when they are set by hand: two places
// for one bound would contradict each other.
func (c *Config) Unmarshal(conf *confmap.Conf) error {
	if err := conf.Unmarshal(c); err != nil {
		return err
	}
	for _, key := range derivedQueueKeys {
		if conf.IsSet("sending_queue::" + key) {
			return fmt.Errorf("sending_queue::%s is derived from memory, disk and max_request_bytes: set those instead (see README.md)", key)
		}
	}
	c.QueueConfig = c.queueConfig()
	return nil
}

// Validate checks everything that does not depend on the pipelines the
// exporter is used in; a missing dataset for a signal is reported when that
// signal's exporter is created.
func (c *Config) Validate() error {
	var errs []error
	if c.URL != "" && c.Edge != "" {
		errs = append(errs, errors.New("set either url or edge, not both"))
	}
	if c.URL != "" {
		if _, err := parseBaseURL(c.URL); err != nil {
			errs = append(errs, fmt.Errorf("url: %w", err))
		}
	}
	if c.Edge != "" {
		if _, err := edgeBaseURL(c.Edge); err != nil {
			errs = append(errs, fmt.Errorf("edge: %w", err))
		}
	}
	errs = append(errs, c.validateToken()...)
	if c.LogsDataset == "" && c.TracesDataset == "" {
		errs = append(errs, errors.New("set logs_dataset and/or traces_dataset"))
	}
	for _, ds := range [...]struct{ key, name string }{{"logs_dataset", c.LogsDataset}, {"traces_dataset", c.TracesDataset}} {
		if ds.name != "" {
			if err := validateDatasetName(ds.name); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", ds.key, err))
			}
		}
	}
	if c.Timeout <= 0 {
		errs = append(errs, errors.New("timeout must be positive"))
	}
	if c.ShutdownTimeout <= 0 {
		errs = append(errs, errors.New("shutdown_timeout must be positive"))
	}
	if c.MaxRequestBytes < minRequestBytes {
		errs = append(errs, fmt.Errorf("max_request_bytes must be at least %s, to hold one record of the longest line", ByteSize(minRequestBytes)))
	}
	if min := (requestCost + 1) * signalShare * ByteSize(minRequestBytes); c.Memory < min {
		errs = append(errs, fmt.Errorf("memory must be at least %s (%.1f MiB): per signal, one batch of the longest record (1 MiB plus fields) and one request in flight", min, float64(min)/(1<<20)))
	}
	if q := c.QueueConfig.Get(); q != nil && q.StorageID != nil && c.Disk < signalShare*ByteSize(c.batchBytes()) {
		errs = append(errs, fmt.Errorf("disk must be at least %s: one batch per signal", signalShare*ByteSize(c.batchBytes())))
	}
	if c.ProxyURL != "" {
		if _, err := url.ParseRequestURI(c.ProxyURL); err != nil {
			errs = append(errs, fmt.Errorf("proxy_url: %w", err))
		}
	}
	return errors.Join(errs...)
}

// validateToken never puts the token itself into an error.
func (c *Config) validateToken() []error {
	tok := string(c.Token)
	switch {
	case tok == "" && c.LocalDir == "":
		return []error{fmt.Errorf("token is empty: set the %s environment variable (token: ${env:%s}), or set local_dir to write to files instead", tokenEnvVar, tokenEnvVar)}
	case tok == "":
		return nil
	case strings.HasPrefix(tok, "xaat-"):
		return nil
	case strings.HasPrefix(tok, "xapt-"):
		var errs []error
		if c.OrgID == "" {
			errs = append(errs, errors.New("a personal token (xapt-) needs org_id"))
		}
		if c.Edge != "" {
			errs = append(errs, errors.New("edge endpoints accept API tokens (xaat-) only, not personal tokens (xapt-)"))
		}
		return errs
	default:
		return []error{errors.New("token must be an Axiom API token (xaat-…) or personal token (xapt-…)")}
	}
}

// localMode reports whether the exporter writes files instead of sending.
func (c *Config) localMode() bool { return c.Token == "" && c.LocalDir != "" }

// validateDatasetName applies Axiom's rules: 1-80 characters from
// [a-zA-Z0-9-_.], not starting or ending with - _ or ., not starting with
// "axiom-".
func validateDatasetName(name string) error {
	if len(name) > 80 {
		return fmt.Errorf("dataset name %q is longer than 80 characters", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Errorf("dataset name %q may only contain a-z A-Z 0-9 - _ .", name)
		}
	}
	if strings.ContainsAny(name[:1], "-_.") || strings.ContainsAny(name[len(name)-1:], "-_.") {
		return fmt.Errorf("dataset name %q must not start or end with - _ or .", name)
	}
	if strings.HasPrefix(name, "axiom-") {
		return fmt.Errorf("dataset name %q must not start with axiom-", name)
	}
	return nil
}

// parseBaseURL accepts http(s)://host[:port] with no path: axiom-go resolves
// its API paths against the host and would silently drop a path prefix.
func parseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return nil, fmt.Errorf("%q must start with https:// or http://", raw)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%q has no host", raw)
	}
	if strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.User != nil {
		return nil, fmt.Errorf("%q must be scheme://host[:port] without path, query or credentials", raw)
	}
	u.Path = ""
	return u, nil
}

// edgeBaseURL turns an edge setting (a bare domain or a URL) into a base URL.
func edgeBaseURL(edge string) (*url.URL, error) {
	if !strings.Contains(edge, "://") {
		if strings.ContainsAny(edge, "/?#@ ") {
			return nil, fmt.Errorf("%q is neither a domain nor an http(s) URL", edge)
		}
		edge = "https://" + edge
	}
	return parseBaseURL(edge)
}

// apiBaseURL is where spans go and, without edge, where logs go.
func (c *Config) apiBaseURL() *url.URL {
	if c.Edge != "" {
		u, _ := edgeBaseURL(c.Edge)
		return u
	}
	if c.URL != "" {
		u, _ := parseBaseURL(c.URL)
		return u
	}
	u, _ := url.Parse(defaultURL)
	return u
}
