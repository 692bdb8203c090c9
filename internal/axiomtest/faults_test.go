package axiomtest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestFaultsAreServedInOrderPerDataset(t *testing.T) {
	srv := NewForTest(t)
	srv.Fail("a", Status(500), Status(502))
	srv.Fail("", Status(503))
	send := func(ds string) int {
		code, _, _ := post(t, srv.URL()+"/v1/datasets/"+ds+"/ingest", ingestHeader("application/x-ndjson"), []byte(ndjson2))
		return code
	}
	got := []int{send("b"), send("a"), send("a"), send("a"), send("b")}
	want := []int{503, 500, 502, 200, 200}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("statuses %v, want %v", got, want)
		}
	}
	if srv.EventCount("a") != 2 || srv.EventCount("b") != 2 {
		t.Errorf("events a=%d b=%d", srv.EventCount("a"), srv.EventCount("b"))
	}
	reqs := srv.Requests()
	if len(reqs) != 5 || reqs[0].Status != 503 || reqs[0].Dataset != "b" || reqs[1].Events != 0 || reqs[3].Events != 2 {
		t.Errorf("requests %+v", reqs)
	}
}

func TestCatchAllFaultHitsAnyRoute(t *testing.T) {
	srv := NewForTest(t)
	srv.Fail("", Status(502), Status(502))
	if code, _, _ := post(t, srv.URL()+"/nowhere", ingestHeader("application/json"), nil); code != 502 {
		t.Errorf("unknown route: %d", code)
	}
	h := ingestHeader("application/x-protobuf")
	if code, _, _ := post(t, srv.URL()+"/v1/traces", h, nil); code != 502 {
		t.Errorf("OTLP without dataset: %d", code)
	}
	if code, _, _ := post(t, srv.URL()+"/nowhere", ingestHeader("application/json"), nil); code != 404 {
		t.Errorf("after faults: %d", code)
	}
}

func TestStatusFaultBodies(t *testing.T) {
	srv := NewForTest(t)
	srv.Fail("d", Status(400), Status(503), Fault{Status: 413, Body: "too big", Header: http.Header{"Content-Type": {"text/plain"}, "X-Custom": {"1"}}})
	code, hdr, body := post(t, srv.URL()+"/v1/datasets/d/ingest", ingestHeader("application/x-ndjson"), []byte(ndjson2))
	if code != 400 || body != `{"code":400,"message":"Bad Request"}` || hdr.Get("Content-Type") != "application/json" {
		t.Errorf("400: %d %q %q", code, body, hdr.Get("Content-Type"))
	}
	code, hdr, body = post(t, srv.URL()+"/v1/datasets/d/ingest", ingestHeader("application/x-ndjson"), []byte(ndjson2))
	if code != 503 || body != "Service Unavailable\n" || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") {
		t.Errorf("503: %d %q %q", code, body, hdr.Get("Content-Type"))
	}
	code, hdr, body = post(t, srv.URL()+"/v1/datasets/d/ingest", ingestHeader("application/x-ndjson"), []byte(ndjson2))
	if code != 413 || body != "too big" || hdr.Get("X-Custom") != "1" {
		t.Errorf("custom: %d %q %v", code, body, hdr)
	}
	if st := srv.Stats().Datasets["d"]; st.Rejected != 3 || st.Events != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestRateLimitHeaders(t *testing.T) {
	srv := NewForTest(t)
	reset := time.Unix(1767225600, 0)
	srv.Fail("d", RateLimited(reset), IngestLimited(reset))
	code, hdr, body := post(t, srv.URL()+"/v1/datasets/d/ingest", ingestHeader("application/x-ndjson"), []byte(ndjson2))
	if code != 429 || body != `{"message":"rate limit exceeded"}` || hdr.Get("X-RateLimit-Reset") != "1767225600" ||
		hdr.Get("X-RateLimit-Scope") == "" || hdr.Get("X-RateLimit-Limit") == "" || hdr.Get("X-RateLimit-Remaining") != "0" {
		t.Errorf("429: %d %q %v", code, body, hdr)
	}
	code, hdr, body = post(t, srv.URL()+"/v1/datasets/d/ingest", ingestHeader("application/x-ndjson"), []byte(ndjson2))
	if code != 430 || body != `{"message":"ingest limit exceeded"}` || hdr.Get("X-IngestLimit-Reset") != "1767225600" ||
		hdr.Get("X-IngestLimit-Limit") == "" || hdr.Get("X-IngestLimit-Remaining") != "0" {
		t.Errorf("430: %d %q %v", code, body, hdr)
	}
}

func TestConnResetIsSeenByTheClient(t *testing.T) {
	srv := NewForTest(t)
	srv.Fail("d", ConnReset())
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	req, _ := http.NewRequest(http.MethodPost, srv.URL()+"/v1/datasets/d/ingest", strings.NewReader(ndjson2))
	req.Header = ingestHeader("application/x-ndjson")
	resp, err := client.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("got status %d, want a connection reset", resp.StatusCode)
	}
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("error %v is not a connection reset", err)
	}
	if code, _, _ := post(t, srv.URL()+"/v1/datasets/d/ingest", ingestHeader("application/x-ndjson"), []byte(ndjson2)); code != 200 {
		t.Errorf("after reset: %d", code)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].Status != 0 || srv.EventCount("d") != 2 || srv.Stats().Datasets["d"].Rejected != 1 {
		t.Errorf("requests %+v", reqs)
	}
}

func TestSlowFault(t *testing.T) {
	srv := NewForTest(t)
	// A delay far beyond the client's patience: the client gives up, the
	// server stores nothing and does not hang.
	srv.Fail("d", Slow(time.Hour), Fault{Status: 500, Delay: time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+"/v1/datasets/d/ingest", strings.NewReader(ndjson2))
	req.Header = ingestHeader("application/x-ndjson")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("slow answer arrived before the client deadline")
	}
	if code, _, _ := post(t, srv.URL()+"/v1/datasets/d/ingest", ingestHeader("application/x-ndjson"), []byte(ndjson2)); code != 500 {
		t.Errorf("delayed 500: got %d", code)
	}
	srv.Fail("d", Slow(time.Millisecond))
	if code, _, _ := post(t, srv.URL()+"/v1/datasets/d/ingest", ingestHeader("application/x-ndjson"), []byte(ndjson2)); code != 200 {
		t.Errorf("slow success: got %d", code)
	}
	if err := srv.WaitEvents("d", 2, 10*time.Second); err != nil {
		t.Error(err)
	}
	if n := srv.EventCount("d"); n != 2 {
		t.Errorf("%d events, want only the slow success's 2", n)
	}
}

func TestCloseEndsPendingDelay(t *testing.T) {
	srv, err := New()
	if err != nil {
		t.Fatal(err)
	}
	srv.Fail("", Slow(time.Hour))
	errc := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, srv.URL()+"/v1/datasets/d/ingest", strings.NewReader(ndjson2))
		req.Header = ingestHeader("application/x-ndjson")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	waitUntil(t, func() bool { // the request has taken the fault and is waiting
		srv.mu.Lock()
		defer srv.mu.Unlock()
		return len(srv.faults) == 0
	})
	srv.Close()
	if err := <-errc; err == nil {
		t.Error("request succeeded after Close")
	}
}

func TestPartialFailureRaw(t *testing.T) {
	for _, countOnly := range []bool{false, true} {
		opts := []Option{}
		if countOnly {
			opts = append(opts, WithCountOnly())
		}
		srv := NewForTest(t, opts...)
		srv.Fail("d", PartialFailure(2))
		body := "{\"n\":0}\n{\"n\":1}\n{\"n\":2}\n"
		code, _, resp := post(t, srv.URL()+"/v1/datasets/d/ingest", ingestHeader("application/x-ndjson"), []byte(body))
		if code != 200 || !strings.HasPrefix(resp, `{"ingested":1,"failed":2,"failures":[{"timestamp":"`) {
			t.Errorf("count-only %v: %d %s", countOnly, code, resp)
		}
		if srv.EventCount("d") != 1 {
			t.Errorf("count-only %v: %d events", countOnly, srv.EventCount("d"))
		}
		if !countOnly && srv.Events("d")[0]["n"] != json.Number("2") {
			t.Errorf("kept %v, want the last event", srv.Events("d")[0])
		}
	}
}

// waitUntil polls cond; the deadline only guards against a hang.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
	}
}

func TestAnswerShapeFaults(t *testing.T) {
	srv := NewForTest(t)
	rate, month := time.Unix(1767225600, 0), time.Unix(1769904000, 0)
	srv.Fail("d",
		Accepted("text/plain; charset=utf-8", "OK\n"),
		Status(400).WithBody("application/json", ""),
		RateLimited(rate).WithIngestLimit(month).WithBody("text/plain", "Too Many Requests").WithRetryAfter(30*time.Second),
		IngestLimited(month).WithRateLimit(rate),
	)
	url := srv.URL() + "/v1/datasets/d/ingest"
	code, hdr, body := post(t, url, ingestHeader("application/x-ndjson"), []byte(ndjson2))
	if code != 200 || body != "OK\n" || hdr.Get("Content-Type") != "text/plain; charset=utf-8" || srv.EventCount("d") != 2 {
		t.Errorf("accepted as text: %d %q %v, %d events", code, body, hdr, srv.EventCount("d"))
	}
	code, hdr, body = post(t, url, ingestHeader("application/x-ndjson"), []byte(ndjson2))
	if code != 400 || body != "" || hdr.Get("Content-Type") != "application/json" {
		t.Errorf("empty JSON error: %d %q %v", code, body, hdr)
	}
	code, hdr, body = post(t, url, ingestHeader("application/x-ndjson"), []byte(ndjson2))
	if code != 429 || body != "Too Many Requests" || hdr.Get("Content-Type") != "text/plain" || hdr.Get("Retry-After") != "30" ||
		hdr.Get("X-RateLimit-Reset") != "1767225600" || hdr.Get("X-IngestLimit-Reset") != "1769904000" {
		t.Errorf("429 plain: %d %q %v", code, body, hdr)
	}
	code, hdr, _ = post(t, url, ingestHeader("application/x-ndjson"), []byte(ndjson2))
	if code != 430 || hdr.Get("X-RateLimit-Reset") != "1767225600" || hdr.Get("X-IngestLimit-Reset") != "1769904000" {
		t.Errorf("430 with rate headers: %d %v", code, hdr)
	}
	if srv.EventCount("d") != 2 {
		t.Errorf("%d events stored, want the 2 of the accepted request", srv.EventCount("d"))
	}
}

func TestFaultModifiersDoNotShareHeaders(t *testing.T) {
	base := RateLimited(time.Unix(1, 0))
	_ = base.WithBody("text/plain", "x").WithRetryAfter(time.Second)
	if base.Header.Get("Content-Type") != "application/json" || base.Header.Get("Retry-After") != "" {
		t.Errorf("modifier changed the original fault: %v", base.Header)
	}
}

func TestOutageLastsUntilEnded(t *testing.T) {
	srv := NewForTest(t)
	srv.Outage("a", Status(503))
	srv.Fail("a", Status(429))
	send := func(ds string) int {
		code, _, _ := post(t, srv.URL()+"/v1/datasets/"+ds+"/ingest", ingestHeader("application/x-ndjson"), []byte(ndjson2))
		return code
	}
	got := []int{send("a"), send("a"), send("a"), send("b")}
	srv.EndOutage("a")
	got = append(got, send("a"))
	if want := []int{429, 503, 503, 200, 200}; !slices.Equal(got, want) {
		t.Fatalf("statuses %v, want %v", got, want)
	}
	if srv.EventCount("a") != 2 {
		t.Errorf("%d events in a, want 2 (only after the outage)", srv.EventCount("a"))
	}
}

func TestMaxBodyBytes(t *testing.T) {
	srv := NewForTest(t, WithMaxBodyBytes(int64(len(ndjson2))))
	url := srv.URL() + "/v1/datasets/a/ingest"
	if code, _, _ := post(t, url, ingestHeader("application/x-ndjson"), []byte(ndjson2)); code != 200 {
		t.Errorf("a body of exactly the limit: %d", code)
	}
	if code, _, _ := post(t, url, ingestHeader("application/x-ndjson"), []byte(ndjson2+"\n")); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a body one byte over the limit: %d, want 413", code)
	}
}
