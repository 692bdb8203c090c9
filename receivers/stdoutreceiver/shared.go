package stdoutreceiver

import (
	"sync"

	"go.opentelemetry.io/collector/receiver"
)

// One receiver instance serves both the logs and the traces pipeline of a
// config (span lines arrive mixed with log lines on the same stream), as
// otlpreceiver does with the collector's internal sharedcomponent package,
// which other modules cannot import. Instances are keyed by their *Config,
// which the collector creates once per receiver ID.
var instances = struct {
	sync.Mutex
	m map[*Config]*stdoutReceiver
}{m: map[*Config]*stdoutReceiver{}}

func shared(set receiver.Settings, cfg *Config) (*stdoutReceiver, error) {
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
