package tail

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/whenfull"
)

// Formats a tailed file can be read as.
const (
	FormatAuto   = "auto"
	FormatCRI    = "cri"
	FormatDocker = "docker"
	FormatRaw    = "raw"
)

// Where a file first seen at startup starts being read.
const (
	StartAtEnd       = "end"
	StartAtBeginning = "beginning"
)

// Config is the YAML under receivers.stdout.files.
type Config struct {
	Include      []string      `mapstructure:"include"`       // globs, required
	Exclude      []string      `mapstructure:"exclude"`       // globs matched against the same paths
	Format       string        `mapstructure:"format"`        // auto (default) | cri | docker | raw
	StartAt      string        `mapstructure:"start_at"`      // end (default) | beginning
	PollInterval time.Duration `mapstructure:"poll_interval"` // default 200ms
	// MaxOpenFiles bounds the files followed at once (default 1024); files
	// matched beyond it wait until rotated files are let go.
	MaxOpenFiles int `mapstructure:"max_open_files"`
	// WhenFull can only be block: the files are the buffer, and an offset
	// moves on only once its lines are in the pipeline.
	WhenFull whenfull.Policy `mapstructure:"when_full"`
}

// NewDefaultConfig returns the defaults: auto format, start at end, 200ms polls.
func NewDefaultConfig() Config {
	return Config{
		Format:       FormatAuto,
		StartAt:      StartAtEnd,
		PollInterval: 200 * time.Millisecond,
		MaxOpenFiles: 1024,
		WhenFull:     whenfull.Block,
	}
}

// Validate checks the globs and the enumerated values.
func (c *Config) Validate() error {
	var errs []error
	if len(c.Include) == 0 {
		errs = append(errs, errors.New("files: include needs at least one glob"))
	}
	for _, g := range append(append([]string(nil), c.Include...), c.Exclude...) {
		if _, err := filepath.Match(g, ""); err != nil {
			errs = append(errs, fmt.Errorf("files: bad glob %q: %w", g, err))
		}
	}
	switch c.Format {
	case "", FormatAuto, FormatCRI, FormatDocker, FormatRaw:
	default:
		errs = append(errs, fmt.Errorf("files: format %q: want auto, cri, docker or raw", c.Format))
	}
	switch c.StartAt {
	case "", StartAtEnd, StartAtBeginning:
	default:
		errs = append(errs, fmt.Errorf("files: start_at %q: want end or beginning", c.StartAt))
	}
	if c.PollInterval < 0 {
		errs = append(errs, fmt.Errorf("files: poll_interval %v must not be negative", c.PollInterval))
	}
	if c.WhenFull != "" && c.WhenFull != whenfull.Block {
		errs = append(errs, fmt.Errorf("files: when_full %q: tailed files only block (the files are the buffer, and nothing they hold is lost by waiting)", c.WhenFull))
	}
	if c.MaxOpenFiles < 0 {
		errs = append(errs, fmt.Errorf("files: max_open_files %d must not be negative", c.MaxOpenFiles))
	}
	return errors.Join(errs...)
}
