package axiomexporter

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.uber.org/zap"

	"github.com/sidecarhq/sidecar/internal/losses"
)

// reportLosses sends what the process dropped and has not reported yet
// (see internal/losses) as one event per component, signal and reason to
// the logs dataset: right after Axiom accepted a request, and at start when
// an earlier run left a report unsent. The gap then shows where the user
// looks, once Axiom takes data again. A report that fails is sent again,
// unchanged, with the next.
func (e *logsExporter) reportLosses(ctx context.Context) {
	report := e.ledger.Take()
	if len(report) == 0 {
		return
	}
	now := time.Now()
	var ndjson []byte
	for _, loss := range report {
		ndjson = append(ndjson, losses.Event(loss, now)...)
	}
	enc := e.encoders.get()
	body := enc.zstd.EncodeAll(ndjson, nil)
	e.encoders.put(enc)
	st, err := e.axiom.Ingest(ctx, body, len(report))
	e.ledger.Done(report, err == nil)
	if err != nil {
		e.set.Logger.Warn("Sending the report of dropped records to Axiom failed; it is kept for the next try", zap.Error(err))
		return
	}
	e.tel.request(ctx, st.Code)
}

// keepLedger keeps the report of dropped records in the queue's storage, so
// that it survives kill -9, and sends what an earlier run left unsent.
// Without storage the report lives in memory only. The ledger owns the
// storage client from then on and closes it once every exporter holding
// the ledger has stopped (see base.start and base.shutdown).
func (e *logsExporter) keepLedger(ctx context.Context) error {
	if e.storage == nil {
		return nil
	}
	client, err := e.storage.GetClient(ctx, component.KindExporter, e.set.ID, "losses")
	if err != nil {
		return err
	}
	if err := e.ledger.Keep(ctx, client, e.set.Logger); err != nil {
		e.set.Logger.Warn("The report of dropped records", zap.Error(err))
	}
	if e.ledger.Pending() {
		go e.reportLosses(e.abortCtx)
	}
	return nil
}

// shutdown sends, while Axiom still accepts data, the report of what was
// dropped since the last accepted request (such as what a source's
// when_full buffer dropped as the pipeline stopped): no later request would
// carry it. Receivers stop before exporters, so their drops are recorded by
// now; the send is bounded by shutdown_timeout (abortCtx). What is not sent
// stays in the queue's storage for the next start, with what exporters
// stopping after this one drop (base.shutdown releases the ledger). The
// encoders' goroutines end here: exporterhelper calls this last.
func (e *logsExporter) shutdown(ctx context.Context) error {
	if e.axiom != nil && e.accepting.Load() {
		e.reportLosses(e.abortCtx)
	}
	e.encoders.close()
	return e.base.shutdown(ctx)
}
