package sampling

import (
	"encoding/binary"
	"math/bits"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// recentParents remembers the span ids that recently appeared as some span's
// parent, so that a parent is never dropped as if it were a leaf. Memory is
// fixed: an open-addressing table holding two generations of ids side by
// side (one cache line serves a lookup in both). When the current generation
// has taken `limit` ids, the older one is cleared and becomes current. So the
// last `limit` to 2·`limit` parent ids are remembered. Not safe for
// concurrent use.
//
// Almost every lookup is for a leaf and misses. The table is too big to stay
// in cache (2 MiB at the default limit), so a blocked Bloom filter per
// generation, 16 bits per id (4 bits of one word each), sits in front of it:
// it answers most misses from a far smaller array (256 KiB), and only ids it
// may hold (all members, under 1% of others) probe the table, which stays
// the exact answer.
type recentParents struct {
	slots    [][2]uint64 // [slot][generation]; 0 marks an empty entry
	filter   [][2]uint64 // [word][generation]: 4 bits of one word per id
	cur      int         // current generation, 0 or 1
	n, limit int
	mask     uint64
	fshift   uint // 64 - log2(len(filter))
	// last is the key added last. Siblings usually arrive together, so most
	// adds repeat it; it is in the current generation, as no add has come
	// between (only an add rotates generations).
	last uint64
}

func newRecentParents(limit int) *recentParents {
	size := 16
	for size < 2*limit { // keep each generation's load factor at or below 1/2
		size <<= 1
	}
	words := size / 8 // 16 filter bits per id at most `limit` ids
	return &recentParents{
		slots:  make([][2]uint64, size),
		filter: make([][2]uint64, words),
		limit:  limit,
		mask:   uint64(size - 1),
		fshift: uint(64 - bits.TrailingZeros(uint(words))),
	}
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

// bloom returns k's filter word index and its bits in that word.
func (r *recentParents) bloom(k uint64) (word uint64, bits uint64) {
	h := k * 0xc4ceb9fe1a85ec53
	return h >> r.fshift, 1<<(h&63) | 1<<(h>>6&63) | 1<<(h>>12&63) | 1<<(h>>18&63)
}

func (r *recentParents) add(k uint64) {
	if k == r.last {
		return
	}
	r.last = k
	// No filter check here: a new key's probe reads the slots its insert
	// writes anyway, and a known key would pass the filter.
	if r.probe(k, r.cur) {
		return
	}
	if r.n >= r.limit {
		r.cur ^= 1
		for i := range r.slots {
			r.slots[i][r.cur] = 0
		}
		for i := range r.filter {
			r.filter[i][r.cur] = 0
		}
		r.n = 0
	}
	w, b := r.bloom(k)
	r.filter[w][r.cur] |= b
	for i := r.slot(k); ; i = (i + 1) & r.mask {
		if r.slots[i][r.cur] == 0 {
			r.slots[i][r.cur] = k
			r.n++
			return
		}
	}
}

// has reports whether k is in either generation.
func (r *recentParents) has(k uint64) bool {
	w, b := r.bloom(k)
	f := &r.filter[w]
	return (f[0]&b == b && r.probe(k, 0)) || (f[1]&b == b && r.probe(k, 1))
}

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
