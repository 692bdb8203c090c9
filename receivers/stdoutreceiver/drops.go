package stdoutreceiver

import (
	"context"
	"sort"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/sidecarhq/sidecar/internal/outcome"
)

// Why records were dropped: the reason attribute of
// otelcol_receiver_stdout_dropped_records and of the drop log line.
const (
	dropNoPipeline = "no_pipeline" // the receiver is in no pipeline of that signal
	dropPermanent  = "rejected"    // the pipeline rejected them permanently
	// and whenfull.Full ("when_full"), whenfull.Undelivered ("shutdown").
)

// dropLogEvery is how often, at most, drops are logged.
const dropLogEvery = time.Minute

// drops counts every dropped record exactly, by reason, and logs them at
// most once a minute: the first drop at once, later ones summed until a
// minute has passed (and at Shutdown).
type drops struct {
	log *zap.Logger

	mu       sync.Mutex
	total    map[string]int64
	unlogged map[string]int64
	since    time.Time // first unlogged drop
	lastLog  time.Time
}

func newDrops(log *zap.Logger) *drops {
	return &drops{log: log, total: map[string]int64{}, unlogged: map[string]int64{}}
}

func (r *stdoutReceiver) drop(ctx context.Context, n int, reason string) {
	if n <= 0 {
		return
	}
	r.metrics.recordDropped(ctx, n, reason)
	r.drops.add(n, reason)
	outcome.Dropped(reason, n)
}

func (d *drops) add(n int, reason string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	if len(d.unlogged) == 0 {
		d.since = now
	}
	d.total[reason] += int64(n)
	d.unlogged[reason] += int64(n)
	if now.Sub(d.lastLog) >= dropLogEvery {
		d.flushLocked(now)
	}
}

// flush logs what was dropped since the last log line, if anything.
func (d *drops) flush() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.flushLocked(time.Now())
}

func (d *drops) flushLocked(now time.Time) {
	if len(d.unlogged) == 0 {
		return
	}
	fields := []zap.Field{zap.Time("since", d.since)}
	for _, reason := range sortedKeys(d.unlogged) {
		fields = append(fields, zap.Int64(reason, d.unlogged[reason]))
	}
	d.log.Warn("records dropped (counted in otelcol_receiver_stdout_dropped_records)", fields...)
	clear(d.unlogged)
	d.lastLog = now
}

// totals returns the records dropped so far, by reason.
func (d *drops) totals() map[string]int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]int64, len(d.total))
	for k, v := range d.total {
		out[k] = v
	}
	return out
}

func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
