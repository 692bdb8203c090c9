package axiomexporter

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/sidecarhq/sidecar/internal/losses"
)

// reportLosses sends what the process dropped since the last report (see
// internal/losses) as one event per component, signal and reason to the
// logs dataset, right after Axiom accepted a request: the gap shows where
// the user looks, once Axiom takes data again. A report that fails is kept
// for the next accepted request.
func (e *logsExporter) reportLosses(ctx context.Context) {
	pending := e.ledger.Take()
	if len(pending) == 0 {
		return
	}
	now := time.Now()
	var ndjson []byte
	for _, loss := range pending {
		ndjson = append(ndjson, losses.Event(loss, now)...)
	}
	enc := e.encoders.get()
	body := enc.zstd.EncodeAll(ndjson, nil)
	e.encoders.put(enc)
	st, err := e.axiom.Ingest(ctx, body, len(pending))
	if err != nil {
		e.ledger.Restore(pending)
		e.set.Logger.Warn("Sending the report of dropped records to Axiom failed; it is kept for the next try", zap.Error(err))
		return
	}
	e.tel.request(ctx, st.Code)
}

// shutdown sends, while Axiom still accepts data, the report of what was
// dropped since the last accepted request (such as what a source's
// when_full buffer dropped as the pipeline stopped): no later request would
// carry it. Receivers stop before exporters, so their drops are recorded by
// now; the send is bounded by shutdown_timeout (abortCtx).
func (e *logsExporter) shutdown(ctx context.Context) error {
	if e.axiom != nil && e.accepting.Load() {
		e.reportLosses(e.abortCtx)
	}
	return e.base.shutdown(ctx)
}
