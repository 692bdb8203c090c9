package forward

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tinylib/msgp/msgp"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

// startServer starts a server on 127.0.0.1:0 (and a unix socket in a temp
// dir when unix is true) and shuts it down at the end of the test.
func startServer(t *testing.T, unix bool, maxLine int, sink stream.Sink) (*Server, string, string) {
	t.Helper()
	cfg := Config{Endpoint: "127.0.0.1:0"}
	if unix {
		cfg.UnixSocket = filepath.Join(shortTempDir(t), "fluent.sock")
	}
	s, err := New(cfg, Settings{MaxLineBytes: maxLine}, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return s, s.Addrs()[0].String(), cfg.UnixSocket
}

// shortTempDir keeps unix socket paths under the 108-byte limit.
func shortTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "fwd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func dial(t *testing.T, network, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// tcpPair is a connected loopback TCP pair: the client's end and the
// server's (accepted) end, both closed when the test ends.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client = dial(t, "tcp", ln.Addr().String())
	server, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close() })
	return client, server
}

// Frame builders, written with msgp's low-level appenders the way a fluent
// client would encode them.

type kv = [2]string

func appendRecord(b []byte, fields ...kv) []byte {
	b = msgp.AppendMapHeader(b, uint32(len(fields)))
	for _, f := range fields {
		b = msgp.AppendString(b, f[0])
		b = msgp.AppendString(b, f[1])
	}
	return b
}

func appendEventTime(b []byte, t time.Time) []byte {
	b = append(b, 0xd7, 0x00)
	b = binary.BigEndian.AppendUint32(b, uint32(t.Unix()))
	return binary.BigEndian.AppendUint32(b, uint32(t.Nanosecond()))
}

func appendOption(b []byte, chunk string) []byte {
	if chunk == "" {
		return msgp.AppendMapHeader(b, 0)
	}
	b = msgp.AppendMapHeader(b, 2)
	b = msgp.AppendString(b, "chunk")
	b = msgp.AppendString(b, chunk)
	b = msgp.AppendString(b, "size")
	return msgp.AppendInt(b, 1)
}

// messageFrame is [tag, time, record, option] with an integer time.
func messageFrame(tag string, sec int64, chunk string, fields ...kv) []byte {
	b := msgp.AppendArrayHeader(nil, 4)
	b = msgp.AppendString(b, tag)
	b = msgp.AppendInt64(b, sec)
	b = appendRecord(b, fields...)
	return appendOption(b, chunk)
}

// entries encodes [time, record] entries with EventTime.
func entries(t0 time.Time, logs ...string) []byte {
	var b []byte
	for i, l := range logs {
		b = msgp.AppendArrayHeader(b, 2)
		b = appendEventTime(b, t0.Add(time.Duration(i)*time.Millisecond))
		b = appendRecord(b, kv{"log", l}, kv{"source", "stdout"})
	}
	return b
}

func forwardFrame(tag string, t0 time.Time, chunk string, logs ...string) []byte {
	b := msgp.AppendArrayHeader(nil, 3)
	b = msgp.AppendString(b, tag)
	b = msgp.AppendArrayHeader(b, uint32(len(logs)))
	b = append(b, entries(t0, logs...)...)
	return appendOption(b, chunk)
}

func packedFrame(tag string, t0 time.Time, chunk string, logs ...string) []byte {
	b := msgp.AppendArrayHeader(nil, 3)
	b = msgp.AppendString(b, tag)
	b = msgp.AppendBytes(b, entries(t0, logs...))
	return appendOption(b, chunk)
}

// compressedFrame gzips the entries as one gzip member per log, as Fluent
// Bit and fluentd may append several members.
func compressedFrame(tag string, t0 time.Time, chunk string, logs ...string) []byte {
	var payload bytes.Buffer
	for i, l := range logs {
		zw := gzip.NewWriter(&payload)
		_, _ = zw.Write(entries(t0.Add(time.Duration(i)*time.Millisecond), l))
		_ = zw.Close()
	}
	b := msgp.AppendArrayHeader(nil, 3)
	b = msgp.AppendString(b, tag)
	b = msgp.AppendBytes(b, payload.Bytes())
	b = msgp.AppendMapHeader(b, 2)
	b = msgp.AppendString(b, "chunk")
	b = msgp.AppendString(b, chunk)
	b = msgp.AppendString(b, "compressed")
	return msgp.AppendString(b, "gzip")
}

// readAck reads one {"ack": id} reply.
func readAck(t *testing.T, r *msgp.Reader) string {
	t.Helper()
	n, err := r.ReadMapHeader()
	if err != nil || n != 1 {
		t.Fatalf("ack header: n=%d err=%v", n, err)
	}
	if k, err := r.ReadString(); err != nil || k != "ack" {
		t.Fatalf("ack key %q: %v", k, err)
	}
	v, err := r.ReadString()
	if err != nil {
		t.Fatal(err)
	}
	return v
}
