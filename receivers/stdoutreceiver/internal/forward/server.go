// Package forward is the stdout receiver's Fluent Forward transport: a server
// for what docker's fluentd log driver and ECS FireLens send.
package forward

import (
	"context"

	"go.uber.org/zap"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

// Settings are what the receiver passes to the transport.
type Settings struct {
	Logger       *zap.Logger
	MaxLineBytes int
}

// Server accepts Fluent Forward connections on TCP and/or a unix socket.
type Server struct {
	cfg  Config
	set  Settings
	sink stream.Sink
}

// New checks cfg and returns a server that is not yet listening.
func New(cfg Config, set Settings, sink stream.Sink) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, set: set, sink: sink}, nil
}

// Start binds the listeners and serves in the background.
func (s *Server) Start(ctx context.Context) error { return nil }

// Shutdown stops accepting, closes the connections and waits for them.
func (s *Server) Shutdown(ctx context.Context) error { return nil }
