package sampling

import (
	"encoding/binary"
	"math"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// dynamicRule turns target_per_second into a probability per key. The
// probability of interval k+1 comes from the counts of interval k and is a
// power of two 2^-exp, so it is known when an item is decided and the weight
// 2^exp is exact. Within an interval a burst lowers it further (see state).
// Guarded by the sampler's mutex.
type dynamicRule struct {
	target   float64 // items per second per key
	budget   float64 // items per interval per key: target × interval
	interval time.Duration
	maxExp   int // from min_probability
	maxKeys  int
	fields   []keyField
	keys     map[uint64]*keyState
	overflow keyState // shared by keys beyond maxKeys
}

// keyField is one field a dynamic rule counts by: a name the rule handles
// itself (span.name, operation, ...) or an attribute, read by any of its
// names (see attrNames).
type keyField struct {
	name  string
	names []string
}

type keyState struct {
	count uint64 // sampling-eligible items this interval
	exp   int    // probability 2^-exp for the next item
	base  int    // the interval's probability 2^-base, from the last count
	// spent is the items expected kept this interval: the sum of each
	// one's probability (not of what was kept, so it does not depend on
	// any item's randomness); at limit the probability halves.
	spent, limit float64
}

func newDynamicRule(c *RuleConfig) *dynamicRule {
	d := &dynamicRule{
		target:   c.TargetPerSecond,
		interval: c.Interval,
		maxKeys:  c.MaxKeys,
		keys:     map[uint64]*keyState{},
	}
	for _, k := range c.Key {
		d.fields = append(d.fields, keyField{name: k, names: attrNames(k)})
	}
	if d.interval == 0 {
		d.interval = 10 * time.Second
	}
	if d.maxKeys == 0 {
		d.maxKeys = 1000
	}
	minP := c.MinProbability
	if minP == 0 {
		minP = math.Ldexp(1, -20)
	}
	d.maxExp = int(math.Floor(-math.Log2(minP)))
	d.budget = d.target * d.interval.Seconds()
	d.overflow.limit = d.limitAt(0)
	return d
}

// limitAt is the expected keeps of an interval at which a key running
// lvl halvings below its interval's probability halves it again: twice the
// budget, then 3, 3.5, 3.75 … times it. So a burst keeps under 4 times the
// budget per interval, while steady traffic, whose probability is rounded
// to a power of two at most √2 away, never reaches the first halving.
func (d *dynamicRule) limitAt(lvl int) float64 {
	return d.budget * (4 - math.Ldexp(2, -lvl))
}

// state returns the key's state, counting one more eligible item, which is
// decided with probability 2^-ks.exp. New keys start at probability 1
// (every key is represented before it is measured). The probability of an
// item depends only on the items before it, never on its own randomness,
// so its weight 2^exp stays exact when a burst lowers the probability.
func (d *dynamicRule) state(key uint64) *keyState {
	ks, ok := d.keys[key]
	if !ok {
		if len(d.keys) >= d.maxKeys {
			ks = &d.overflow
		} else {
			ks = &keyState{limit: d.limitAt(0)}
			d.keys[key] = ks
		}
	}
	ks.count++
	if ks.spent >= ks.limit && ks.exp < d.maxExp {
		ks.exp++
		ks.limit = d.limitAt(ks.exp - ks.base)
	}
	ks.spent += math.Ldexp(1, -ks.exp)
	return ks
}

// adjust computes the next interval's probabilities from the counts of the
// one that just ended (elapsed long), forgets idle keys and resets counts.
func (d *dynamicRule) adjust(elapsed time.Duration) {
	for k, ks := range d.keys {
		if ks.count == 0 {
			delete(d.keys, k)
			continue
		}
		d.next(ks, elapsed)
	}
	d.next(&d.overflow, elapsed)
}

func (d *dynamicRule) next(ks *keyState, elapsed time.Duration) {
	ks.spent = 0
	if ks.count == 0 {
		ks.exp, ks.base, ks.limit = 0, 0, d.limitAt(0)
		return
	}
	p := d.target * elapsed.Seconds() / float64(ks.count)
	exp := 0
	if p < 1 {
		exp = int(math.Round(-math.Log2(p))) // nearest power of two on a log scale
	}
	ks.exp = min(max(exp, 0), d.maxExp)
	ks.base, ks.limit = ks.exp, d.limitAt(0)
	ks.count = 0
}

// fnv64 is FNV-1a over a dynamic rule's key fields (short strings).
type fnv64 uint64

const fnvOffset fnv64 = 14695981039346656037

func (h fnv64) str(s string) fnv64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ fnv64(s[i])) * 1099511628211
	}
	return (h ^ 0xff) * 1099511628211 // field separator
}

// strUpper is str of s in ASCII upper case, without building it.
func (h fnv64) strUpper(s string) fnv64 {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		h = (h ^ fnv64(c)) * 1099511628211
	}
	return (h ^ 0xff) * 1099511628211
}

func (h fnv64) u64(v uint64) fnv64 {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	for _, c := range b {
		h = (h ^ fnv64(c)) * 1099511628211
	}
	return h
}

// value hashes an attribute value without rendering it as a string.
func (h fnv64) value(v attrValue) fnv64 {
	switch v.typ {
	case pcommon.ValueTypeStr:
		return h.str(v.str)
	case pcommon.ValueTypeInt:
		return h.u64(v.num)
	case pcommon.ValueTypeDouble:
		return h.u64(v.num)
	case pcommon.ValueTypeBool:
		if v.bool() {
			return h.u64(1)
		}
		return h.u64(0)
	}
	return h.u64(uint64(v.typ) << 32)
}

// mix56 spreads a hash over 56 bits of randomness (splitmix64 finaliser).
func mix56(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x & randomMask
}
