package dirstorage

import "errors"

// Config is the configuration of the dir_storage extension.
type Config struct {
	// Directory holds one sub-directory per client (component and name)
	// and in it one file per key. It is created at start if missing.
	Directory string `mapstructure:"directory"`
	// FSync makes every write wait until the data is on the device, which
	// also survives a power loss; without it, a write survives a crash of
	// the process (kill -9, OOM kill) but not of the machine.
	FSync bool `mapstructure:"fsync"`

	_ struct{}
}

func (c *Config) Validate() error {
	if c.Directory == "" {
		return errors.New("directory must be set")
	}
	return nil
}
