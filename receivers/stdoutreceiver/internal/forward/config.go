package forward

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
)

// Config is the Fluent Forward transport's configuration (YAML under
// receivers.stdout.forward).
type Config struct {
	// Endpoint is the TCP listen address; "" disables TCP. The default binds
	// to loopback only: in an ECS awsvpc task and in docker-compose with a
	// published 127.0.0.1 port that is all the clients need. ECS bridge
	// mode, where apps reach the router by its IP, needs 0.0.0.0:24224.
	Endpoint string `mapstructure:"endpoint"`
	// UnixSocket is the path of a unix socket to listen on, e.g.
	// /var/run/fluent.sock where FireLens points the app's log driver;
	// "" disables it. Its directory is created if missing, a stale socket
	// from an earlier run is replaced, and the socket is made writable by
	// every user (mode 0666) so clients in other containers can connect.
	UnixSocket string `mapstructure:"unix_socket"`
}

// DefaultEndpoint is the Fluent Forward port on loopback.
const DefaultEndpoint = "127.0.0.1:24224"

// NewDefaultConfig returns TCP on 127.0.0.1:24224 and no unix socket.
func NewDefaultConfig() Config {
	return Config{Endpoint: DefaultEndpoint}
}

// Validate checks the addresses without binding them.
func (c *Config) Validate() error {
	if c.Endpoint == "" && c.UnixSocket == "" {
		return errors.New("forward: set endpoint, unix_socket or both")
	}
	if c.Endpoint != "" {
		if _, _, err := net.SplitHostPort(c.Endpoint); err != nil {
			return fmt.Errorf("forward: endpoint %q: %w", c.Endpoint, err)
		}
	}
	if c.UnixSocket != "" && !filepath.IsAbs(c.UnixSocket) {
		return fmt.Errorf("forward: unix_socket %q must be an absolute path", c.UnixSocket)
	}
	return nil
}
