package forward

import (
	"net"
	"syscall"
	"testing"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream/streamtest"
)

func rcvLowat(t *testing.T, c *net.TCPConn) int {
	t.Helper()
	v, err := lowatOf(c)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func lowatOf(c *net.TCPConn) (int, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var v int
	var gerr error
	if err := rc.Control(func(fd uintptr) {
		v, gerr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVLOWAT)
	}); err != nil {
		return 0, err
	}
	return v, gerr
}

// While a TCP connection pauses for more frames its receive mark is high,
// so that frames arriving meanwhile do not wake the sidecar one by one;
// whenever it waits for its client it is 1, so that an idle connection
// wakes for its first byte.
func TestPauseRaisesTheReceiveMarkOnlyMeanwhile(t *testing.T) {
	client, nc := tcpPair(t)
	sc := nc.(*net.TCPConn)

	col := streamtest.NewRecorder()
	s, err := New(Config{Endpoint: "127.0.0.1:0"}, Settings{}, col.Sink)
	if err != nil {
		t.Fatal(err)
	}
	var during []int
	s.pause = func() {
		v, err := lowatOf(sc)
		if err != nil {
			v = -1
		}
		during = append(during, v)
	}
	if _, err := client.Write(messageFrame("docker.api", 1, "", kv{"log", "one"})); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- newConn(s, sc, sc).serve() }()
	// The pause brought nothing more: "one" is delivered, and the
	// connection then waits for its client; closing ends serve.
	if got := col.Wait(t, 1); got[0].Data != "one" {
		t.Fatalf("lines %v", got)
	}
	client.(*net.TCPConn).CloseWrite()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if len(during) != 1 || during[0] != holdLowat {
		t.Fatalf("receive mark during the pauses: %v, want [%d]", during, holdLowat)
	}
	if after := rcvLowat(t, sc); after != 1 {
		t.Fatalf("receive mark while waiting for the client: %d, want 1", after)
	}
}
