package forward

import (
	"sync"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

// arenaSize is the size of every line buffer: room for the longest line a
// connection delivers, a joined partial message of maxLine bytes plus what
// the skimmer keeps past them, and for large batches of short lines.
func arenaSize(maxLine int) int { return max(minArenaBytes, maxLine+stream.SkimOverflowBytes) }

// maxIdleArenas bounds the line buffers kept for connections that become
// busy again; more idle ones are left to the GC.
const maxIdleArenas = 8

// bufferPool hands out buffers of one size: the connections' line buffers
// (arenas), and the read buffers of the connections whose clients are
// ahead of them (streamReadSize). A connection holds one only while its
// client is sending: docker keeps a connection per container open for its
// whole life, mostly idle. Unlike a sync.Pool it is not emptied by every
// GC, which made busy connections allocate and zero a fresh buffer per GC
// cycle. It keeps at most maxIdle buffers.
type bufferPool struct {
	size, maxIdle int
	mu            sync.Mutex
	free          [][]byte
}

func (p *bufferPool) get() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
		return b
	}
	return make([]byte, 0, p.size)
}

func (p *bufferPool) put(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) < p.maxIdle && cap(b) == p.size {
		p.free = append(p.free, b[:0])
	}
}
