// Package fluentrecords turns Fluent records held in memory (a Fluent Bit
// output chunk: one tag's [time, record] or [[time, metadata], record]
// entries, with EventTime or integer times) into exactly the log records
// the stdout receiver makes of the same records arriving over Fluent
// Forward, through the same code: the forward transport's record reading
// (forward.Entries), then the JSON line decoder (decode). It is how the
// Fluent Bit output plugin, cmd/fluent-bit-axiom, reaches that code, which
// stays internal to the receiver.
//
// The caller passes the workload identity to put on every record's resource
// (the receiver's is internal/workload.Detect's). Differences from a
// sidecar: span lines stay log records (the plugin has no traces pipeline),
// and a docker partial message is joined only within one chunk.
package fluentrecords

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"

	"github.com/sidecarhq/sidecar/internal/workload"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/decode"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/forward"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

// Decoder reads chunks; it keeps its buffers from one to the next. It is not
// safe for concurrent use.
type Decoder struct {
	entries  *forward.Entries
	lines    *decode.Decoder
	out      plog.Logs // of the chunk being read
	now      time.Time
	resource []stream.Attr
}

// New returns a Decoder that keeps lines of up to maxLineBytes whole (0: the
// receiver's default, stream.DefaultMaxLineBytes) and puts identity on every
// record's resource.
func New(maxLineBytes int, logger *zap.Logger, identity []workload.Attr) *Decoder {
	d := &Decoder{lines: decode.New(decode.Options{})}
	for _, a := range identity {
		d.resource = append(d.resource, stream.Attr(a))
	}
	d.entries = forward.NewEntries(forward.Settings{Logger: logger, MaxLineBytes: maxLineBytes}, d.sink)
	return d
}

// Decode returns the log records of chunk, whose records carry tag as
// fluent.tag. now is the observed time, and the time of lines without one.
// A malformed entry ends the chunk with an error; the records before it are
// returned with it.
func (d *Decoder) Decode(tag string, chunk []byte, now time.Time) (plog.Logs, error) {
	d.out, d.now = plog.NewLogs(), now
	err := d.entries.Read(tag, chunk)
	out := d.out
	d.out = plog.Logs{}
	return out, err
}

// BadRecords counts the entries skipped so far because they held no line
// ("log" or "message") or were not [time, record] pairs.
func (d *Decoder) BadRecords() int64 { return d.entries.Stats().BadRecords }

func (d *Decoder) sink(_ context.Context, b stream.Batch) error {
	out := d.lines.Decode(b, d.resource, d.now)
	out.Logs.ResourceLogs().MoveAndAppendTo(d.out.ResourceLogs())
	return nil
}
