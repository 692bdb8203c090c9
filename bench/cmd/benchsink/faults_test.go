package main

import (
	"bytes"
	"context"
	"net/http"
	"testing"
)

func ndjson(n int) []byte {
	var b bytes.Buffer
	for range n {
		b.WriteString("{\"_time\":1,\"msg\":\"m\"}\n")
	}
	return b.Bytes()
}

func send(t *testing.T, url, path string, body []byte) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer xaat-test")
	req.Header.Set("Content-Type", "application/x-ndjson")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestDownRefusesEveryRequestAndCountsIt(t *testing.T) {
	f, err := newFaults(axiomDown, 0)
	if err != nil {
		t.Fatal(err)
	}
	srv := newTestSinkWith(t, f)
	for _, path := range []string{"/v1/ingest/bench", "/v1/logs", "/v1/traces"} {
		if code := send(t, srv.URL, path, ndjson(3)); code != http.StatusServiceUnavailable {
			t.Fatalf("POST %s: %d, want 503", path, code)
		}
	}
	// Stats still answer, and show nothing taken.
	if st := stats(t, srv.URL); st.Refused != 3 || st.Logs != 0 || st.Requests != 0 {
		t.Fatalf("stats %+v, want 3 refused and nothing taken", st)
	}
}

func TestSlowHoldsEachRequestBeforeTakingIt(t *testing.T) {
	f, err := newFaults(axiomSlow, 0)
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	f.pause = func(ctx context.Context) error {
		entered <- struct{}{}
		<-release
		return nil
	}
	srv := newTestSinkWith(t, f)
	done := make(chan int)
	go func() { done <- send(t, srv.URL, "/v1/ingest/bench", ndjson(4)) }()
	<-entered
	if st := stats(t, srv.URL); st.Logs != 0 {
		t.Fatalf("held request already counted: %+v", st)
	}
	close(release)
	if code := <-done; code != http.StatusOK {
		t.Fatalf("slow request answered %d, want 200", code)
	}
	if st := stats(t, srv.URL); st.Logs != 4 || st.Refused != 0 {
		t.Fatalf("stats %+v, want the 4 events taken", st)
	}
}

func TestSlowDropsARequestTheClientGaveUpOn(t *testing.T) {
	f, err := newFaults(axiomSlow, 0)
	if err != nil {
		t.Fatal(err)
	}
	entered := make(chan struct{})
	f.pause = func(ctx context.Context) error {
		close(entered)
		<-ctx.Done()
		return ctx.Err()
	}
	srv := newTestSinkWith(t, f)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/ingest/bench", bytes.NewReader(ndjson(2)))
	req.Header.Set("Authorization", "Bearer xaat-test")
	errc := make(chan error)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-entered
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("the cancelled request got an answer")
	}
	if st := stats(t, srv.URL); st.Logs != 0 {
		t.Fatalf("a request the client gave up on was taken: %+v", st)
	}
}

func TestUnknownModeIsRefused(t *testing.T) {
	if _, err := newFaults("flaky", 0); err == nil {
		t.Fatal("newFaults accepted an unknown mode")
	}
}
