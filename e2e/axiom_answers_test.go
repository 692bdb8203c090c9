package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// The sidecar reads Axiom's answers by status: a 200 that is not JSON is a
// delivery (not sent again), a 429 waits for its X-RateLimit-Reset although
// it also carries a month-away X-IngestLimit-Reset, and a 503 with an empty
// JSON body is retried; every line arrives exactly once.
func TestAxiomAnswersAreReadByStatusAndEveryLineArrivesOnce(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	s := StartSidecar(t, stdinConfig(fake.URL(), yamlMap{}, nil).yaml(), WithStdin())
	writeLines := func(from, to int) {
		t.Helper()
		var b strings.Builder
		for i := from; i < to; i++ {
			fmt.Fprintf(&b, `{"level":30,"time":%d,"msg":"line %d"}`+"\n", 1764504000000+i, i)
		}
		if _, err := s.Stdin.Write([]byte(b.String())); err != nil {
			t.Fatal(err)
		}
	}

	fake.Fail("app-logs", axiomtest.Accepted("text/plain; charset=utf-8", "OK\n"))
	writeLines(0, 100)
	if err := fake.WaitEvents("app-logs", 100, 60*time.Second); err != nil {
		t.Fatal(err)
	}

	rateReset := time.Now().Add(2 * time.Second).Truncate(time.Second)
	fake.Fail("app-logs",
		axiomtest.RateLimited(rateReset).WithIngestLimit(time.Now().Add(30*24*time.Hour)),
		axiomtest.Status(503).WithBody("application/json", ""))
	writeLines(100, 200)
	if err := s.Stdin.Close(); err != nil {
		t.Fatal(err)
	}
	if code, err := s.Wait(60 * time.Second); err != nil || code != 0 {
		t.Fatalf("exit code %d, %v; want 0 at end of input", code, err)
	}

	events := fake.Events("app-logs")
	seen := map[string]int{}
	for _, ev := range events {
		seen[fmt.Sprint(ev["msg"])]++
	}
	for i := range 200 {
		if n := seen[fmt.Sprintf("line %d", i)]; n != 1 {
			t.Errorf("line %d arrived %d times, want once", i, n)
		}
	}
	var statuses []int
	var afterLimit time.Time
	for _, r := range fake.Requests() {
		if strings.Contains(r.Path, "ingest") {
			statuses = append(statuses, r.Status)
			if r.Status == 503 {
				afterLimit = r.Received
			}
		}
	}
	if want := "[200 429 503 200]"; fmt.Sprint(statuses) != want {
		t.Errorf("ingest answers %v, want %s", statuses, want)
	}
	if afterLimit.Before(rateReset) {
		t.Errorf("the request after the 429 came at %v, before its X-RateLimit-Reset %v", afterLimit, rateReset)
	}
}
