package forward

import (
	"time"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

// maxPendingPartials bounds the partial messages a connection joins at
// once. Docker sends the pieces of one line back to back, so more than one
// or two pending ids means pieces were lost; the oldest is then emitted as
// it is (marked truncated) to make room.
const maxPendingPartials = 16

// pending is a docker partial message being joined: docker splits lines
// longer than 16 KiB into records with partial_message "true", the same
// partial_id and partial_last "true" on the final piece. The pieces arrive
// in order on the container's connection, so partial_ordinal is not needed.
type pending struct {
	id     string
	seq    uint64 // arrival order, to find the oldest
	attrs  []stream.Attr
	time   time.Time // of the first piece
	stream string
	// data is the joined line: at most maxLine bytes, then what skim
	// keeps of the rest (stream.SkimOverflowBytes at most).
	data      []byte
	skim      stream.Skimmer
	skimming  bool // data reached maxLine: later bytes go through skim
	truncated bool
}

type partials struct {
	byID map[string]*pending
	free []*pending
	seq  uint64
}

func (ps *partials) get(id string) *pending { return ps.byID[id] }

func (ps *partials) add(p *pending) {
	if ps.byID == nil {
		ps.byID = make(map[string]*pending)
	}
	ps.seq++
	p.seq = ps.seq
	ps.byID[p.id] = p
}

func (ps *partials) newPending() *pending {
	if n := len(ps.free); n > 0 {
		p := ps.free[n-1]
		ps.free = ps.free[:n-1]
		return p
	}
	return &pending{}
}

// release forgets p and keeps a few buffers for reuse.
func (ps *partials) release(p *pending) {
	delete(ps.byID, p.id)
	if len(ps.free) < 4 {
		*p = pending{data: p.data[:0]}
		ps.free = append(ps.free, p)
	}
}

func (ps *partials) oldest() *pending {
	var o *pending
	for _, p := range ps.byID {
		if o == nil || p.seq < o.seq {
			o = p
		}
	}
	return o
}

// addPartial appends the piece in arena[rec.mark:] to its partial message,
// and emits the message when this is its last piece.
func (c *conn) addPartial(rec *fluentRecord, truncated bool) error {
	piece := c.arena[rec.mark:]
	p := c.partials.get(string(rec.bytes(rec.partialID)))
	isNew := p == nil
	if isNew {
		p = c.partials.newPending()
		p.id = string(rec.bytes(rec.partialID))
		p.time = rec.time
		p.stream = rec.stream
		sortExtras(rec)
		if c.sameAttrs(rec) {
			p.attrs = c.attrs
		} else {
			p.attrs = c.recordAttrs(rec)
		}
	}
	// Past the limit the line keeps its structure as on stdin: an
	// oversized JSON line keeps its later members (msg, trace_id) and
	// loses only the rest of the value the limit cut.
	switch room := c.maxLine - len(p.data); {
	case p.skimming:
		p.data = p.skim.Overflow(p.data, piece)
	case len(piece) > room:
		p.data = append(p.data, piece[:room]...)
		p.data = p.data[:p.skim.Start(p.data)]
		p.data = p.skim.Overflow(p.data, piece[room:])
		p.skimming, truncated = true, true
	default:
		p.data = append(p.data, piece...)
	}
	p.truncated = p.truncated || truncated
	c.arena = c.arena[:rec.mark]
	if isNew {
		if len(c.partials.byID) >= maxPendingPartials {
			old := c.partials.oldest()
			old.truncated = true
			if err := c.emitPartial(old); err != nil {
				return err
			}
		}
		c.partials.add(p)
	}
	if rec.partialLast {
		return c.emitPartial(p)
	}
	return nil
}
