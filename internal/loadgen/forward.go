package loadgen

import (
	"encoding/binary"
	"time"

	"github.com/tinylib/msgp/msgp"
)

// ForwardMode is the Fluent Forward mode a client sends its frames in.
type ForwardMode int

const (
	// ForwardMessage is docker's fluentd log driver: one [tag, time,
	// record] frame per line.
	ForwardMessage ForwardMode = iota
	// ForwardBatch is FireLens (Fluent Bit's forward output): [tag,
	// [[time, record], ...]] frames of ForwardBatchLines lines each.
	ForwardBatch
)

// ForwardBatchLines is how many lines a ForwardBatch frame carries: small
// batches, as a flushing Fluent Bit sends under steady load.
const ForwardBatchLines = 16

// Forward encodes Fluent Forward frames of Pino lines with msgp's append
// functions, records shaped as the senders write them: docker's
// container_id, container_name and source beside log, and FireLens's
// ecs_* fields too. It is not safe for concurrent use.
type Forward struct {
	mode  ForwardMode
	gen   *Pino
	tag   string
	attrs [][2]string // the record's fields besides log
	buf   []byte
	line  []byte
}

// NewForward returns an encoder of mode frames whose lines are those of
// NewPino(seed).
func NewForward(mode ForwardMode, seed uint64) *Forward {
	e := &Forward{mode: mode, gen: NewPino(seed)}
	if mode == ForwardMessage {
		e.tag = "docker.api"
		e.attrs = [][2]string{{"container_id", "4f3a2b9c1d7e"}, {"container_name", "/api"}, {"source", "stdout"}}
	} else {
		e.tag = "api-firelens-4f3a2b9c1d7e4b1f"
		e.attrs = [][2]string{{"container_id", "4f3a2b9c1d7e"}, {"container_name", "api"}, {"source", "stdout"},
			{"ecs_cluster", "prod"}, {"ecs_task_arn", "arn:aws:ecs:eu-west-1:123456789012:task/prod/4f3a2b9c1d7e4b1f"},
			{"ecs_task_definition", "api:42"}}
	}
	return e
}

// Frame encodes one frame stamped now and returns it with the lines it
// holds; it is valid until the next call.
func (e *Forward) Frame(now time.Time) ([]byte, int) {
	b := e.buf[:0]
	lines := 1
	if e.mode == ForwardMessage {
		b = msgp.AppendArrayHeader(b, 3)
		b = msgp.AppendString(b, e.tag)
		b = e.entry(b, now, false)
	} else {
		lines = ForwardBatchLines
		b = msgp.AppendArrayHeader(b, 2)
		b = msgp.AppendString(b, e.tag)
		b = msgp.AppendArrayHeader(b, uint32(lines))
		for range lines {
			b = e.entry(b, now, true)
		}
	}
	e.buf = b
	return b, lines
}

// entry appends time and record, as an [time, record] array when wrapped.
func (e *Forward) entry(b []byte, now time.Time, wrapped bool) []byte {
	if wrapped {
		b = msgp.AppendArrayHeader(b, 2)
	}
	// EventTime: extension type 0, seconds and nanoseconds big-endian.
	b = append(b, 0xd7, 0x00)
	b = binary.BigEndian.AppendUint32(b, uint32(now.Unix()))
	b = binary.BigEndian.AppendUint32(b, uint32(now.Nanosecond()))
	b = msgp.AppendMapHeader(b, uint32(len(e.attrs)+1))
	for _, a := range e.attrs {
		b = msgp.AppendString(b, a[0])
		b = msgp.AppendString(b, a[1])
	}
	e.line = e.gen.Append(e.line[:0], now)
	b = msgp.AppendString(b, "log")
	return msgp.AppendStringFromBytes(b, e.line[:len(e.line)-1])
}

// PreEncoded returns distinct frames stamped now holding at least lines
// lines in all, and the lines per frame: a load generator that sends them
// over and over spends nothing on encoding while it is measured.
func (e *Forward) PreEncoded(now time.Time, lines int) ([][]byte, int) {
	var frames [][]byte
	per := 0
	for total := 0; total < lines; total += per {
		var f []byte
		f, per = e.Frame(now)
		frames = append(frames, append([]byte(nil), f...))
	}
	return frames, per
}
