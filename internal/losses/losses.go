// Package losses is where a component records data it accepted and then had
// to drop, so that every such drop is counted exactly and said where the
// user looks: one log line a minute at most per reason, a self-metric, and
// one report event in Axiom's logs dataset once Axiom accepts data again.
//
// Parties and order:
//   - A component that may drop creates a Recorder at creation (NewRecorder,
//     with its telemetry settings and ID) and calls Record for each drop:
//     the axiom exporter (Axiom refused records for good, a record too large
//     even alone, what shutdown_timeout cut off from an in-memory queue);
//     the stdout receiver (its when_full policies drop_oldest and
//     drop_newest).
//   - Every drop is also counted in internal/outcome, for the summary line
//     and exit status of `app | sidecar`.
//   - Every Recorder adds to one Ledger (Default, the process's). The axiom
//     exporter's logs signal, when its queue has storage, keeps the ledger
//     there (Keep at its start), so that a report not yet sent survives
//     kill -9. Each axiom exporter (logs and traces) holds the ledger from
//     its start to the end of its shutdown (Hold, Release), and the store
//     is closed at the last Release, so that drops made by an exporter
//     stopping after the logs one are saved for the next run. The logs
//     signal sends the report (Take, then Event
//     for each loss, then Done) at its start when an earlier run left one,
//     after every request Axiom accepted, and once more at its shutdown
//     (drops made as the pipeline stopped) if Axiom accepted its last
//     request. Without a logs pipeline to Axiom the report is never sent;
//     the log lines and the metric still are.
package losses

import (
	"context"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/sidecarhq/sidecar/internal/outcome"
	"github.com/sidecarhq/sidecar/internal/selfmetrics"
)

// Reason says why records were dropped; it is the metric's reason
// attribute and the report event's.
type Reason string

const (
	// Rejected: Axiom refused the request for good (a 4xx other than 401,
	// 403, 413, 429 and 430).
	Rejected Reason = "rejected"
	// TooLarge: Axiom answered 413 to a request holding this record alone.
	TooLarge Reason = "too_large"
	// Shutdown: shutdown_timeout passed before Axiom took records held in
	// memory (a persistent queue keeps them instead).
	Shutdown Reason = "shutdown"
	// HeavierThanQueue: one record weighed more than the exporter's queue
	// ever admits (sending_queue.queue_size), so it could never be queued.
	HeavierThanQueue Reason = "heavier_than_queue"
	// BudgetFull: the memory and disk budgets were full and the source's
	// when_full policy dropped records (drop_oldest, drop_newest).
	BudgetFull Reason = "budget_full"
	// PipelineRejected: a processor or exporter after the receiver refused
	// records with a permanent error, so offering them again cannot help.
	PipelineRejected Reason = "pipeline_rejected"
)

// Loss is what was dropped by one component, for one signal and reason,
// between First and Last.
type Loss struct {
	Component string    `json:"component"` // the component's kind and ID: "exporter/axiom"
	Signal    string    `json:"signal"`    // logs, traces
	Reason    Reason    `json:"reason"`
	Items     int64     `json:"items"`
	Bytes     int64     `json:"bytes"`
	First     time.Time `json:"first"`
	Last      time.Time `json:"last"`
	// ID names the loss in the report it was first taken into (Take), and
	// in every repeat of that report.
	ID string `json:"id,omitempty"`
}

// logInterval is how often at most a Recorder logs per reason.
const logInterval = time.Minute

// Recorder records one component's drops.
type Recorder struct {
	component string
	ledger    *Ledger
	log       *zap.Logger
	items     metric.Int64Counter
	bytes     metric.Int64Counter
	metrics   *selfmetrics.Builder

	mu     sync.Mutex
	unsaid map[key]*Loss // since the last log line of each key
	said   map[key]time.Time
}

// NewRecorder registers the component's otelcol_<kind>_<type>_dropped_items
// and _dropped_bytes counters (scope is its metadata.ScopeName) and adds its
// drops to ledger, normally Default.
func NewRecorder(set component.TelemetrySettings, scope string, kind component.Kind, id component.ID, ledger *Ledger) (*Recorder, error) {
	b := selfmetrics.New(set, scope, kind, id)
	r := &Recorder{
		component: strings.ToLower(kind.String()) + "/" + id.String(),
		ledger:    ledger,
		log:       set.Logger,
		metrics:   b,
		unsaid:    map[key]*Loss{},
		said:      map[key]time.Time{},
	}
	r.items = b.Counter("dropped_items", "{item}", "Records (events, spans) accepted and then dropped, by reason; each is logged (at most once a minute per reason) and reported to Axiom's logs dataset.")
	r.bytes = b.Counter("dropped_bytes", "By", "Bytes of the records in dropped_items (as encoded when dropped).")
	return r, b.Err()
}

// Record counts items records of bytes bytes of signal dropped for reason.
func (r *Recorder) Record(signal string, reason Reason, items, bytes int) {
	if items <= 0 {
		return
	}
	now := time.Now()
	k := key{r.component, signal, reason}
	attrs := r.metrics.Attributes(attribute.String("signal", signal), attribute.String("reason", string(reason)))
	r.items.Add(context.Background(), int64(items), attrs)
	r.bytes.Add(context.Background(), int64(bytes), attrs)
	r.ledger.add(k, int64(items), int64(bytes), now)
	outcome.Dropped(string(reason), items)

	r.mu.Lock()
	loss := r.unsaid[k]
	if loss == nil {
		loss = &Loss{First: now}
		r.unsaid[k] = loss
	}
	loss.Items += int64(items)
	loss.Bytes += int64(bytes)
	loss.Last = now
	last, said := r.said[k]
	say := !said || now.Sub(last) >= logInterval
	var out Loss
	if say {
		out = *loss
		r.said[k] = now
		delete(r.unsaid, k)
	}
	r.mu.Unlock()
	if say {
		r.log.Error("Dropped records (logged at most once a minute per reason; reported to Axiom once it accepts data)",
			zap.String("signal", signal), zap.String("reason", string(reason)),
			zap.Int64("records", out.Items), zap.Int64("bytes", out.Bytes),
			zap.Time("since", out.First))
	}
}
