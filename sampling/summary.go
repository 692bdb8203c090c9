package sampling

import (
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sidecarhq/sidecar/sampling/internal/metadata"
)

// Summary events make totals exact in Axiom even though items are dropped:
// every item a rule decides on is counted here, kept or not.

// histBoundsMs are the upper bounds (inclusive, milliseconds) of the fixed
// duration histogram; a last bucket counts everything slower.
var histBoundsMs = [...]int64{1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000}

// histLabels name the buckets in the summary event.
var histLabels = func() []string {
	l := make([]string, 0, len(histBoundsMs)+1)
	for _, b := range histBoundsMs {
		l = append(l, "le_"+strconv.FormatInt(b, 10))
	}
	return append(l, "gt_"+strconv.FormatInt(histBoundsMs[len(histBoundsMs)-1], 10))
}()

const overflowOperation = "__overflow__"

type summaryKey struct {
	signal    signalMask
	rule      int
	service   string
	operation string
	status    string
}

type summaryStats struct {
	key                         summaryKey // as held in the table, see lookup
	seen, kept, dropped, errors uint64
	rescued                     uint64  // of the dropped, shipped because their request failed
	weightSum                   float64 // sum of weights of kept items; estimates seen
	durSum, durMin, durMax      int64   // nanoseconds, spans only
	hist                        [len(histBoundsMs) + 1]uint64
}

// summaryTable accumulates one interval. Guarded by the sampler's mutex.
type summaryTable struct {
	groups    map[summaryKey]*summaryStats
	maxGroups int
	start     time.Time
	// upper holds the upper-case forms of this interval's operations
	// written in lower or mixed case (see operation), so that hot spans do
	// not build them again; at most maxGroups of them.
	upper map[string]string
	// recent is a direct-mapped cache in front of groups: hashing three
	// strings per item costs more than the rest of a decision.
	recent [64]struct {
		key   summaryKey
		stats *summaryStats
	}
}

func newSummaryTable(maxGroups int, start time.Time) *summaryTable {
	return &summaryTable{groups: map[summaryKey]*summaryStats{}, maxGroups: maxGroups, start: start, upper: map[string]string{}}
}

// operation returns op as summaries group it: in ASCII upper case, so that
// one command is one group whichever client wrote it (`get`, `GET`).
func (t *summaryTable) operation(op string) string {
	lower := false
	for i := 0; i < len(op) && !lower; i++ {
		lower = 'a' <= op[i] && op[i] <= 'z'
	}
	if !lower {
		return op
	}
	if u, ok := t.upper[op]; ok {
		return u
	}
	u := strings.ToUpper(op)
	if len(t.upper) < t.maxGroups {
		t.upper[strings.Clone(op)] = u
	}
	return u
}

// stats returns the group's stats, creating it (with copied strings, so the
// table does not pin request buffers) or falling back to the rule's overflow
// group when the table is full.
func (t *summaryTable) stats(k summaryKey) *summaryStats {
	c := &t.recent[k.recentSlot()]
	if c.stats != nil && c.key == k {
		return c.stats
	}
	c.key, c.stats = t.lookup(k)
	return c.stats
}

// recentSlot picks k's entry in summaryTable.recent without hashing whole
// strings. Operations tell most groups apart and often have the same length
// (GET, SET), so their first and last bytes count too.
func (k *summaryKey) recentSlot() int {
	h := uint32(k.rule*7 + len(k.service)*5 + len(k.status) + int(k.signal))
	if op := k.operation; op != "" {
		h += uint32(len(op)*3 + int(op[0])*11 + int(op[len(op)-1])*13)
	}
	return int(h * 0x9e3779b1 >> 26) // top 6 bits: 0..63
}

// lookup returns the group's key as the table holds it (strings copied:
// k's may be views into a request buffer that is reused) and its stats.
func (t *summaryTable) lookup(k summaryKey) (summaryKey, *summaryStats) {
	if st, ok := t.groups[k]; ok {
		return st.key, st
	}
	if len(t.groups) >= t.maxGroups {
		k = summaryKey{signal: k.signal, rule: k.rule, operation: overflowOperation}
		if st, ok := t.groups[k]; ok {
			return st.key, st
		}
	}
	k.service, k.operation, k.status = strings.Clone(k.service), strings.Clone(k.operation), strings.Clone(k.status)
	st := &summaryStats{key: k, durMin: -1}
	t.groups[k] = st
	return k, st
}

func (st *summaryStats) add(kept, isError bool, weight float64) {
	st.seen++
	if kept {
		st.kept++
		st.weightSum += weight
	} else {
		st.dropped++
	}
	if isError {
		st.errors++
	}
}

// merge adds o's counts to st's.
func (st *summaryStats) merge(o *summaryStats) {
	st.seen += o.seen
	st.kept += o.kept
	st.dropped += o.dropped
	st.errors += o.errors
	st.rescued += o.rescued
	st.weightSum += o.weightSum
	st.durSum += o.durSum
	if o.durMin >= 0 && (st.durMin < 0 || o.durMin < st.durMin) {
		st.durMin = o.durMin
	}
	st.durMax = max(st.durMax, o.durMax)
	for i, n := range o.hist {
		st.hist[i] += n
	}
}

func (st *summaryStats) addDuration(d int64) {
	st.durSum += d
	if st.durMin < 0 || d < st.durMin {
		st.durMin = d
	}
	if d > st.durMax {
		st.durMax = d
	}
	ms := d / int64(time.Millisecond)
	rem := d % int64(time.Millisecond)
	i := 0
	for i < len(histBoundsMs) && (ms > histBoundsMs[i] || (ms == histBoundsMs[i] && rem > 0)) {
		i++
	}
	st.hist[i]++
}

// toLogs renders the table as summary log records, one ResourceLogs per
// service, timestamped at end.
func (t *summaryTable) toLogs(ruleNames []string, end time.Time) plog.Logs {
	ld := plog.NewLogs()
	byService := map[string]plog.LogRecordSlice{}
	ts := pcommon.NewTimestampFromTime(end)
	seconds := end.Sub(t.start).Seconds()
	for k, st := range t.groups {
		recs, ok := byService[k.service]
		if !ok {
			rl := ld.ResourceLogs().AppendEmpty()
			if k.service != "" {
				rl.Resource().Attributes().PutStr("service.name", k.service)
			}
			sl := rl.ScopeLogs().AppendEmpty()
			sl.Scope().SetName(metadata.ScopeName)
			recs = sl.LogRecords()
			byService[k.service] = recs
		}
		rec := recs.AppendEmpty()
		rec.SetTimestamp(ts)
		rec.SetObservedTimestamp(ts)
		s := rec.Body().SetEmptyMap().PutEmptyMap("sampling")
		s.PutBool("summary", true)
		if k.signal == signalLogs {
			s.PutStr("signal", "logs")
		} else {
			s.PutStr("signal", "traces")
		}
		s.PutStr("service", k.service)
		s.PutStr("rule", ruleNames[k.rule])
		s.PutStr("operation", k.operation)
		s.PutStr("status", k.status)
		s.PutDouble("interval_seconds", seconds)
		s.PutInt("seen", int64(st.seen))
		s.PutInt("kept", int64(st.kept))
		s.PutInt("dropped", int64(st.dropped))
		s.PutInt("rescued", int64(st.rescued))
		s.PutInt("errors", int64(st.errors))
		s.PutDouble("weight_sum", st.weightSum)
		if k.signal == signalTraces && st.seen > 0 {
			d := s.PutEmptyMap("duration_ms")
			d.PutDouble("sum", float64(st.durSum)/1e6)
			d.PutDouble("min", float64(max(st.durMin, 0))/1e6)
			d.PutDouble("max", float64(st.durMax)/1e6)
			h := s.PutEmptyMap("duration_histogram_ms")
			for i, n := range st.hist {
				h.PutInt(histLabels[i], int64(n))
			}
		}
	}
	return ld
}
