package losses

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"
)

// Ledger holds the losses not yet reported to Axiom. Once Keep gave it a
// storage client, it is also kept there (one key, rewritten at most every
// saveInterval while drops are recorded, and at once when a report is
// taken or confirmed), so that a report not yet sent survives kill -9 and
// is sent by the next process.
//
// The store is kept until the last component that may drop after the
// reporting one has stopped: every such component holds the ledger (Hold)
// from its start and lets go (Release) at the end of its shutdown, and the
// last Release saves and closes the store. The collector stops exporters
// in no set order, so the traces exporter may drop after the logs
// exporter, which reports, has stopped; those drops go to the next run.
//
// A report is sent at least once, and exactly once unless the process dies
// between Axiom accepting the report and the ledger saving that it did.
// Then the next process sends the same events again: every event carries
// the report_id it was first sent with, and the same counts, so a repeat is
// recognisable (count distinct report_id).
type Ledger struct {
	mu sync.Mutex
	// open grows with every drop; its losses get an ID when taken.
	open map[key]*Loss
	// taken are losses in a report not yet confirmed: each keeps its ID
	// and counts until Axiom accepted it, and is sent again as it is.
	taken []Loss
	// sending: a report is under way, and Take gives nothing until Done.
	sending bool
	store   storage.Client
	log     *zap.Logger
	timer   *time.Timer // a save is due
	// holders counts the components between Hold and Release.
	holders int

	// saving lets one save run at a time, each of the state as it is when
	// it starts, so that the last save is of the latest state.
	saving sync.Mutex
}

// Default is the process's ledger: components give it to NewRecorder, and
// the axiom exporter reports from it. Tests replace it before creating
// components, which keep the one they were created with.
var Default = &Ledger{}

type key struct {
	component, signal string
	reason            Reason
}

// ledgerKey is the storage key the ledger is kept under.
const ledgerKey = "ledger"

// saveInterval bounds how often drops are saved: a drop recorded within it
// of a kill may be missing from the next process's report (it is in the
// metric and the log line).
const saveInterval = 200 * time.Millisecond

// saved is the ledger as stored.
type saved struct {
	Open  []Loss `json:"open,omitempty"`
	Taken []Loss `json:"taken,omitempty"`
}

// Keep loads what an earlier process left in store, adds it to the
// ledger, and keeps the ledger there from now on: the ledger owns store,
// and closes it at the last Release. A value it cannot read is replaced
// (the error says so); a store it cannot read is not used (the caller
// still owns it). When the ledger already has a store (a second exporter
// with storage), what store holds is moved into that one and store is
// closed.
func (l *Ledger) Keep(ctx context.Context, store storage.Client, log *zap.Logger) error {
	b, err := store.Get(ctx, ledgerKey)
	if err != nil {
		return fmt.Errorf("reading the unsent report of dropped records: %w", err)
	}
	var s saved
	var readErr error
	if len(b) > 0 {
		if err := json.Unmarshal(b, &s); err != nil {
			readErr = fmt.Errorf("the unsent report of dropped records an earlier run left is unreadable, and is replaced: %w", err)
			s = saved{}
		}
	}
	l.saving.Lock()
	defer l.saving.Unlock()
	l.mu.Lock()
	for _, loss := range s.Open {
		l.merge(loss)
	}
	l.taken = append(l.taken, s.Taken...)
	second := l.store != nil
	if !second {
		l.store, l.log = store, log
	}
	l.mu.Unlock()
	l.saveLocked()
	if second {
		// Saved in the first store above: only now may it leave this one.
		return errors.Join(readErr, store.Delete(ctx, ledgerKey), store.Close(ctx))
	}
	return readErr
}

// Hold marks a component that may record drops as running: the store is
// kept until every holder has called Release.
func (l *Ledger) Hold() {
	l.mu.Lock()
	l.holders++
	l.mu.Unlock()
}

// Release ends a Hold. The last one saves the ledger a last time and closes
// its store; drops recorded after it are in memory only (and in the log
// line and the metric).
func (l *Ledger) Release(ctx context.Context) error {
	l.saving.Lock()
	defer l.saving.Unlock()
	l.mu.Lock()
	l.holders--
	if l.holders > 0 || l.store == nil {
		l.mu.Unlock()
		return nil
	}
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	l.mu.Unlock()
	l.saveLocked()
	l.mu.Lock()
	store := l.store
	l.store = nil
	l.mu.Unlock()
	return store.Close(ctx)
}

func (l *Ledger) add(k key, items, bytes int64, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.merge(Loss{Component: k.component, Signal: k.signal, Reason: k.reason, Items: items, Bytes: bytes, First: at, Last: at})
	if l.store != nil && l.timer == nil {
		l.timer = time.AfterFunc(saveInterval, func() {
			l.mu.Lock()
			l.timer = nil
			l.mu.Unlock()
			l.save()
		})
	}
}

// merge adds loss to the open losses; l.mu is held.
func (l *Ledger) merge(loss Loss) {
	if l.open == nil {
		l.open = map[key]*Loss{}
	}
	loss.ID = ""
	k := key{loss.Component, loss.Signal, loss.Reason}
	e := l.open[k]
	if e == nil {
		l.open[k] = &loss
		return
	}
	e.Items += loss.Items
	e.Bytes += loss.Bytes
	if loss.First.Before(e.First) {
		e.First = loss.First
	}
	if loss.Last.After(e.Last) {
		e.Last = loss.Last
	}
}

// Pending reports whether there is something to report.
func (l *Ledger) Pending() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.open) > 0 || len(l.taken) > 0
}

// Take returns the report to send, oldest loss first: the losses of
// earlier reports not yet confirmed, as they were, and the losses since,
// each with a new ID. The IDs are saved before Take returns. While a
// report is under way (until Done) Take returns nothing.
func (l *Ledger) Take() []Loss {
	l.saving.Lock()
	defer l.saving.Unlock()
	l.mu.Lock()
	if l.sending || len(l.open) == 0 && len(l.taken) == 0 {
		l.mu.Unlock()
		return nil
	}
	l.sending = true
	for _, loss := range l.open {
		loss.ID = newID()
		l.taken = append(l.taken, *loss)
	}
	clear(l.open)
	report := slices.Clone(l.taken)
	l.mu.Unlock()
	l.saveLocked()
	sort.Slice(report, func(i, j int) bool { return report[i].First.Before(report[j].First) })
	return report
}

// Done ends the report Take returned: once Axiom accepted it, its losses
// are forgotten (and the ledger saved at once); otherwise they are sent
// again, unchanged, with the next report.
func (l *Ledger) Done(report []Loss, accepted bool) {
	l.saving.Lock()
	defer l.saving.Unlock()
	l.mu.Lock()
	l.sending = false
	if accepted {
		sent := map[string]bool{}
		for _, loss := range report {
			sent[loss.ID] = true
		}
		l.taken = slices.DeleteFunc(l.taken, func(loss Loss) bool { return sent[loss.ID] })
	}
	l.mu.Unlock()
	if accepted {
		l.saveLocked()
	}
}

func (l *Ledger) save() {
	l.saving.Lock()
	defer l.saving.Unlock()
	l.saveLocked()
}

// saveLocked writes the ledger to its store, if it has one (and deletes
// the key when there is nothing to report); l.saving is held. A failed
// save is logged: the report is still in memory.
func (l *Ledger) saveLocked() {
	l.mu.Lock()
	store, log := l.store, l.log
	s := saved{Taken: slices.Clone(l.taken)}
	for _, loss := range l.open {
		s.Open = append(s.Open, *loss)
	}
	l.mu.Unlock()
	if store == nil {
		return
	}
	var err error
	if len(s.Open) == 0 && len(s.Taken) == 0 {
		err = store.Delete(context.Background(), ledgerKey)
	} else {
		b, _ := json.Marshal(s) // strings, numbers and times: cannot fail
		err = store.Set(context.Background(), ledgerKey, b)
	}
	if err != nil && log != nil {
		log.Warn("Saving the report of dropped records failed; it is kept in memory only", zap.Error(err))
	}
}

// newID names one loss in one report.
func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}
