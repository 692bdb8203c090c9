package axiomexporter

import (
	"sync"

	"github.com/klauspost/compress/zstd"
)

// encoder is one worker's reusable state: the NDJSON buffer, the zstd
// output buffer, a single-threaded zstd encoder and a goroutine to push on
// (see run).
type encoder struct {
	events     []byte
	ends       []int // end offset of each event in events
	carry      []byte
	compressed []byte
	resource   []byte
	shared     []byte
	head       []byte
	attrs      attrsJSON
	zstd       *zstd.Encoder
	// work carries run's functions to the encoder's goroutine, and done
	// says each has returned; closing work ends the goroutine.
	work chan func()
	done chan struct{}
}

func newEncoder() *encoder {
	z, err := zstd.NewWriter(nil,
		zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderLevel(zstd.SpeedFastest),
		// The size of one block: measured on pino request logs (bench
		// lines and internal/loadgen's), 5-10% less CPU than 256 KiB for
		// the same bytes out (1 MiB was no better either); 64 KiB and less
		// compress worse.
		zstd.WithWindowSize(128<<10),
		// No content checksum (xxhash of every byte, 1.5-2% of the stdin
		// path's CPU): it is optional in zstd's frame format, and TLS
		// already protects the bytes in transit.
		zstd.WithEncoderCRC(false),
		// An empty input is a frame of no content (the default, said
		// here because check_token's body depends on it): an empty body
		// is not zstd to the reference decoder.
		zstd.WithZeroFrames(true),
		zstd.WithLowerEncoderMem(true))
	if err != nil {
		panic(err) // only invalid options fail, and these are constant
	}
	enc := &encoder{zstd: z, work: make(chan func()), done: make(chan struct{})}
	go enc.serve()
	return enc
}

// run calls f on the encoder's own goroutine and returns once f has.
//
// Pushes run there because exporterhelper's batcher starts a goroutine for
// each batch it sends, whose small first stack the push (the walk, zstd's
// frames, the HTTP client) then grew by copying several times a request
// (~35,000 instructions each, 1.5-2% of the Fluent Forward path's CPU at
// 20k lines/s). The encoder's goroutine keeps its grown stack from push to
// push.
func (enc *encoder) run(f func()) {
	enc.work <- f
	<-enc.done
}

func (enc *encoder) serve() {
	for f := range enc.work {
		f()
		enc.done <- struct{}{}
	}
}

// close ends the encoder's goroutine; the encoder is not used after.
func (enc *encoder) close() { close(enc.work) }

// encoderPool keeps a bounded free list of encoders. Unlike sync.Pool it
// does not drop them at every GC, and a zstd encoder is costly to rebuild.
// Every get is paired with a put, which closes what the pool does not keep,
// so that no encoder's goroutine outlives the exporter.
type encoderPool struct {
	free   chan *encoder
	mu     sync.Mutex // serializes put with close
	closed bool
}

// maxPooledBuffer keeps one unusually large batch from pinning its memory.
const maxPooledBuffer = 16 << 20

func newEncoderPool() *encoderPool { return &encoderPool{free: make(chan *encoder, 8)} }

func (p *encoderPool) get() *encoder {
	select {
	case enc := <-p.free:
		return enc
	default:
		return newEncoder()
	}
}

func (p *encoderPool) put(enc *encoder) {
	enc.attrs.forget()
	if cap(enc.events) > maxPooledBuffer {
		enc.events = nil
	}
	if cap(enc.compressed) > maxPooledBuffer {
		enc.compressed = nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		select {
		case p.free <- enc:
			return
		default:
		}
	}
	enc.close()
}

// close closes the free encoders, and from then on every one put back.
func (p *encoderPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for {
		select {
		case enc := <-p.free:
			enc.close()
		default:
			return
		}
	}
}
