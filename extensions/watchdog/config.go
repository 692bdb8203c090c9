package watchdog

import (
	"errors"
	"time"
)

// Config is the configuration of the watchdog extension.
type Config struct {
	// WedgedAfter is how long a stage may be past the time it said it
	// would next make progress before the pipeline counts as wedged
	// (internal/watchdog says what each stage says).
	WedgedAfter time.Duration `mapstructure:"wedged_after"`

	_ struct{}
}

func (c *Config) Validate() error {
	if c.WedgedAfter <= 0 {
		return errors.New("wedged_after must be positive")
	}
	return nil
}
