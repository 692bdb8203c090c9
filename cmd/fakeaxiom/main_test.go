package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer collects run's stderr while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitOutput polls stderr until re matches; the deadline only guards a hang.
func waitOutput(t *testing.T, out *syncBuffer, re *regexp.Regexp) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			return m
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no %v in output:\n%s", re, out.String())
	return nil
}

func TestServesStatsEventsAndStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-token", "xaat-cmd"}, out, 10*time.Millisecond)
	}()
	url := waitOutput(t, out, regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`))[1]

	req, _ := http.NewRequest(http.MethodPost, url+"/v1/ingest/logs", strings.NewReader(`{"msg":"hi"}`+"\n"+`{"msg":"there"}`))
	req.Header.Set("Authorization", "Bearer xaat-cmd")
	req.Header.Set("Content-Type", "application/x-ndjson")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("ingest status %d", resp.StatusCode)
	}
	waitOutput(t, out, regexp.MustCompile(`events=2 .*requests=1 rejected=0`))

	var stats struct {
		Datasets map[string]struct{ Events int }
	}
	getJSON(t, url+"/_fake/stats", &stats)
	if stats.Datasets["logs"].Events != 2 {
		t.Errorf("stats: %+v", stats)
	}
	resp, err = http.Get(url + "/_fake/events/logs")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	lines := strings.Split(strings.TrimSpace(string(body)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], `"msg":"there"`) {
		t.Errorf("events NDJSON:\n%s", body)
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	if _, err := http.Get(url + "/_fake/stats"); err == nil {
		t.Error("still serving after shutdown")
	}
}

func TestRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-nope"}, {"extra"}, {"-max-events", "0"}, {"-addr", "256.0.0.1:0"}} {
		if err := run(context.Background(), args, io.Discard, time.Second); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

func TestCountOnlyAndDatasetFlags(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-count-only", "-dataset", "only", "-max-events", "2"}, out, time.Hour)
	}()
	url := waitOutput(t, out, regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`))[1]
	send := func(ds, body string) int {
		req, _ := http.NewRequest(http.MethodPost, url+"/v1/ingest/"+ds, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer xaat-any")
		req.Header.Set("Content-Type", "application/x-ndjson")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := send("only", "{}\n{}\n"); code != 200 {
		t.Errorf("existing dataset: %d", code)
	}
	if code := send("only", "{}\n{}\n{}\n"); code != 400 {
		t.Errorf("over -max-events: %d", code)
	}
	if code := send("other", "{}\n"); code != 404 {
		t.Errorf("unknown dataset: %d", code)
	}
	var stats struct {
		Datasets map[string]struct{ Events, Rejected int }
	}
	getJSON(t, url+"/_fake/stats", &stats)
	if s := stats.Datasets["only"]; s.Events != 2 || s.Rejected != 1 {
		t.Errorf("stats %+v", stats)
	}
	resp, err := http.Get(url + "/_fake/events/only")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if len(body) != 0 {
		t.Errorf("count-only stored events: %s", body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
