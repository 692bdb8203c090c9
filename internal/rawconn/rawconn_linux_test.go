package rawconn

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Every test runs on a plain *net.TCPConn and on the same connection
// wrapped, and checks what net.Conn promises: the wrapped one must behave
// the same.
var kinds = []struct {
	name string
	wrap func(net.Conn) net.Conn
}{
	{"net.Conn", func(c net.Conn) net.Conn { return c }},
	{"raw", Wrap},
}

// tcpPair is a connected loopback pair: the client side as kind makes it,
// the server side plain.
func tcpPair(t *testing.T, wrap func(net.Conn) net.Conn) (client net.Conn, server *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	client = wrap(c)
	t.Cleanup(func() { client.Close(); s.Close() })
	return client, s.(*net.TCPConn)
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{1})
	r.Read(b)
	return b
}

func TestWrapMakesOnlyTCPConnectionsRaw(t *testing.T) {
	c, _ := tcpPair(t, Wrap)
	if _, ok := c.(*Conn); !ok {
		t.Fatalf("Wrap(TCP) = %T, want *Conn", c)
	}
	p1, p2 := net.Pipe()
	defer p1.Close()
	defer p2.Close()
	if got := Wrap(p1); got != p1 {
		t.Fatalf("Wrap(pipe) = %T, want the pipe itself", got)
	}
}

func TestReadGetsWhatThePeerSentThenEOF(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			c, s := tcpPair(t, k.wrap)
			want := randomBytes(3 << 20)
			go func() {
				s.Write(want)
				s.Close() // mid-stream from the reader's side: it still has most of it to read
			}()
			if n, err := c.Read(nil); n != 0 || err != nil {
				t.Fatalf("empty Read = %d, %v; want 0, nil", n, err)
			}
			got, err := io.ReadAll(c)
			if err != nil {
				t.Fatalf("ReadAll: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("read %d bytes, not the %d sent", len(got), len(want))
			}
			if n, err := c.Read(make([]byte, 10)); n != 0 || err != io.EOF {
				t.Fatalf("Read after the end = %d, %v; want 0, io.EOF", n, err)
			}
		})
	}
}

// A write far larger than the socket buffers takes many write(2)s, most of
// them short, with waits in the poller between them.
func TestLargeWriteThroughSmallBuffersWritesEverything(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			c, s := tcpPair(t, k.wrap)
			setBuffers(t, c, s, 32<<10)
			want := randomBytes(8 << 20)
			got := make(chan []byte)
			go func() {
				var b bytes.Buffer
				buf := make([]byte, 16<<10)
				for b.Len() < len(want) {
					n, err := s.Read(buf)
					b.Write(buf[:n])
					if err != nil {
						break
					}
				}
				got <- b.Bytes()
			}()
			n, err := c.Write(want)
			if n != len(want) || err != nil {
				t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(want))
			}
			if b := <-got; !bytes.Equal(b, want) {
				t.Fatalf("peer read %d bytes, not the %d written", len(b), len(want))
			}
		})
	}
}

func setBuffers(t *testing.T, c net.Conn, s *net.TCPConn, size int) {
	t.Helper()
	var tc *net.TCPConn
	switch c := c.(type) {
	case *net.TCPConn:
		tc = c
	case *Conn:
		tc = c.Conn.(*net.TCPConn)
	}
	if err := tc.SetWriteBuffer(size); err != nil {
		t.Fatal(err)
	}
	if err := s.SetReadBuffer(size); err != nil {
		t.Fatal(err)
	}
}

func TestReadDeadlineFiresAndCanBeMoved(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			c, s := tcpPair(t, k.wrap)
			c.SetReadDeadline(time.Now().Add(30 * time.Millisecond))
			start := time.Now()
			n, err := c.Read(make([]byte, 10))
			wantTimeout(t, "read", n, err)
			if waited := time.Since(start); waited < 25*time.Millisecond {
				t.Fatalf("Read returned after %v, before its deadline", waited)
			}
			// Past the deadline, reads keep failing until it moves.
			if _, err := c.Read(make([]byte, 10)); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("second Read: %v, want the deadline again", err)
			}
			c.SetReadDeadline(time.Time{})
			s.Write([]byte("hello"))
			b := make([]byte, 10)
			if n, err := c.Read(b); err != nil || string(b[:n]) != "hello" {
				t.Fatalf("Read after clearing the deadline = %q, %v", b[:n], err)
			}
		})
	}
}

func TestWriteDeadlineFiresWhenThePeerDoesNotRead(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			c, s := tcpPair(t, k.wrap)
			setBuffers(t, c, s, 4096)
			big := randomBytes(16 << 20)
			c.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
			n, err := c.Write(big)
			wantTimeout(t, "write", 0, err)
			if n <= 0 || n >= len(big) {
				t.Fatalf("Write wrote %d of %d bytes before its deadline, want some", n, len(big))
			}
		})
	}
}

func wantTimeout(t *testing.T, op string, n int, err error) {
	t.Helper()
	var ne net.Error
	var oe *net.OpError
	switch {
	case n != 0:
		t.Fatalf("%s past its deadline returned %d bytes", op, n)
	case !errors.Is(err, os.ErrDeadlineExceeded):
		t.Fatalf("%s error %v, want os.ErrDeadlineExceeded", op, err)
	case !errors.As(err, &ne) || !ne.Timeout():
		t.Fatalf("%s error %v is not a net.Error that timed out", op, err)
	case !errors.As(err, &oe) || oe.Op != op:
		t.Fatalf("%s error %#v, want a net.OpError with Op %q", op, err, op)
	}
}

func TestCloseEndsABlockedRead(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			c, _ := tcpPair(t, k.wrap)
			done := make(chan error)
			go func() {
				_, err := c.Read(make([]byte, 10))
				done <- err
			}()
			time.Sleep(20 * time.Millisecond)
			c.Close()
			select {
			case err := <-done:
				var oe *net.OpError
				if !errors.Is(err, net.ErrClosed) || !errors.As(err, &oe) || oe.Op != "read" {
					t.Fatalf("blocked Read ended with %#v, want net.ErrClosed in a read OpError", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Close did not end the blocked Read")
			}
			if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
				t.Fatalf("Write after Close: %v, want net.ErrClosed", err)
			}
		})
	}
}

func TestResetAndBrokenPipeAreSyscallErrors(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			c, s := tcpPair(t, k.wrap)
			s.SetLinger(0) // close sends a reset
			s.Close()
			time.Sleep(20 * time.Millisecond)
			_, err := c.Read(make([]byte, 10))
			wantSyscallError(t, "read", err, syscall.ECONNRESET)
			// After the reset the socket is gone: a write fails (EPIPE,
			// without killing the process with SIGPIPE).
			_, err = c.Write([]byte("after the reset"))
			wantSyscallError(t, "write", err, syscall.EPIPE)
		})
	}
}

func wantSyscallError(t *testing.T, op string, err error, errno syscall.Errno) {
	t.Helper()
	var oe *net.OpError
	var se *os.SyscallError
	if !errors.Is(err, errno) || !errors.As(err, &oe) || oe.Op != op || !errors.As(err, &se) || se.Syscall != op {
		t.Fatalf("%s error %#v, want %v in an os.SyscallError %q in a net.OpError", op, err, errno, op)
	}
}

// A real HTTP server, in plain text and over TLS (which wraps the raw
// connection), with request and response bodies far larger than a socket
// buffer; and a server that hangs up in the middle of its answer.
func TestHTTPOverRawConnections(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/echo-sum", func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		n, _ := io.Copy(h, r.Body)
		w.Header().Set("X-Body-Sum", hex.EncodeToString(h.Sum(nil)))
		w.Header().Set("X-Body-Len", strconv.FormatInt(n, 10))
		w.Write(randomBytes(5 << 20))
	})
	mux.HandleFunc("/hang-up", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(1<<20))
		w.Write(randomBytes(100 << 10))
		w.(http.Flusher).Flush()
		c, _, _ := w.(http.Hijacker).Hijack()
		c.Close()
	})
	for _, server := range []*httptest.Server{httptest.NewServer(mux), httptest.NewTLSServer(mux)} {
		defer server.Close()
		tr := server.Client().Transport.(*http.Transport).Clone()
		dial := (&net.Dialer{}).DialContext
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return Wrap(c), nil
		}
		client := &http.Client{Transport: tr}
		t.Run(server.URL[:5], func(t *testing.T) {
			body := randomBytes(7<<20 + 13)
			var used net.Conn
			trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { used = i.Conn }}
			req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace),
				http.MethodPost, server.URL+"/echo-sum", bytes.NewReader(body))
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			answer, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			sum := sha256.Sum256(body)
			switch {
			case err != nil:
				t.Fatalf("reading the answer: %v", err)
			case !bytes.Equal(answer, randomBytes(5<<20)):
				t.Fatalf("answer of %d bytes is not what the server sent", len(answer))
			case resp.Header.Get("X-Body-Sum") != hex.EncodeToString(sum[:]):
				t.Fatalf("server read %s bytes that differ from the %d sent", resp.Header.Get("X-Body-Len"), len(body))
			}
			if tc, ok := used.(*tls.Conn); ok {
				used = tc.NetConn()
			}
			if _, ok := used.(*Conn); !ok {
				t.Fatalf("the request went over a %T, not a raw connection", used)
			}

			resp, err = client.Get(server.URL + "/hang-up")
			if err != nil {
				t.Fatal(err)
			}
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("body cut short by the server: %v, want io.ErrUnexpectedEOF", err)
			}
		})
	}
}

// ReadReady takes what a pipe holds without waiting, whatever its read
// deadline: nothing (not ok) from an empty pipe, the bytes written, and
// io.EOF once the writer closed.
func TestReadReady(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	rc, err := pr.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 16)
	if n, err, ok := ReadReady(rc, p); ok {
		t.Fatalf("an empty pipe gave %d bytes, %v", n, err)
	}
	if _, err := pw.WriteString("hello"); err != nil {
		t.Fatal(err)
	}
	if err := pr.SetReadDeadline(time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if n, err, ok := ReadReady(rc, p); !ok || err != nil || string(p[:n]) != "hello" {
		t.Fatalf("got %q, %v, %v; want hello past the read deadline", p[:n], err, ok)
	}
	pw.Close()
	if _, err, ok := ReadReady(rc, p); !ok || err != io.EOF {
		t.Fatalf("after close: %v, %v; want io.EOF", err, ok)
	}
}

// CloseWrite sends the peer an end of stream while the connection can still
// read what the peer sends: an HTTP server's half-close.
func TestCloseWriteEndsThePeersReadAndKeepsReading(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			c, s := tcpPair(t, k.wrap)
			cw, ok := c.(interface{ CloseWrite() error })
			if !ok {
				t.Fatalf("%T has no CloseWrite", c)
			}
			c.Write([]byte("last words"))
			if err := cw.CloseWrite(); err != nil {
				t.Fatalf("CloseWrite: %v", err)
			}
			got, err := io.ReadAll(s)
			if err != nil || string(got) != "last words" {
				t.Fatalf("peer read %q, %v; want the words, then EOF", got, err)
			}
			s.Write([]byte("reply"))
			b := make([]byte, 10)
			if n, err := c.Read(b); err != nil || string(b[:n]) != "reply" {
				t.Fatalf("Read after CloseWrite = %q, %v", b[:n], err)
			}
		})
	}
}
