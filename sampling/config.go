package sampling

import (
	"errors"
	"fmt"
	"math"
	"time"

	"go.opentelemetry.io/collector/confmap"
)

// Config configures the sampling processor. See README.md for the semantics
// of every field.
type Config struct {
	// AlwaysKeep lists conditions under which a span or log record matched by
	// any rule is kept with probability 1.
	AlwaysKeep KeepConfig `mapstructure:"always_keep"`
	// Rules are tried in order; the first match decides. Unmatched items are
	// kept and left untouched.
	Rules []RuleConfig `mapstructure:"rules"`
	// Summaries configures the per-interval summary events.
	Summaries SummariesConfig `mapstructure:"summaries"`
	// Structure configures the "traces stay whole" protection.
	Structure StructureConfig `mapstructure:"structure"`
	// UpstreamProbability is the probability the app keeps traces with when
	// it samples them itself without writing a `th` threshold (a JS
	// TraceIdRatioBasedSampler, Go's TraceIDRatioBased): the weights of
	// spans that arrive without th are divided by it. Default 1.
	UpstreamProbability float64 `mapstructure:"upstream_probability"`
	// Hold bounds the spans a rule would drop that wait for their local
	// root (see hold.go).
	Hold HoldConfig `mapstructure:"hold"`

	_ struct{}
}

// KeepConfig holds conditions that depend only on the item itself, so keeping
// such items with probability 1 leaves the weights of the others unbiased.
type KeepConfig struct {
	// Errors keeps spans with status ERROR or an `exception` event, and log
	// records with severity ERROR or above.
	Errors bool `mapstructure:"errors"`
	// MinDuration keeps spans at least this long (0 disables).
	MinDuration time.Duration `mapstructure:"min_duration"`
	// Priority keeps items whose `sampling.priority` attribute is > 0.
	Priority bool `mapstructure:"priority"`
}

// RuleConfig is one sampling rule.
type RuleConfig struct {
	// Name identifies the rule in summaries, self-metrics and errors.
	Name string `mapstructure:"name"`
	// Match selects the items the rule applies to.
	Match MatchConfig `mapstructure:"match"`
	// Probability is a fixed keep probability in [2^-56, 1].
	Probability float64 `mapstructure:"probability"`
	// TargetPerSecond makes the probability dynamic: about this many items
	// per second per key are kept.
	TargetPerSecond float64 `mapstructure:"target_per_second"`
	// Key lists what a dynamic rule counts by: span.name, operation,
	// service.name, status, or an attribute name.
	Key []string `mapstructure:"key"`
	// Interval is how often a dynamic rule recomputes its probabilities
	// (default 10s).
	Interval time.Duration `mapstructure:"interval"`
	// MaxKeys bounds the number of keys of a dynamic rule; further keys share
	// one overflow key (default 1000).
	MaxKeys int `mapstructure:"max_keys"`
	// MinProbability is the smallest probability a dynamic rule uses
	// (default 2^-20).
	MinProbability float64 `mapstructure:"min_probability"`
	// KeepIf adds always-keep conditions for this rule only.
	KeepIf KeepConfig `mapstructure:"keep_if"`
	// UpstreamProbability overrides the processor's upstream_probability
	// for the spans this rule decides (0: the processor's).
	UpstreamProbability float64 `mapstructure:"upstream_probability"`
	// Hold, when false, drops this rule's spans at once instead of holding
	// them until their local root is seen (default true).
	Hold *bool `mapstructure:"hold"`
}

// MatchConfig is a conjunction of conditions; absent conditions match all.
// Value conditions (span_name, service, attributes, resource_attributes,
// body) take a scalar (equals), a list (in), or a map with one of
// equals, in, exists, regex, glob.
type MatchConfig struct {
	// Signal limits the rule to "traces" or "logs"; empty means both.
	Signal string `mapstructure:"signal"`
	// SpanName matches the span name (spans only).
	SpanName any `mapstructure:"span_name"`
	// Kind lists span kinds: internal, server, client, producer, consumer.
	Kind []string `mapstructure:"kind"`
	// Status lists span status codes: unset, ok, error.
	Status []string `mapstructure:"status"`
	// Operation lists operations, compared case-insensitively (spans only).
	Operation []string `mapstructure:"operation"`
	// Service matches the resource's service.name.
	Service any `mapstructure:"service"`
	// Attributes match span or log record attributes.
	Attributes map[string]any `mapstructure:"attributes"`
	// ResourceAttributes match resource attributes.
	ResourceAttributes map[string]any `mapstructure:"resource_attributes"`
	// Severity lists log severities: trace, debug, info, warn, error, fatal.
	Severity []string `mapstructure:"severity"`
	// Body matches top-level fields of a log body (JSON object text or map).
	Body map[string]any `mapstructure:"body"`
}

// SummariesConfig configures summary events.
type SummariesConfig struct {
	// Interval between summary events.
	Interval time.Duration `mapstructure:"interval"`
	// MaxGroups bounds the groups per interval; further groups are merged
	// into one group per rule with operation "__overflow__".
	MaxGroups int `mapstructure:"max_groups"`
}

// StructureConfig configures the recent-parent window.
type StructureConfig struct {
	// RecentParents is how many recently seen parent span ids are remembered.
	RecentParents int `mapstructure:"recent_parents"`
}

var _ confmap.Validator = (*Config)(nil)

// Validate checks the config and compiles every rule once so that
// errors name the rule and the field.
func (c *Config) Validate() error {
	var errs []error
	if c.Summaries.Interval <= 0 {
		errs = append(errs, fmt.Errorf("summaries.interval must be positive, got %v", c.Summaries.Interval))
	}
	if c.Summaries.MaxGroups <= 0 {
		errs = append(errs, fmt.Errorf("summaries.max_groups must be positive, got %d", c.Summaries.MaxGroups))
	}
	if c.Structure.RecentParents <= 0 {
		errs = append(errs, fmt.Errorf("structure.recent_parents must be positive, got %d", c.Structure.RecentParents))
	}
	if !validProbability(c.UpstreamProbability) {
		errs = append(errs, fmt.Errorf("upstream_probability must be in (0, 1], got %v", c.UpstreamProbability))
	}
	if c.Hold.Window <= 0 {
		errs = append(errs, fmt.Errorf("hold.window must be positive, got %v", c.Hold.Window))
	}
	if c.Hold.MaxBytes < 0 {
		errs = append(errs, fmt.Errorf("hold.max_bytes must not be negative (0 turns holding off), got %d", c.Hold.MaxBytes))
	}
	if c.AlwaysKeep.MinDuration < 0 {
		errs = append(errs, fmt.Errorf("always_keep.min_duration must not be negative, got %v", c.AlwaysKeep.MinDuration))
	}
	names := map[string]int{}
	for i := range c.Rules {
		r := &c.Rules[i]
		if err := r.validate(); err != nil {
			errs = append(errs, fmt.Errorf("rules[%d] (%q): %w", i, r.Name, err))
		}
		if j, dup := names[r.Name]; dup && r.Name != "" {
			errs = append(errs, fmt.Errorf("rules[%d] (%q): name already used by rules[%d]", i, r.Name, j))
		}
		names[r.Name] = i
	}
	return errors.Join(errs...)
}

func (r *RuleConfig) validate() error {
	var errs []error
	if r.Name == "" {
		errs = append(errs, errors.New("name is required"))
	}
	switch {
	case r.Probability != 0 && r.TargetPerSecond != 0:
		errs = append(errs, errors.New("set either probability or target_per_second, not both"))
	case r.Probability == 0 && r.TargetPerSecond == 0:
		errs = append(errs, errors.New("one of probability or target_per_second is required"))
	case r.Probability != 0 && (r.Probability < math.Ldexp(1, -56) || r.Probability > 1 || math.IsNaN(r.Probability)):
		errs = append(errs, fmt.Errorf("probability must be in [2^-56, 1], got %v", r.Probability))
	case r.TargetPerSecond < 0 || math.IsNaN(r.TargetPerSecond) || math.IsInf(r.TargetPerSecond, 0):
		errs = append(errs, fmt.Errorf("target_per_second must be positive, got %v", r.TargetPerSecond))
	}
	if r.TargetPerSecond > 0 {
		if r.Interval < 0 {
			errs = append(errs, fmt.Errorf("interval must not be negative, got %v", r.Interval))
		}
		if r.MaxKeys < 0 {
			errs = append(errs, fmt.Errorf("max_keys must not be negative, got %d", r.MaxKeys))
		}
		if r.MinProbability != 0 && !(r.MinProbability >= math.Ldexp(1, -56) && r.MinProbability <= 1) {
			errs = append(errs, fmt.Errorf("min_probability must be in [2^-56, 1], got %v", r.MinProbability))
		}
		for _, k := range r.Key {
			if k == "" {
				errs = append(errs, errors.New("key: empty field name"))
			}
		}
	} else if len(r.Key) > 0 {
		errs = append(errs, errors.New("key is only used with target_per_second"))
	}
	if r.UpstreamProbability != 0 && !validProbability(r.UpstreamProbability) {
		errs = append(errs, fmt.Errorf("upstream_probability must be in (0, 1], got %v", r.UpstreamProbability))
	}
	if r.KeepIf.MinDuration < 0 {
		errs = append(errs, fmt.Errorf("keep_if.min_duration must not be negative, got %v", r.KeepIf.MinDuration))
	}
	if _, err := compileMatch(&r.Match); err != nil {
		errs = append(errs, fmt.Errorf("match: %w", err))
	}
	return errors.Join(errs...)
}

// validProbability reports whether p is in (0, 1].
func validProbability(p float64) bool { return p > 0 && p <= 1 }
