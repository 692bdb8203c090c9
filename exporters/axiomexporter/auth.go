package axiomexporter

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.uber.org/zap"
)

// A token Axiom refuses (401, 403) is a configuration error that a fixed
// token or a re-enabled one ends; the data is not at fault. So the data is
// held (retried with backoff, on disk within the disk budget) instead of
// dropped, the exporter reports itself unhealthy through component status
// (the health_check extension answers 500 with the reason, `sidecar
// status` prints it), sets otelcol_exporter_axiom_token_refused, and says
// so in one line at most once a minute. Axiom unreachable or answering
// errors is reported the same way, without the metric (the requests
// counter has the statuses). A restart fixes neither, so the liveness
// check passes through both.

// refusedToken reports whether status means Axiom refused the token.
func refusedToken(status int) bool {
	return status == http.StatusUnauthorized || status == http.StatusForbidden
}

// healthState is what the exporter last reported to component status.
type healthState int

const (
	healthOK      healthState = iota
	healthRefused             // Axiom refuses the token
	healthFailing             // Axiom unreachable or answering errors
)

// health tracks what the exporter last reported to the host's component
// status: a refused token or failing sends, or OK again once Axiom
// accepts data.
type health struct {
	mu     sync.Mutex
	host   component.Host
	state  healthState
	logged everyInterval
}

func (h *health) setHost(host component.Host) {
	h.mu.Lock()
	h.host = host
	h.mu.Unlock()
}

// move goes to state to when from accepts the current one, and reports
// the event to the host under the lock, so that reports from concurrent
// sends arrive in the order the state changed. It returns the state it
// left and whether it moved.
func (h *health) move(from func(healthState) bool, to healthState, event func() *componentstatus.Event) (healthState, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	was := h.state
	if !from(was) {
		return was, false
	}
	h.state = to
	if h.host != nil {
		componentstatus.ReportStatus(h.host, event())
	}
	return was, true
}

// tokenRefused reports the exporter unhealthy (once per episode) and logs
// at most once a minute. It returns the error deliver retries.
func (b *base) tokenRefused(status int, err error) error {
	reason := fmt.Errorf("Axiom refused the token (%d %s) for dataset %q: fix %s; until then data is held, on disk within the disk budget: %w",
		status, http.StatusText(status), b.dataset, tokenEnvVar, err)
	notRefused := func(s healthState) bool { return s != healthRefused }
	if _, moved := b.health.move(notRefused, healthRefused, func() *componentstatus.Event {
		return componentstatus.NewRecoverableErrorEvent(reason)
	}); moved {
		b.tel.tokenRefused.Record(context.Background(), 1, b.tel.signalAttributes)
	}
	if b.health.logged.allow(time.Now()) {
		b.set.Logger.Error("Axiom refused the token; holding data and retrying (logged at most once a minute)",
			zap.String("dataset", b.dataset), zap.Int("status", status), zap.Error(err))
	}
	return reason
}

// failing reports the exporter unhealthy, once per episode, when a send
// that will be retried failed for another reason than the token (which
// tokenRefused reports, and which stays the reason until Axiom accepts).
func (b *base) failing(err error) {
	ok := func(s healthState) bool { return s == healthOK }
	b.health.move(ok, healthFailing, func() *componentstatus.Event {
		return componentstatus.NewRecoverableErrorEvent(
			fmt.Errorf("sending to Axiom (dataset %q) fails; data is held and retried: %w", b.dataset, err))
	})
}

// accepted reports the exporter healthy again after a refused token or
// failing sends.
func (b *base) accepted() {
	notOK := func(s healthState) bool { return s != healthOK }
	was, moved := b.health.move(notOK, healthOK, func() *componentstatus.Event {
		return componentstatus.NewEvent(componentstatus.StatusOK)
	})
	if moved && was == healthRefused {
		b.tel.tokenRefused.Record(context.Background(), 0, b.tel.signalAttributes)
		b.set.Logger.Info("Axiom accepts the token again", zap.String("dataset", b.dataset))
	}
}

// checkToken makes one empty ingest request at start, so that a token
// Axiom refuses is said at once, in one clear line, not at the first
// batch. A network error says nothing: Axiom may come later.
func (e *logsExporter) checkToken() {
	ctx, cancel := context.WithTimeout(e.abortCtx, e.cfg.Timeout)
	defer cancel()
	enc := e.encoders.get()
	body := enc.zstd.EncodeAll(nil, nil)
	e.encoders.put(enc)
	st, err := e.axiom.Ingest(ctx, body, 0)
	status := statusOf(err)
	switch {
	case err == nil:
		e.tel.request(ctx, st.Code)
	case status > 0:
		e.tel.request(ctx, status)
	}
	if refusedToken(status) {
		_ = e.tokenRefused(status, err)
	}
}
