package axiomtest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// maxBodyBytes bounds a decompressed body so a bad client cannot exhaust
// memory; WithMaxBodyBytes lowers it. Axiom's limit for /ingest is
// undocumented; its 4 MiB OTLP metrics limit shows it has one. 256 MiB
// leaves room for 10k large events.
const maxBodyBytes = 256 << 20

var (
	bufPool  = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	gzipPool sync.Pool // *gzip.Reader
	zstdPool = sync.Pool{New: func() any {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxBodyBytes))
		if err != nil {
			panic(err) // only fails on invalid options
		}
		return d
	}}
)

func getBuffer() *bytes.Buffer { return bufPool.Get().(*bytes.Buffer) }

func putBuffer(b *bytes.Buffer) {
	if b.Cap() > 64<<20 {
		return // let the occasional huge buffer go
	}
	b.Reset()
	bufPool.Put(b)
}

// bodyError is a request body the fake refuses, with the status to answer.
type bodyError struct {
	status int
	msg    string
}

func (e *bodyError) Error() string { return e.msg }

// readBody reads the whole request body, decoded per Content-Encoding
// (gzip, zstd or none), into a pooled buffer the caller must return; a body
// over limit bytes uncompressed is refused with 413.
func readBody(r *http.Request, limit int64) (*bytes.Buffer, error) {
	buf := getBuffer()
	var err error
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
		err = readLimited(buf, r.Body, limit)
	case "gzip":
		err = readGzip(buf, r.Body, limit)
	case "zstd":
		d := zstdPool.Get().(*zstd.Decoder)
		if err = d.Reset(r.Body); err == nil {
			err = readLimited(buf, d, limit)
		}
		_ = d.Reset(nil) // drop the reference to the body
		zstdPool.Put(d)
	default:
		putBuffer(buf)
		return nil, &bodyError{http.StatusBadRequest, fmt.Sprintf("unsupported content encoding %q (use gzip, zstd or none)", enc)}
	}
	if err != nil {
		putBuffer(buf)
		if be, ok := err.(*bodyError); ok {
			return nil, be
		}
		return nil, &bodyError{http.StatusBadRequest, "cannot read request body: " + err.Error()}
	}
	return buf, nil
}

func readGzip(buf *bytes.Buffer, body io.Reader, limit int64) error {
	z, _ := gzipPool.Get().(*gzip.Reader)
	if z == nil {
		z = new(gzip.Reader)
	}
	defer gzipPool.Put(z)
	if err := z.Reset(body); err != nil {
		return err
	}
	return readLimited(buf, z, limit)
}

func readLimited(buf *bytes.Buffer, r io.Reader, limit int64) error {
	n, err := buf.ReadFrom(io.LimitReader(r, limit+1))
	if err != nil {
		return err
	}
	if n > limit {
		return &bodyError{http.StatusRequestEntityTooLarge, fmt.Sprintf("request body exceeds %d bytes uncompressed", limit)}
	}
	return nil
}

// mediaType is the Content-Type without parameters, lower-cased.
func mediaType(h http.Header) string {
	ct, _, _ := strings.Cut(h.Get("Content-Type"), ";")
	return strings.ToLower(strings.TrimSpace(ct))
}
