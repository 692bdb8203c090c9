package otlpreceiver

import (
	"io"
	"slices"
	"sync"
)

// Request bodies are read into pooled buffers. That is safe because pdata's
// UnmarshalProto copies every string and bytes field out of its input
// (pdata v1.71.0: string(buf[i:j]) and make+copy; ids are arrays), and
// UnmarshalJSON decodes into new values, so no pdata outlives its buffer.

// maxPooledBuf keeps an unusually large request from being pinned in the pool.
const maxPooledBuf = 4 << 20

var bufPool = sync.Pool{New: func() any { return new([]byte) }}

// getBuf returns an empty pooled buffer with room for n bytes.
func getBuf(n int) *[]byte {
	b := bufPool.Get().(*[]byte)
	*b = slices.Grow((*b)[:0], n)
	return b
}

func putBuf(b *[]byte) {
	if cap(*b) > maxPooledBuf {
		return
	}
	*b = (*b)[:0]
	bufPool.Put(b)
}

// readAll appends r's content to dst, as io.ReadAll does into a new slice.
func readAll(dst []byte, r io.Reader) ([]byte, error) {
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

// sameArray reports whether a and b are slices of one array: a filter may
// hand back its input instead of writing to dst.
func sameArray(a, b []byte) bool {
	return cap(a) > 0 && cap(b) > 0 && &a[:cap(a)][cap(a)-1] == &b[:cap(b)][cap(b)-1]
}
