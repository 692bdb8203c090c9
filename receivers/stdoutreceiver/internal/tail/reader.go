package tail

import (
	"bytes"
	"context"
	"io"
	"os"
	"time"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

const (
	maxBatchLines = 1000
	maxBatchBytes = 1 << 20
	// roundBudget is how much of one file is read before the other files
	// get their turn.
	roundBudget = 8 << 20
	// physicalSlack is room for a CRI header or docker's JSON around a line
	// of the maximum length; docker lines are at most 16 KiB of text, which
	// JSON escaping can make up to 6 times longer.
	physicalSlack = 4 << 10
	minPhysical   = 6*16<<10 + physicalSlack
)

// reader turns a file's bytes into batches of logical lines. There is one
// per Tailer, used for one file at a time, so its buffers are allocated once
// however many files are followed.
type reader struct {
	maxLine int
	budget  int    // bytes of one file read per round (roundBudget)
	buf     []byte // read buffer: the longest physical line that is kept whole
	head    []byte // a file's first bytes, for its fingerprint
	arena   []byte // the text of the batch's lines, which alias it
	lines   []stream.Line
	// committed runs after each batch the sink accepted, once the file's
	// offset is past it.
	committed func(context.Context)

	// A logical line being joined from pieces (CRI P lines, docker's 16 KiB
	// splits) lives at arena[pendStart:].
	pend       bool
	pendStart  int
	pendTrunc  bool
	pendTime   time.Time
	pendStream string
	// Past maxLine the pending line goes through skim, which keeps its
	// structure in bounded memory (as on stdin), until bytes of it are lost
	// (a physical line longer than buf): nothing after them is kept.
	skimming bool
	pendLost bool
	skim     stream.Skimmer
}

func newReader(maxLine int) *reader {
	physical := max(maxLine+physicalSlack, minPhysical)
	return &reader{
		maxLine: maxLine,
		budget:  roundBudget,
		buf:     make([]byte, physical),
		head:    make([]byte, fingerprintSize),
		arena:   make([]byte, 0, maxBatchBytes+maxLine+physical),
		lines:   make([]stream.Line, 0, maxBatchLines),
	}
}

// readFile reads f from its offset and hands complete logical lines to sink
// in batches, advancing f.offset after each batch the sink accepted. A
// logical line still incomplete at the end (a P line without its F, a line
// without its newline) is left for the next round, unless final.
func (r *reader) readFile(ctx context.Context, f *file, sink stream.Sink, final bool) error {
	r.arena, r.lines, r.pend = r.arena[:0], r.lines[:0], false
	f.atEOF = false
	var (
		bufOff     = f.offset // file offset of buf[0]
		filled     int
		lineEnd    = f.offset // file offset just past the last complete line
		doneLines  int        // lines before lineEnd
		discarding bool       // dropping the rest of an overlong physical line
		budget     = r.budget
		start0     = f.offset
		physStart  = f.offset // where the current physical line began
	)
	for {
		n, err := f.fd.ReadAt(r.buf[filled:], bufOff+int64(filled))
		if err != nil && err != io.EOF {
			return err
		}
		filled += n
		budget -= n
		start := 0
		for {
			nl := bytes.IndexByte(r.buf[start:filled], '\n')
			if nl < 0 {
				break
			}
			if discarding {
				discarding = false
			} else {
				r.physical(f.format, r.buf[start:start+nl], false)
			}
			start += nl + 1
			switch {
			case !r.pend:
				lineEnd, doneLines = bufOff+int64(start), len(r.lines)
			case len(r.lines) > doneLines:
				// Lines were finished before a new pending line began here.
				lineEnd, doneLines = physStart, len(r.lines)
			}
			physStart = bufOff + int64(start)
			if len(r.lines) >= maxBatchLines || len(r.arena) >= maxBatchBytes {
				if err := r.flush(ctx, f, sink, doneLines, lineEnd); err != nil {
					return err
				}
				doneLines = 0
			}
		}
		if start == 0 && filled == len(r.buf) {
			// A physical line longer than the buffer: keep its start
			// (truncated), drop the rest up to its newline.
			if !discarding {
				r.physical(f.format, r.buf[:filled], true)
				discarding = true
			}
			start = filled
		}
		copy(r.buf, r.buf[start:filled])
		filled -= start
		bufOff += int64(start)
		if err == io.EOF || n == 0 {
			f.atEOF = true
			break
		}
		if budget <= 0 && lineEnd > start0 {
			// Only after a complete line: a round that ended inside one
			// (a long run of CRI P pieces) would read it again next time.
			break
		}
	}
	if final && f.atEOF {
		// The writer is gone: a last line without newline is complete.
		if filled > 0 && !discarding {
			r.physical(f.format, r.buf[:filled], false)
		}
		r.finish()
		lineEnd, doneLines = bufOff+int64(filled), len(r.lines)
	}
	return r.flush(ctx, f, sink, doneLines, lineEnd)
}

// flush hands the first n lines to sink and, once it accepted them, moves
// f's offset to end. A pending logical line stays for the next batch; lines
// after n (only at the end of a round) are dropped and read again next round.
func (r *reader) flush(ctx context.Context, f *file, sink stream.Sink, n int, end int64) error {
	if n > 0 {
		if err := sink(ctx, stream.Batch{Attrs: f.attrs, Lines: r.lines[:n], OneLine: f.format != FormatDocker}); err != nil {
			return err
		}
	}
	f.offset = end
	if n > 0 && r.committed != nil {
		r.committed(ctx)
	}
	if r.pend {
		r.arena = r.arena[:copy(r.arena, r.arena[r.pendStart:])]
		r.pendStart = 0
	} else {
		r.arena = r.arena[:0]
	}
	r.lines = r.lines[:0]
	return nil
}

// physical takes one physical line of the file. cut means it was longer
// than the read buffer and this is only its start.
func (r *reader) physical(format string, data []byte, cut bool) {
	switch format {
	case FormatCRI:
		ts, stream, partial, content, ok := parseCRI(data)
		if !ok {
			break
		}
		if r.pend && stream != r.pendStream {
			r.finish() // pieces of two streams interleaved: keep both, unjoined
		}
		r.piece(content, ts, stream, cut)
		if !partial {
			r.finish()
		}
		return
	case FormatDocker:
		if cut { // the JSON cannot be complete; keep the text as it is
			break
		}
		out, ts, stream, partial, ok := parseDocker(data, r.arena)
		if !ok {
			break
		}
		if r.pend && stream != r.pendStream {
			// Move the new piece past the finished pending line.
			piece := out[len(r.arena):]
			r.finish()
			r.piece(piece, ts, stream, false)
		} else {
			r.pieceInPlace(out, ts, stream)
		}
		if !partial {
			r.finish()
		}
		return
	}
	// raw, or a line that is not in the file's format: kept as it is.
	r.finish()
	r.piece(data, time.Time{}, "", cut)
	r.finish()
}

// piece appends content to the pending logical line, starting one if needed.
// cut means bytes after content were lost.
func (r *reader) piece(content []byte, ts time.Time, stream string, cut bool) {
	r.begin(ts, stream)
	switch {
	case r.pendLost:
	case r.skimming:
		r.arena = r.skim.Overflow(r.arena, content)
	default:
		room := r.maxLine - (len(r.arena) - r.pendStart)
		if len(content) <= room {
			r.arena = append(r.arena, content...)
			break
		}
		r.arena = append(r.arena, content[:room]...)
		r.startSkim()
		r.arena = r.skim.Overflow(r.arena, content[room:])
	}
	if cut {
		r.pendTrunc, r.pendLost = true, true
	}
}

// pieceInPlace accepts a piece that parseDocker already appended to the
// arena (out extends r.arena). Past maxLine the piece is skimmed where it
// lies: Overflow writes no further than it has read, so it can append to
// r.arena from bytes just past it.
func (r *reader) pieceInPlace(out []byte, ts time.Time, stream string) {
	r.begin(ts, stream)
	switch {
	case r.pendLost:
	case r.skimming:
		r.arena = r.skim.Overflow(r.arena, out[len(r.arena):])
	case len(out)-r.pendStart > r.maxLine:
		limit := r.pendStart + r.maxLine
		r.arena = out[:limit]
		r.startSkim()
		r.arena = r.skim.Overflow(r.arena, out[limit:])
	default:
		r.arena = out
	}
}

// startSkim cuts the pending line, which has reached maxLine, where the
// skimmer says (not inside an escape or a character).
func (r *reader) startSkim() {
	r.arena = r.arena[:r.pendStart+r.skim.Start(r.arena[r.pendStart:])]
	r.skimming, r.pendTrunc = true, true
}

func (r *reader) begin(ts time.Time, stream string) {
	if !r.pend {
		r.pend, r.pendStart, r.pendTrunc, r.pendTime, r.pendStream = true, len(r.arena), false, ts, stream
		r.skimming, r.pendLost = false, false
	}
}

// finish turns the pending logical line, if any, into a Line.
func (r *reader) finish() {
	if !r.pend {
		return
	}
	end := len(r.arena)
	r.lines = append(r.lines, stream.Line{
		Data:      r.arena[r.pendStart:end:end],
		Time:      r.pendTime,
		Stream:    r.pendStream,
		Truncated: r.pendTrunc,
	})
	r.pend = false
}

// detectFormat decides a file's format from its first line; "" means the
// file has no complete first line yet.
func detectFormat(fd *os.File, buf []byte) string {
	n, err := fd.ReadAt(buf[:min(len(buf), 64<<10)], 0)
	if err != nil && err != io.EOF {
		return ""
	}
	nl := bytes.IndexByte(buf[:n], '\n')
	if nl < 0 {
		if n == min(len(buf), 64<<10) {
			return FormatRaw // no structured format has a first line that long
		}
		return ""
	}
	line := buf[:nl]
	if _, _, _, _, ok := parseCRI(line); ok {
		return FormatCRI
	}
	if _, _, _, _, ok := parseDocker(line, nil); ok {
		return FormatDocker
	}
	return FormatRaw
}

// lastLineEnd returns the offset just past the last newline in f's final
// bytes, so that starting at the end does not start in the middle of a line.
func lastLineEnd(fd *os.File, size int64, buf []byte) int64 {
	from := max(size-int64(len(buf)), 0)
	n, err := fd.ReadAt(buf[:size-from], from)
	if err != nil && err != io.EOF {
		return size
	}
	if nl := bytes.LastIndexByte(buf[:n], '\n'); nl >= 0 {
		return from + int64(nl) + 1
	}
	return size
}
