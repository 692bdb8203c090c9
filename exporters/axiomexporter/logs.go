package axiomexporter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"

	"github.com/sidecarhq/sidecar/internal/axiomclient"
	"github.com/sidecarhq/sidecar/internal/outcome"
	"github.com/sidecarhq/sidecar/internal/rawevent"
)

// maxEventsPerRequest is Axiom's documented limit per ingest request.
const maxEventsPerRequest = 10_000

// logsExporter sends log records to Axiom's ingest API as native events
// through axiomclient, which reads Axiom's answers by status; deliver
// retries.
type logsExporter struct {
	*base
	axiom     *axiomclient.Client
	encoders  *encoderPool
	maxEvents int
	weigher   *logsWeigher
	// accepting: Axiom accepted the last request, so the report of drops
	// made since may still go at shutdown (see shutdown).
	accepting atomic.Bool
}

func newLogsExporter(cfg *Config, set exporter.Settings) (*logsExporter, error) {
	b, err := newBase(cfg, set, "logs", cfg.LogsDataset, cfg.LogsDataset+".ndjson")
	if err != nil {
		return nil, err
	}
	return &logsExporter{base: b, encoders: newEncoderPool(), maxEvents: maxEventsPerRequest, weigher: newLogsWeigher(cfg.batchBytes())}, nil
}

func (e *logsExporter) start(ctx context.Context, host component.Host) error {
	if err := e.base.start(ctx, host, "logs"); err != nil || e.localPath != "" {
		return err
	}
	e.axiom = &axiomclient.Client{
		HTTP:      e.client, // adds org_id and the configured headers
		URL:       axiomclient.IngestURL(e.cfg.apiBaseURL(), e.cfg.Edge != "", e.dataset),
		Token:     string(e.cfg.Token),
		UserAgent: "sidecar-axiom-exporter",
	}
	if e.cfg.CheckToken {
		go e.checkToken()
	}
	return e.keepLedger(ctx)
}

// pushLogs encodes ld into requests of at most maxEvents events and at
// most the batch's bytes (uncompressed). A batch of the sending queue is
// one request by construction (logsbatch.go): the cut here is for logs
// pushed with the queue turned off, or queued by an earlier version. Each
// request is retried on its own (see deliver), so nothing Axiom accepted is
// sent twice; a request rejected for good does not stop the others.
func (e *logsExporter) pushLogs(ctx context.Context, enc *encoder, ld plog.Logs) error {
	ctx, end := e.pushStarted(ctx)
	defer end()
	now := time.Now()
	maxBytes := int(e.cfg.batchBytes())
	var (
		start     logPosition // first record of the pending request
		n         int
		permanent error
	)
	flush := func() error {
		from, count := start, n
		err := e.sent(e.send(ctx, enc, enc.events, enc.ends, func(enc *encoder) (int, int) {
			return e.reencodeChecked(enc, ld, from, count, now)
		}), n, &permanent)
		enc.events, enc.ends, n = enc.events[:0], enc.ends[:0], 0
		return err
	}
	enc.events, enc.ends = enc.events[:0], enc.ends[:0]
	walk := walkRecords(ld, logPosition{}, enc.resource, enc.shared, enc.head)
	for walk.next() {
		mark := len(enc.events)
		enc.events = walk.appendEvent(enc.events, &enc.attrs, now)
		if n > 0 && len(enc.events) > maxBytes {
			// This event does not fit: send the ones before it and
			// begin the next request with it.
			enc.carry = append(enc.carry[:0], enc.events[mark:]...)
			enc.events = enc.events[:mark]
			if err := flush(); err != nil {
				return err
			}
			enc.events = append(enc.events, enc.carry...)
		}
		if n == 0 {
			start = walk.at()
		}
		enc.ends = append(enc.ends, len(enc.events))
		if n++; n == e.maxEvents || len(enc.events) >= maxBytes {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	enc.resource, enc.shared, enc.head = walk.resource, walk.shared, walk.head // the buffers, grown
	if n > 0 {
		if err := flush(); err != nil {
			return err
		}
	}
	return permanent
}

// pushEvents sends events read back from the disk queue as they are, in
// requests cut as pushLogs cuts (a batch is one request by construction).
func (e *logsExporter) pushEvents(ctx context.Context, enc *encoder, r *eventsRequest) error {
	ctx, end := e.pushStarted(ctx)
	defer end()
	maxBytes := int(e.cfg.batchBytes())
	var permanent error
	for first := 0; first < len(r.ends); {
		from := 0
		if first > 0 {
			from = r.ends[first-1]
		}
		last := first + 1 // one past the request's last event
		for last < len(r.ends) && last-first < e.maxEvents && r.ends[last]-from <= maxBytes {
			last++
		}
		events, ends := r.events[from:r.ends[last-1]], r.ends[first:last]
		if from > 0 {
			ends = make([]int, len(ends))
			for i, end := range r.ends[first:last] {
				ends[i] = end - from
			}
		}
		err := e.send(ctx, enc, events, ends, func(enc *encoder) (int, int) { return mendEvents(enc, events, ends) })
		if err := e.sent(err, len(ends), &permanent); err != nil {
			return err
		}
		first = last
	}
	return permanent
}

// mendEvents is reencodeChecked for events read back from the disk queue,
// whose records are gone: it writes events into enc.events again, each
// newline inside an event (a one-line raw body's, which the receiver
// vouched for) turned into a space, and each event that is then not valid
// JSON sent as a message event holding its text.
func mendEvents(enc *encoder, events []byte, ends []int) (broken, mended int) {
	enc.events, enc.ends = enc.events[:0], enc.ends[:0]
	start := 0
	for _, end := range ends {
		line := events[start : end-1] // without its newline
		mark := len(enc.events)
		enc.events = append(enc.events, line...)
		if bytes.IndexByte(line, '\n') >= 0 {
			mended++
			for i := mark; i < len(enc.events); i++ {
				if enc.events[i] == '\n' {
					enc.events[i] = ' '
				}
			}
		}
		if !utf8.Valid(enc.events[mark:]) || !json.Valid(enc.events[mark:]) {
			broken++
			text := string(enc.events[mark:])
			enc.events = append(appendString(append(enc.events[:mark], `{"message":`...), text), '}')
		}
		enc.events = append(enc.events, '\n')
		enc.ends = append(enc.ends, len(enc.events))
		start = end
	}
	return broken, mended
}

// recordWalk steps through the records of a plog.Logs in order, with what
// an event is made of besides its record (eventScope: the resource's
// attributes encoded once per resource, a raw scope's shared ones once per
// scope). It is a loop's state rather than a callback: the step to the next
// record of the same scope is inlined, so a record costs no call there.
// Each walk needs buffers of its own (a walk nested in another, as a
// request re-encoded in the middle of a push, must not write over the
// outer one's).
type recordWalk struct {
	eventScope
	from         logPosition
	rls          plog.ResourceLogsSlice
	rl           plog.ResourceLogs
	sls          plog.ScopeLogsSlice
	sl           plog.ScopeLogs
	lrs          plog.LogRecordSlice
	i, j, k      int // the resource and scope entered, and the record after the current one
	scopes, recs int // sls.Len() and lrs.Len()
}

// walkRecords starts a walk of ld's records from the position from on;
// resource, shared and head are the buffers the walk encodes resources,
// shared attributes and heads into.
func walkRecords(ld plog.Logs, from logPosition, resource, shared, head []byte) recordWalk {
	return recordWalk{from: from, rls: ld.ResourceLogs(), i: from.resource - 1, j: -1,
		eventScope: eventScope{resource: resource[:0], shared: shared[:0], head: head[:0]}}
}

// next moves to the next record and reports whether there was one.
func (w *recordWalk) next() bool {
	if w.k < w.recs {
		w.k++
		return true
	}
	return w.nextScope()
}

// nextScope enters the next scope that has records left (from the walk's
// start on) and moves to its first one.
func (w *recordWalk) nextScope() bool {
	for {
		for w.j++; w.j >= w.scopes; w.j++ {
			if w.i++; w.i >= w.rls.Len() {
				w.recs, w.k = 0, 0
				return false
			}
			w.rl = w.rls.At(w.i)
			w.resource = appendResource(w.resource[:0], w.rl)
			w.sls = w.rl.ScopeLogs()
			w.scopes, w.j = w.sls.Len(), -1
			if w.i == w.from.resource {
				w.j = w.from.scope - 1
			}
		}
		w.sl = w.sls.At(w.j)
		w.raw, w.oneLine = rawevent.IsRawScope(w.sl), rawevent.IsOneLineScope(w.sl)
		w.shared, w.sharedAttrs = w.shared[:0], pcommon.Map{}
		if attrs, ok := rawevent.Shared(w.sl); ok {
			w.shared, w.sharedAttrs = appendMap(w.shared, attrs), attrs
		}
		w.head = w.head[:0]
		if w.raw && (len(w.shared) > 0 || len(w.resource) > 0) {
			w.head = appendHead(w.head, w.shared, w.resource)
		}
		w.lrs = w.sl.LogRecords()
		w.recs, w.k = w.lrs.Len(), 0
		if w.i == w.from.resource && w.j == w.from.scope {
			w.k = w.from.record
		}
		if w.k < w.recs {
			w.k++
			return true
		}
	}
}

// appendEvent appends the current record's event: appendEvent's line, and
// for the receivers' raw records the same line without its calls: a string
// body that is an object alone (Str is "" for other bodies) of a record
// without attributes of its own is the event as it is in a one-line raw
// scope without a resource or shared attributes (stdin's), else follows the
// scope's head (Forward's, files').
func (w *recordWalk) appendEvent(b []byte, attrs *attrsJSON, now time.Time) []byte {
	lr := w.record()
	body := lr.Body().Str()
	switch {
	case w.oneLine && len(w.resource) == 0 && len(w.shared) == 0 && isBareObject(body) && lr.Attributes().Len() == 0:
		return append(append(b, body...), '\n')
	case len(w.head) > 0 && isBareObject(body) && lr.Attributes().Len() == 0:
		return appendAfterHead(append(b, w.head...), body, w.oneLine)
	default:
		return appendEvent(b, lr, &w.eventScope, attrs, now)
	}
}

// appendEventAfterHead is appendEvent without the scope's head when the
// event begins with it, and says whether it does: what the disk queue
// stores (queuedevents keeps each head once).
func (w *recordWalk) appendEventAfterHead(b []byte, attrs *attrsJSON, now time.Time) ([]byte, bool) {
	lr := w.record()
	if body := lr.Body().Str(); len(w.head) > 0 && isBareObject(body) && lr.Attributes().Len() == 0 {
		return appendAfterHead(b, body, w.oneLine), true
	}
	return w.appendEvent(b, attrs, now), false
}

// record is the current record.
func (w *recordWalk) record() plog.LogRecord { return w.lrs.At(w.k - 1) }

// at is the current record's position.
func (w *recordWalk) at() logPosition { return logPosition{w.i, w.j, w.k - 1} }

// appendResource encodes the resource attributes of rl, or nothing when
// there are none.
func appendResource(b []byte, rl plog.ResourceLogs) []byte {
	if attrs := rl.Resource().Attributes(); attrs.Len() > 0 {
		return appendMap(b, attrs)
	}
	return b
}

// sent counts what send did with a request of n events: delivered, or
// dropped for good (kept in permanent, and the next requests go on). Any
// other error, a shutdown's, is returned: the rest would be cut off too.
func (e *logsExporter) sent(err error, n int, permanent *error) error {
	if err == nil || consumererror.IsPermanent(err) {
		e.finished(n)
	}
	switch {
	case err == nil:
		outcome.Delivered(n)
		return nil
	case consumererror.IsPermanent(err):
		*permanent = err
		return nil
	default:
		return err
	}
}

// send delivers events (NDJSON, ends the end offset of each event in it) as
// one request. A 400 may come from a raw body that breaks the rawevent
// contract (not valid JSON, or a newline in a one-line scope): then mend
// writes the events again into enc.events and enc.ends, broken ones sent as
// messages, newlines turned into spaces, and they are sent once more, so
// that one bad line does not cost the other events of its request.
func (e *logsExporter) send(ctx context.Context, enc *encoder, events []byte, ends []int, mend func(*encoder) (broken, mended int)) error {
	if e.file != nil {
		return e.file.write(events)
	}
	n := len(ends)
	enc.compressed = enc.zstd.EncodeAll(events, enc.compressed[:0])
	err := e.deliver(ctx, n, func(ctx context.Context) error { return e.ingest(ctx, enc.compressed, n) })
	if status := statusOf(err); status == http.StatusBadRequest {
		if broken, mended := mend(enc); broken > 0 || mended > 0 {
			if broken > 0 {
				e.set.Logger.Warn("raw log events were not valid JSON; sent them as message events",
					zap.String("dataset", e.dataset), zap.Int("events", broken))
			}
			if mended > 0 { // a receiver marked them one-line: its contract, broken
				e.set.Logger.Warn("one-line raw log events held a newline; sent them with a space instead",
					zap.String("dataset", e.dataset), zap.Int("events", mended))
			}
			events, ends = enc.events, enc.ends
			enc.compressed = enc.zstd.EncodeAll(events, enc.compressed[:0])
			err = e.deliver(ctx, n, func(ctx context.Context) error { return e.ingest(ctx, enc.compressed, n) })
		}
	}
	if statusOf(err) == http.StatusRequestEntityTooLarge {
		return e.sendHalves(ctx, events, ends)
	}
	if status := statusOf(err); status > 0 && consumererror.IsPermanent(err) {
		return e.rejected(status, n, len(events), err)
	}
	return err
}

// sendHalves delivers the events of a request Axiom found too large (413)
// as two requests, and each half that is still too large as two again,
// down to a single event, which is dropped and counted. events holds the
// NDJSON, ends the end offset of each event in it.
func (e *logsExporter) sendHalves(ctx context.Context, events []byte, ends []int) error {
	if len(ends) == 1 {
		return e.tooLarge(1, len(events))
	}
	mid := len(ends) / 2
	cut := ends[mid-1]
	lower := ends[:mid]
	upper := make([]int, len(ends)-mid)
	for i, end := range ends[mid:] {
		upper[i] = end - cut
	}
	var errs []error
	for _, half := range []struct {
		events []byte
		ends   []int
	}{{events[:cut], lower}, {events[cut:], upper}} {
		n := len(half.ends)
		body := e.compressHalf(half.events)
		err := e.deliver(ctx, n, func(ctx context.Context) error { return e.ingest(ctx, body, n) })
		switch status := statusOf(err); {
		case err == nil:
		case status == http.StatusRequestEntityTooLarge:
			err = e.sendHalves(ctx, half.events, half.ends)
		case status > 0 && consumererror.IsPermanent(err):
			err = e.rejected(status, n, len(half.events), err)
		}
		if err != nil && !consumererror.IsPermanent(err) {
			return err // cut off by shutdown: the whole request stays queued
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// compressHalf compresses part of a request with an encoder of its own:
// the caller's buffers still hold the whole request.
func (e *logsExporter) compressHalf(events []byte) []byte {
	enc := e.encoders.get()
	defer e.encoders.put(enc)
	return enc.zstd.EncodeAll(events, nil)
}

// statusOf is the HTTP status of an Axiom answer error, 0 for none.
func statusOf(err error) int {
	var answerErr *axiomclient.Error
	if errors.As(err, &answerErr) {
		return answerErr.Status
	}
	return 0
}

// reencodeChecked encodes the n records of ld from start into enc.events
// again, validating every raw body and looking for newlines in all of them;
// it returns how many were broken, and how many one-line bodies held a
// newline (mended: it is now a space).
func (e *logsExporter) reencodeChecked(enc *encoder, ld plog.Logs, start logPosition, n int, now time.Time) (broken, mended int) {
	enc.events, enc.ends = enc.events[:0], enc.ends[:0]
	// Buffers of its own: pushLogs' walk, which this one interrupts,
	// still holds its resource and shared attributes in enc's.
	walk := walkRecords(ld, start, nil, nil, nil)
	for ; n > 0 && walk.next(); n-- {
		lr := walk.record()
		if walk.raw && !validRawBody(lr.Body()) {
			broken++
			enc.events = appendMappedEvent(enc.events, lr, &walk.eventScope, now)
		} else {
			if walk.oneLine && strings.Contains(lr.Body().Str(), "\n") {
				mended++
			}
			checked := walk.eventScope
			checked.oneLine = false
			enc.events = appendEvent(enc.events, lr, &checked, &enc.attrs, now)
		}
		enc.ends = append(enc.ends, len(enc.events))
	}
	return broken, mended
}

// validRawBody is the full check the hot path skips: one JSON object in
// valid UTF-8.
func validRawBody(body pcommon.Value) bool {
	if body.Type() != pcommon.ValueTypeStr {
		return true // not spliced: appendEvent maps it normally
	}
	obj, ok := rawObject(body.Str())
	return !ok || utf8.ValidString(obj) && json.Valid([]byte(obj))
}

// ingest makes one ingest request with a ready zstd body of n events.
func (e *logsExporter) ingest(ctx context.Context, body []byte, n int) error {
	status, err := e.axiom.Ingest(ctx, body, n)
	if err != nil {
		return e.ingestError(ctx, err)
	}
	e.tel.request(ctx, status.Code)
	e.accepted()
	e.accepting.Store(true)
	e.reportLosses(ctx)
	e.tel.sent.Add(ctx, int64(status.Ingested), e.tel.signalAttributes)
	if status.Failed > 0 {
		e.tel.failed.Add(ctx, int64(status.Failed), e.tel.signalAttributes)
		if e.partialLogged.allow(time.Now()) {
			e.set.Logger.Warn("Axiom did not ingest some events (logged at most once a minute, counted in otelcol_exporter_axiom_failed_items)",
				zap.String("dataset", e.dataset), zap.Uint64("failed", status.Failed),
				zap.Uint64("ingested", status.Ingested), zap.String("first_reason", status.FirstFailure))
		}
	}
	return nil
}

// ingestError turns a failed ingest into what deliver and exporterhelper
// act on, by the answer's status (see axiomclient.Classify).
func (e *logsExporter) ingestError(ctx context.Context, err error) error {
	e.accepting.Store(false)
	var answerErr *axiomclient.Error
	if !errors.As(err, &answerErr) {
		e.tel.request(ctx, 0)
		return err // transport error: back off and retry
	}
	e.tel.request(ctx, answerErr.Status)
	if refusedToken(answerErr.Status) {
		return e.tokenRefused(answerErr.Status, err)
	}
	switch answerErr.Kind {
	case axiomclient.Throttle:
		return retryError(err, answerErr.Reset) // no reset: back off normally
	case axiomclient.Permanent:
		return consumererror.NewPermanent(err) // counted and logged by send
	default:
		return err
	}
}

// logPosition addresses a log record inside a plog.Logs.
type logPosition struct{ resource, scope, record int }
