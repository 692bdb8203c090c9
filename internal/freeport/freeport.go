// Package freeport hands tests a 127.0.0.1 port that stays theirs until
// they end, for a server that takes its address from config and binds it
// itself (the sidecar binary, redis-server, a Node app, a receiver).
//
// A port the kernel picked for a listener that the test then closed is
// not safe: the kernel hands the same range out again, to any process's
// next bind to port 0 or outgoing connection, and on a machine running
// several test binaries at once one of them takes the port before the
// process under test binds it, or while a test restarts that process on
// the same ports. So ports are taken from below the kernel's ephemeral
// range (net.ipv4.ip_local_port_range), which only explicit binds use,
// and each is claimed by an flock on a file in the temp dir that the test
// holds until it ends: concurrent test processes, in this repository or a
// copy of it, never get the same port.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// lowest is the first port handed out; the ports below it are left to
// well-known services (the sidecar's defaults 4317, 4318, 8888, 13133 and
// 24224 among them).
const lowest = 20000

// Addr returns "127.0.0.1:port" for a port that nothing listens on now and
// that no other caller of Addr, in this process or another, gets until t
// ends.
func Addr(t testing.TB) string {
	t.Helper()
	highest := ephemeralStart() - 1
	dir := filepath.Join(os.TempDir(), "sidecar-test-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(dir, 0o777|os.ModeSticky) // shared by every user's tests, like /tmp
	for range 1000 {
		port := lowest + rand.IntN(highest-lowest+1)
		lock, ok := claim(dir, port)
		if !ok {
			continue
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		ln, err := net.Listen("tcp", addr)
		if err != nil { // an explicit bind by something that does not claim
			lock.Close()
			continue
		}
		ln.Close()
		t.Cleanup(func() { lock.Close() }) // closing the file releases the flock
		return addr
	}
	t.Fatalf("freeport: no free port in %d-%d after 1000 tries", lowest, highest)
	return ""
}

// claim takes the lock of port, or reports false when another holder has it.
func claim(dir string, port int) (*os.File, bool) {
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)), os.O_CREATE|os.O_RDONLY, 0o666)
	if err != nil {
		return nil, false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, false
	}
	return f, true
}

// ephemeralStart is the first port of the kernel's ephemeral range, or
// Linux's default 32768 when it cannot be read or leaves too little room
// below it.
func ephemeralStart() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	var first int
	if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &first); err != nil || first <= lowest+1000 {
		return 32768
	}
	return first
}
