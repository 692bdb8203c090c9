package otlpreceiver

import (
	"go.opentelemetry.io/collector/receiver"

	"github.com/sidecarhq/sidecar/internal/sharedinstance"
)

// instances holds one receiver per config, serving every pipeline it is in.
var instances sharedinstance.Map[Config, *otlpReceiver]

func shared(set receiver.Settings, cfg *Config) (*otlpReceiver, error) {
	r, release, err := instances.Get(cfg, func() (*otlpReceiver, error) { return newReceiver(set, cfg) })
	if err != nil {
		return nil, err
	}
	r.release = release
	return r, nil
}
