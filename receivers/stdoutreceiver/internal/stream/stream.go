// Package stream is the hand-off between the stdout receiver's transports
// (stdin, tailed files, Fluent Forward) and its line decoder: the Line,
// Batch and Sink they share, the default line limit, ErrStopped, and the
// Skimmer that keeps the structure of a line over the limit.
// streamtest records what a Sink was given, for the transports' tests.
package stream

import (
	"context"
	"errors"
	"time"
)

// DefaultMaxLineBytes is the default of max_line_bytes, the longest line a
// transport keeps whole: a line holding one value up to Axiom's 1 MB field
// limit keeps every field, as @axiomhq/pino would send it. Each transport
// holds up to this much per line being read (stdin: one; files: one per
// tailer; forward: one per connection that is sending).
const DefaultMaxLineBytes = 1 << 20

// JoinWindow is how long a transport may hold the lines of an app's writes
// for more before they go to the Sink together: an app writes a line, or a
// few, at a time, and every batch costs a pipeline call. stdin waits up to
// this long after a batch's first line; a Fluent Forward connection that
// gets one record per frame reads on a tick of this period. It bounds the
// latency the batching adds; 5 ms cost a Forward connection about three
// times the CPU per second at 1,000 lines/s (bench/COMPARISON.md).
const JoinWindow = 20 * time.Millisecond

// ErrStopped is what a Sink returns for a batch it did not deliver because
// the receiver is shutting down.
var ErrStopped = errors.New("stdout receiver is shutting down")

// Line is one line of an application's output, as a transport delivered it.
type Line struct {
	// Data is the line without its trailing newline. It is only valid until
	// the Sink it was passed to returns: the sink copies what it keeps.
	Data []byte
	// Time is when the container runtime saw the line (CRI, docker, forward);
	// zero when the transport has no timestamp of its own (stdin, raw files).
	Time time.Time
	// Stream is "stdout", "stderr" or "" when unknown.
	Stream string
	// Truncated is set when the transport cut the line at its size limit.
	Truncated bool
}

// Attr is a string attribute shared by every line of a Batch.
type Attr struct {
	Key, Value string
}

// AttrFilePath names the file a tailed batch was read from (the
// OpenTelemetry log.file.path).
const AttrFilePath = "log.file.path"

// Batch is a run of lines from one source.
type Batch struct {
	// Attrs describe the source: for example log.file.path for a tailed
	// file, container_name/container_id/fluent.tag for a forward client.
	Attrs []Attr
	Lines []Line
	// OneLine is set by a transport that cut its lines at every newline
	// (stdin, CRI and raw files): no line holds one, so the exporter need
	// not look for one in the events made of them (see rawevent).
	OneLine bool
	// Done, if set, runs once the batch is in the pipeline, or was dropped
	// and counted under a when_full drop policy: where a transport
	// acknowledges its client. It may run after the Sink returned (the
	// batch waits in memory meanwhile) and on another goroutine.
	Done func()
}

// Sink takes a batch into the pipeline. Under the block policy it blocks
// until the pipeline has accepted every line, retrying with backoff while
// the pipeline refuses (memory limiter, full queue), so a transport that
// waits on it stops reading its source; under a drop policy it returns at
// once and Batch.Done says when the batch is in (see package whenfull). It
// returns an error only at shutdown (ctx done, or ErrStopped); the batch
// was then not delivered, so the transport must not acknowledge it or
// commit its offset. "Accepted by the pipeline" means on disk with the
// persistent sending queue (every shipped config), and only in memory
// without it.
type Sink func(ctx context.Context, b Batch) error
