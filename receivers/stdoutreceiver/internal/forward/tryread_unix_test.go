//go:build unix

package forward

import (
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

func TestWaitReadWaitsForTheClientAndEndsAsReadDoes(t *testing.T) {
	if newWaitRead(strings.NewReader("x")) != nil {
		t.Fatal("a reader that is not a socket got a raw read")
	}
	client, nc := tcpPair(t)
	read := newWaitRead(nc)
	p := make([]byte, 16)

	// Nothing there yet: it waits in the poller until the client writes.
	go func() {
		time.Sleep(30 * time.Millisecond)
		_, _ = client.Write([]byte("abc"))
	}()
	if n, err := read(p); err != nil || string(p[:n]) != "abc" {
		t.Fatalf("read %q, %v; want \"abc\"", p[:n], err)
	}
	// The shutdown deadline ends the wait.
	if err := nc.SetReadDeadline(time.Now().Add(30 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := read(p); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("past the deadline: %v", err)
	}
	if err := nc.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	// The client closing ends it with io.EOF.
	client.(*net.TCPConn).CloseWrite()
	if _, err := read(p); err != io.EOF {
		t.Fatalf("after the client closed: %v, want io.EOF", err)
	}
}
