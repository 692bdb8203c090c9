package stdoutreceiver

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/forward"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stdin"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/tail"
)

// Config is the stdout receiver's configuration. Each transport section
// turns its transport on by being present (an empty section, `stdin: {}`,
// takes its defaults); at least one is required.
type Config struct {
	// MaxLineBytes is the longest line kept whole; longer lines keep their
	// first MaxLineBytes bytes and are marked log.truncated.
	MaxLineBytes int `mapstructure:"max_line_bytes"`
	// Storage names a storage extension (file_storage) where tailed files'
	// offsets are checkpointed; unset, a restart starts over per start_at.
	Storage *component.ID `mapstructure:"storage"`
	// SamplingProcessor names the sampling processor whose presample.Filter
	// decides OTLP/JSON span lines before they become pdata, as the otlp
	// receiver's key of the same name does for requests.
	SamplingProcessor *component.ID `mapstructure:"sampling_processor"`

	Stdin   configoptional.Optional[stdin.Config]   `mapstructure:"stdin"`
	Files   configoptional.Optional[tail.Config]    `mapstructure:"files"`
	Forward configoptional.Optional[forward.Config] `mapstructure:"forward"`
}

func createDefaultConfig() component.Config {
	return &Config{
		MaxLineBytes: stream.DefaultMaxLineBytes,
		Stdin:        configoptional.Default(stdin.NewDefaultConfig()),
		Files:        configoptional.Default(tail.NewDefaultConfig()),
		Forward:      configoptional.Default(forward.NewDefaultConfig()),
	}
}

// Validate checks the receiver-level settings; each present transport
// section is validated by its own Validate.
func (c *Config) Validate() error {
	var errs []error
	if c.MaxLineBytes <= 0 {
		errs = append(errs, fmt.Errorf("max_line_bytes must be positive, got %d", c.MaxLineBytes))
	}
	if !c.Stdin.HasValue() && !c.Files.HasValue() && !c.Forward.HasValue() {
		errs = append(errs, errors.New("no transport configured: add at least one of stdin, files or forward"))
	}
	if c.Storage != nil && !c.Files.HasValue() {
		errs = append(errs, errors.New("storage is only used by files, which is not configured"))
	}
	return errors.Join(errs...)
}
