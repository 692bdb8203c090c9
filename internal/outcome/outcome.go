// Package outcome keeps, for the whole process, what became of the records
// it took in, so that `app | sidecar` can end with one summary line and an
// exit status a script notices: non-zero whenever a record was dropped or
// is left undelivered.
//
// It is a run-time contract between components that cannot see each other,
// so every party is named here:
//   - the stdout receiver counts the records it dropped (Dropped), and at
//     the end of stdin asks for the summary (ReportAtExit);
//   - the axiom exporter counts what Axiom took (Delivered), what it dropped
//     (Dropped), and at its shutdown what its persistent queue keeps for the
//     next start (Held), read from the queue: this run's records and those
//     earlier runs left;
//   - cmd/sidecar prints Summary after the collector stopped (receivers
//     first, exporters last), and exits with ExitIncomplete when it says the
//     run was incomplete.
//
// Delivered and Dropped are this process's counts (a backlog an earlier
// run left is delivered, and counted, by this one); Held is what is on disk.
package outcome

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// ExitIncomplete is the exit status of a run that reported its outcome and
// dropped records or left some undelivered.
const ExitIncomplete = 3

var (
	report    atomic.Bool
	delivered atomic.Int64
	held      sync.Map // who -> *atomic.Int64
	cutShort  atomic.Bool

	mu      sync.Mutex
	dropped = map[string]int64{}
)

// Delivered counts records Axiom (or the local file) took.
func Delivered(n int) { delivered.Add(int64(n)) }

// Dropped counts records dropped for reason.
func Dropped(reason string, n int) {
	if n <= 0 {
		return
	}
	mu.Lock()
	dropped[reason] += int64(n)
	mu.Unlock()
}

// Held sets how many records a persistent queue (named who) keeps on disk
// for the next start, whichever run they came from; cut says that shutdown
// ended its sending before it was done.
func Held(who string, n int64, cut bool) {
	v, _ := held.LoadOrStore(who, new(atomic.Int64))
	v.(*atomic.Int64).Store(max(0, n))
	if cut {
		cutShort.Store(true)
	}
}

// ReportAtExit asks for the summary when the process ends.
func ReportAtExit() { report.Store(true) }

// Summary returns the summary line if one was asked for, and whether the
// run was complete: nothing dropped, nothing left undelivered.
func Summary() (line string, complete, asked bool) {
	if !report.Load() {
		return "", true, false
	}
	var h int64
	held.Range(func(_, v any) bool {
		h += v.(*atomic.Int64).Load()
		return true
	})
	mu.Lock()
	reasons := make([]string, 0, len(dropped))
	var d int64
	for r, n := range dropped {
		reasons = append(reasons, fmt.Sprintf("%s: %d", r, n))
		d += n
	}
	mu.Unlock()
	sort.Strings(reasons)
	line = fmt.Sprintf("sidecar: %d records delivered, %d held on disk for the next start, %d dropped", delivered.Load(), h, d)
	if d > 0 {
		line += " (" + strings.Join(reasons, ", ") + ")"
	}
	cut := cutShort.Load()
	if cut {
		line += "; shutdown_timeout ended sending before everything was delivered"
	}
	return line, d == 0 && h == 0 && !cut, true
}
