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
// (the health_check extension answers 503 with the reason), and says so in
// one line at most once a minute.

// refusedToken reports whether status means Axiom refused the token.
func refusedToken(status int) bool {
	return status == http.StatusUnauthorized || status == http.StatusForbidden
}

// health tracks what the exporter last reported to the host's component
// status: a refused token, or OK again once Axiom accepts data.
type health struct {
	mu      sync.Mutex
	host    component.Host
	refused bool
	logged  everyInterval
}

func (h *health) setHost(host component.Host) {
	h.mu.Lock()
	h.host = host
	h.mu.Unlock()
}

// tokenRefused reports the exporter unhealthy (once per episode) and logs
// at most once a minute. It returns the error deliver retries.
func (b *base) tokenRefused(status int, err error) error {
	h := &b.health
	h.mu.Lock()
	first := !h.refused
	h.refused = true
	host := h.host
	h.mu.Unlock()
	reason := fmt.Errorf("Axiom refused the token (%d %s) for dataset %q: fix %s; until then data is held, on disk within the disk budget: %w",
		status, http.StatusText(status), b.dataset, tokenEnvVar, err)
	if first && host != nil {
		componentstatus.ReportStatus(host, componentstatus.NewRecoverableErrorEvent(reason))
	}
	if h.logged.allow(time.Now()) {
		b.set.Logger.Error("Axiom refused the token; holding data and retrying (logged at most once a minute)",
			zap.String("dataset", b.dataset), zap.Int("status", status), zap.Error(err))
	}
	return reason
}

// accepted reports the exporter healthy again after a refused token.
func (b *base) accepted() {
	h := &b.health
	h.mu.Lock()
	was := h.refused
	h.refused = false
	host := h.host
	h.mu.Unlock()
	if was {
		b.set.Logger.Info("Axiom accepts the token again", zap.String("dataset", b.dataset))
		if host != nil {
			componentstatus.ReportStatus(host, componentstatus.NewEvent(componentstatus.StatusOK))
		}
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
