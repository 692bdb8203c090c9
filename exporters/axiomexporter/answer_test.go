package axiomexporter

import (
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestClassifyStatus(t *testing.T) {
	for status, want := range map[int]answerKind{
		400: answerPermanent, 401: answerPermanent, 403: answerPermanent, 404: answerPermanent, 413: answerPermanent,
		408: answerRetry, 500: answerRetry, 502: answerRetry, 503: answerRetry, 504: answerRetry,
		429: answerThrottle, 430: answerThrottle,
	} {
		if got := classifyStatus(status); got != want {
			t.Errorf("classifyStatus(%d) = %v, want %v", status, got, want)
		}
	}
}

func TestRetryErrorWait(t *testing.T) {
	base := errors.New("limited")
	var limited *limitedError
	if err := retryError(base, time.Time{}); err != base {
		t.Errorf("unknown reset: got %v, want the plain error for backoff", err)
	}
	if err := retryError(base, time.Now().Add(72*time.Hour)); !errors.As(err, &limited) || limited.wait != maxThrottleWait {
		t.Errorf("far reset: wait not capped to %v: %v", maxThrottleWait, err)
	}
	if err := retryError(base, time.Now().Add(-time.Hour)); !errors.As(err, &limited) || limited.wait != 0 {
		t.Errorf("past reset: want no wait, got %v", err)
	}
	if !errors.Is(retryError(base, time.Now().Add(time.Second)), base) {
		t.Error("the throttle error must wrap the original")
	}
}

func TestResetFromHeaders(t *testing.T) {
	h := http.Header{}
	if !resetFromHeaders(h).IsZero() {
		t.Error("no headers: want zero")
	}
	h.Set("Retry-After", "30")
	if got := time.Until(resetFromHeaders(h)); got <= 0 || got > 30*time.Second {
		t.Errorf("Retry-After 30: reset in %v", got)
	}
	h.Set("X-RateLimit-Reset", "1796040000")
	if got := resetFromHeaders(h); got.Unix() != 1796040000 {
		t.Errorf("rate reset = %v", got)
	}
	h.Set("X-IngestLimit-Reset", "1796040060")
	if got := resetFromHeaders(h); got.Unix() != 1796040060 {
		t.Errorf("ingest reset should win, got %v", got)
	}
}
