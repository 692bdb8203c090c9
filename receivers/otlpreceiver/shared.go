package otlpreceiver

import (
	"sync"

	"go.opentelemetry.io/collector/receiver"
)

// One receiver instance serves every pipeline of a config (one listener
// per port), as the stock receiver does with the collector's internal
// sharedcomponent package, which other modules cannot import. Instances are
// keyed by their *Config, which the collector creates once per receiver ID.
var instances = struct {
	sync.Mutex
	m map[*Config]*otlpReceiver
}{m: map[*Config]*otlpReceiver{}}

func shared(set receiver.Settings, cfg *Config) (*otlpReceiver, error) {
	instances.Lock()
	defer instances.Unlock()
	if r, ok := instances.m[cfg]; ok {
		return r, nil
	}
	r, err := newReceiver(set, cfg)
	if err != nil {
		return nil, err
	}
	r.release = func() {
		instances.Lock()
		delete(instances.m, cfg)
		instances.Unlock()
	}
	instances.m[cfg] = r
	return r, nil
}
