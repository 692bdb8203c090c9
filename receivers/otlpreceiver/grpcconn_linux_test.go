package otlpreceiver

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc/mem"

	"github.com/sidecarhq/sidecar/internal/rawconn"
)

// acceptOne makes a loopback connection and returns the client side and
// the server side as the listener wrapped it.
func acceptOne(t *testing.T, wrap func(net.Conn) net.Conn) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err = rawListener{Listener: ln, wrap: wrap}.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

func TestHTTPConnectionsAreRaw(t *testing.T) {
	_, s := acceptOne(t, rawconn.Wrap)
	if _, ok := s.(*rawconn.Conn); !ok {
		t.Fatalf("accepted %T, want *rawconn.Conn", s)
	}
}

// countingPool is gRPC's default pool, counting the buffers out.
type countingPool struct {
	mem.BufferPool
	out int
}

func (p *countingPool) Get(n int) *[]byte { p.out++; return p.BufferPool.Get(n) }
func (p *countingPool) Put(b *[]byte)     { p.out--; p.BufferPool.Put(b) }

func TestGRPCConnectionsAreRawAndReadOnReady(t *testing.T) {
	c, s := acceptOne(t, wrapGRPC(7*time.Second))
	g, ok := s.(*grpcConn)
	if !ok {
		t.Fatalf("accepted %T, want *grpcConn", s)
	}
	if _, ok := g.Conn.(*rawconn.Conn); !ok {
		t.Fatalf("grpcConn over %T, want *rawconn.Conn", g.Conn)
	}
	var timeout int
	_ = g.rc.Control(func(fd uintptr) {
		timeout, _ = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT)
	})
	if timeout != 7000 {
		t.Errorf("TCP_USER_TIMEOUT %d ms, want the keepalive timeout, 7000", timeout)
	}

	pool := &countingPool{BufferPool: mem.DefaultBufferPool()}
	go func() {
		time.Sleep(20 * time.Millisecond) // the read waits for it
		c.Write([]byte("hello"))
	}()
	buf, n, err := g.ReadOnReady(64, pool)
	if err != nil || string((*buf)[:n]) != "hello" {
		t.Fatalf("ReadOnReady = %q, %v; want hello", (*buf)[:n], err)
	}
	if pool.out != 1 {
		t.Fatalf("%d buffers out of the pool, want the one returned", pool.out)
	}
	pool.Put(buf)

	g.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	if buf, _, err := g.ReadOnReady(64, pool); buf != nil || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("ReadOnReady past the deadline = %v, %v; want os.ErrDeadlineExceeded", buf, err)
	}
	g.SetReadDeadline(time.Time{})

	c.Close()
	if buf, n, err := g.ReadOnReady(64, pool); buf != nil || n != 0 || err != io.EOF {
		t.Fatalf("ReadOnReady after the peer closed = %v, %d, %v; want nil, 0, io.EOF", buf, n, err)
	}
	if pool.out != 0 {
		t.Fatalf("%d buffers out of the pool after a deadline and EOF, want 0", pool.out)
	}
}

func TestKeepaliveTimeoutIsConfiguredOrGRPCsDefault(t *testing.T) {
	cfg := testConfig(t).Protocols.GRPC.Get()
	if got := keepaliveTimeout(cfg); got != 20*time.Second {
		t.Errorf("default: %v, want 20s", got)
	}
	cfg.Keepalive.GetOrInsertDefault().ServerParameters.GetOrInsertDefault().Timeout = 3 * time.Second
	if got := keepaliveTimeout(cfg); got != 3*time.Second {
		t.Errorf("configured 3s: %v", got)
	}
}
