package forward

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/whenfull"
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
	// "" disables it. Its directory is created if missing and a stale
	// socket from an earlier run is replaced.
	UnixSocket string `mapstructure:"unix_socket"`
	// UnixSocketMode is the socket's permission bits (as Fluent Bit's
	// unix_perm). Connecting needs write permission, and whoever can connect
	// can inject records into the app's log stream, so the default is 0600:
	// only the sidecar's user (root in the image), which is the user docker's
	// daemon and the ECS agent connect as. 0 means the default.
	UnixSocketMode SocketMode `mapstructure:"unix_socket_mode"`
	// WhenFull is what happens while the pipeline refuses records: by
	// default the oldest waiting batches are dropped (counted, and then
	// acknowledged), so that a client is never held up.
	WhenFull whenfull.Policy `mapstructure:"when_full"`
}

// DefaultSocketMode lets only the socket's owner connect.
const DefaultSocketMode SocketMode = 0o600

// SocketMode is a unix file mode written in octal: `0660` in YAML (an octal
// number) or `"0660"` (a string) both mean rw for owner and group.
type SocketMode uint32

// UnmarshalText reads a string as octal, with or without a leading 0 or 0o.
func (m *SocketMode) UnmarshalText(b []byte) error {
	s := strings.TrimPrefix(strings.TrimPrefix(string(b), "0o"), "0O")
	v, err := strconv.ParseUint(s, 8, 32)
	if err != nil {
		return fmt.Errorf("unix_socket_mode %q is not an octal mode such as 0600", b)
	}
	*m = SocketMode(v)
	return nil
}

// String prints the mode the way it is written in the config.
func (m SocketMode) String() string { return fmt.Sprintf("%#o", uint32(m)) }

// DefaultEndpoint is the Fluent Forward port on loopback.
const DefaultEndpoint = "127.0.0.1:24224"

// NewDefaultConfig returns TCP on 127.0.0.1:24224 and no unix socket.
func NewDefaultConfig() Config {
	return Config{Endpoint: DefaultEndpoint, UnixSocketMode: DefaultSocketMode, WhenFull: whenfull.DropOldest}
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
	// Without owner write the socket's own user could not connect; above
	// 0777 is not a permission (a decimal 600 written for 0600 lands here).
	if m := c.UnixSocketMode; m != 0 && (m > 0o777 || m&0o200 == 0) {
		return fmt.Errorf("forward: unix_socket_mode %v must be a permission between 0200 and 0777 with owner write, such as 0600 or 0660", c.UnixSocketMode)
	}
	return nil
}
