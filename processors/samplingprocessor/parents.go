package samplingprocessor

import (
	"encoding/binary"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// recentParents remembers the span ids that recently appeared as some span's
// parent, so that a parent is never dropped as if it were a leaf. Memory is
// fixed: an open-addressing table holding two generations of ids side by
// side (one cache line serves a lookup in both). When the current generation
// has taken `limit` ids, the older one is cleared and becomes current. So the
// last `limit` to 2·`limit` parent ids are remembered. Not safe for
// concurrent use.
type recentParents struct {
	slots    [][2]uint64 // [slot][generation]; 0 marks an empty entry
	cur      int         // current generation, 0 or 1
	n, limit int
	mask     uint64
}

func newRecentParents(limit int) *recentParents {
	size := 16
	for size < 2*limit { // keep each generation's load factor at or below 1/2
		size <<= 1
	}
	return &recentParents{slots: make([][2]uint64, size), limit: limit, mask: uint64(size - 1)}
}

// parentKey folds trace and span id into one non-zero key; mixing in the
// trace id keeps colliding span ids of different traces apart.
func parentKey(trace pcommon.TraceID, span pcommon.SpanID) uint64 {
	k := binary.LittleEndian.Uint64(span[:]) ^ binary.LittleEndian.Uint64(trace[8:])*0x9e3779b97f4a7c15
	if k == 0 {
		k = 1
	}
	return k
}

func (r *recentParents) slot(k uint64) uint64 { return (k * 0xff51afd7ed558ccd >> 17) & r.mask }

func (r *recentParents) add(k uint64) {
	if r.probe(k, r.cur) {
		return
	}
	if r.n >= r.limit {
		r.cur ^= 1
		for i := range r.slots {
			r.slots[i][r.cur] = 0
		}
		r.n = 0
	}
	for i := r.slot(k); ; i = (i + 1) & r.mask {
		if r.slots[i][r.cur] == 0 {
			r.slots[i][r.cur] = k
			r.n++
			return
		}
	}
}

func (r *recentParents) has(k uint64) bool { return r.probe(k, 0) || r.probe(k, 1) }

func (r *recentParents) probe(k uint64, gen int) bool {
	for i := r.slot(k); ; i = (i + 1) & r.mask {
		switch r.slots[i][gen] {
		case k:
			return true
		case 0:
			return false
		}
	}
}
