package forward

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

// pacedReader serves data in reads that fill the buffer (a client ahead of
// the connection) for fullReads reads, then in reads of at most
// trickleBytes for trickleReads reads (a client that fell behind), and
// again.
type pacedReader struct {
	data                    []byte
	fullReads, trickleReads int
	trickleBytes            int
	reads                   int
}

func (r *pacedReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	if r.reads++; r.reads%(r.fullReads+r.trickleReads) >= r.fullReads {
		p = p[:min(len(p), r.trickleBytes)]
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// A connection reads through the large buffer while its client is ahead
// and through the small one again once it has caught up, again and again,
// and every record arrives once, in order, whatever frame it came in and
// wherever a switch fell: mid-frame bytes the small buffer held are read
// again through the large one. The large buffer goes back to the pool.
func TestReadBufferFollowsTheClient(t *testing.T) {
	t0 := time.Unix(1767225600, 0)
	var data []byte
	var want []string
	next := func() string {
		l := fmt.Sprintf("line %06d %s", len(want), strings.Repeat("x", len(want)%300))
		want = append(want, l)
		return l
	}
	for len(data) < 6*streamReadSize {
		switch len(want) % 5 {
		case 0, 1, 2: // FireLens-style: 16 records of one shape
			records := make([][]kv, 16)
			for i := range records {
				records[i] = firelens("/api", next(), "t1")
			}
			data = append(data, forwardRecords("fl", t0, records...)...)
		case 3:
			data = append(data, messageFrame("d", t0.Unix(), "", kv{"log", next()}, kv{"source", "stdout"})...)
		case 4:
			data = append(data, packedFrame("pk", t0, "", next(), next())...)
			data = append(data, compressedFrame("gz", t0, "", next())...)
		}
	}

	var got []string
	var c *conn
	var sawLarge, sawSmallAfter bool
	sink := func(_ context.Context, b stream.Batch) error {
		for _, l := range b.Lines {
			got = append(got, string(l.Data))
		}
		if c.streamBuf != nil {
			sawLarge = true
		} else if sawLarge {
			sawSmallAfter = true
		}
		return nil
	}
	s, err := New(Config{Endpoint: "127.0.0.1:0"}, Settings{}, sink)
	if err != nil {
		t.Fatal(err)
	}
	r := &pacedReader{data: data, fullReads: 4, trickleReads: 40, trickleBytes: 3000}
	c = newConn(s, r, io.Discard)
	if err := c.serve(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		t.Fatalf("got %d lines, want %d; first difference at line %d", len(got), len(want), i)
	}
	if !sawLarge || !sawSmallAfter {
		t.Errorf("read through the large buffer: %v, then through the small one again: %v", sawLarge, sawSmallAfter)
	}
	if n := len(s.readBufs.free); n != 1 {
		t.Errorf("%d large buffers back in the pool, want 1", n)
	}
}

// A client that never gets ahead (a read never fills the buffer) is read
// through the small buffer only.
func TestSlowClientKeepsTheSmallReadBuffer(t *testing.T) {
	var data []byte
	for i := range 2000 {
		data = append(data, messageFrame("d", 1, "", kv{"log", fmt.Sprintf("line %d", i)})...)
	}
	s, err := New(Config{Endpoint: "127.0.0.1:0"}, Settings{}, func(context.Context, stream.Batch) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	c := newConn(s, &pacedReader{data: data, fullReads: 0, trickleReads: 1, trickleBytes: 1000}, io.Discard)
	var large bool
	c.s.sink = func(context.Context, stream.Batch) error {
		large = large || c.streamBuf != nil
		return nil
	}
	if err := c.serve(); err != nil {
		t.Fatal(err)
	}
	if large || len(s.readBufs.free) != 0 {
		t.Errorf("a client that never got ahead was read through the large buffer")
	}
	if st := s.Stats(); st.Records != 2000 {
		t.Errorf("%d records, want 2000", st.Records)
	}
}
