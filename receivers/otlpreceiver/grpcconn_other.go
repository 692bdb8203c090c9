//go:build !linux

package otlpreceiver

import (
	"net"
	"time"
)

// wrapGRPC returns connections as they are: elsewhere than Linux gRPC makes
// net.Conn's own calls.
func wrapGRPC(time.Duration) func(net.Conn) net.Conn {
	return func(c net.Conn) net.Conn { return c }
}
