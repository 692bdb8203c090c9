//go:build !linux

package rawconn

import "net"

// Wrap returns c: elsewhere than Linux, net.Conn's own calls are made.
func Wrap(c net.Conn) net.Conn { return c }
