package axiomtest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/axiomhq/axiom-go/axiom"
	"github.com/axiomhq/axiom-go/axiom/ingest"
)

// These tests use axiom-go v0.37.0, Axiom's official client, as the peer: what
// it decodes from the fake is what our exporter would see from Axiom.

func newAxiomClient(t *testing.T, srv *Server, token string, opts ...axiom.Option) *axiom.Client {
	t.Helper()
	c, err := axiom.NewClient(append([]axiom.Option{axiom.SetURL(srv.URL()), axiom.SetToken(token), axiom.SetNoEnv()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestAxiomGoIngestEvents(t *testing.T) {
	srv := NewForTest(t)
	client := newAxiomClient(t, srv, testToken)
	status, err := client.IngestEvents(context.Background(), "logs", []axiom.Event{
		{"ts": "2024-01-01T00:00:00Z", "msg": "a"},
		{"msg": "b", "n": 1},
	}, ingest.SetTimestampField("ts"), ingest.SetEventLabel("env", "test"))
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	req := reqs[0]
	if req.Path != "/v1/datasets/logs/ingest" || req.Header.Get("Content-Encoding") != "zstd" || req.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Errorf("request %s %v", req.Path, req.Header)
	}
	bodyBytes := srv.Stats().Datasets["logs"].Bytes
	labels := req.Header.Get("X-Axiom-Event-Labels")
	want := ingest.Status{Ingested: 2, Failures: []*ingest.Failure{}, ProcessedBytes: uint64(bodyBytes) + uint64(len(labels)), WALLength: 2, TraceID: status.TraceID}
	if status.TraceID == "" || !statusEqual(*status, want) {
		t.Errorf("status %+v, want %+v", *status, want)
	}
	evs := srv.Events("logs")
	if len(evs) != 2 || evs[0]["_time"] != "2024-01-01T00:00:00Z" || evs[1]["env"] != "test" || evs[1]["n"] != json.Number("1") {
		t.Errorf("events %v", evs)
	}
}

func statusEqual(a, b ingest.Status) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb) && a.TraceID == b.TraceID
}

func TestAxiomGoIngestZstdReaderOnEdge(t *testing.T) {
	srv := NewForTest(t)
	client := newAxiomClient(t, srv, testToken, axiom.SetEdgeURL(srv.URL()))
	body := `[{"msg":"x","_time":1700000000000},{"msg":"y"}]`
	r, err := axiom.ZstdEncoder()(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	status, err := client.Ingest(context.Background(), "edge-ds", r, axiom.JSON, axiom.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	if status.Ingested != 2 || status.Failed != 0 || status.ProcessedBytes != uint64(len(body)) {
		t.Errorf("status %+v", status)
	}
	if p := srv.Requests()[0].Path; p != "/v1/ingest/edge-ds" {
		t.Errorf("path %s", p)
	}
	if ev := srv.Events("edge-ds")[0]; ev["_time"] != "2023-11-14T22:13:20Z" {
		t.Errorf("event %v", ev)
	}
}

func TestAxiomGoPartialFailure(t *testing.T) {
	srv := NewForTest(t)
	srv.Fail("logs", PartialFailure(1))
	client := newAxiomClient(t, srv, testToken)
	status, err := client.IngestEvents(context.Background(), "logs", []axiom.Event{{"n": 0}, {"n": 1}, {"n": 2}})
	if err != nil {
		t.Fatal(err)
	}
	if status.Ingested != 2 || status.Failed != 1 || len(status.Failures) != 1 || status.Failures[0].Timestamp.IsZero() || status.Failures[0].Error == "" {
		t.Errorf("status %+v", status)
	}
	if evs := srv.Events("logs"); len(evs) != 2 || evs[0]["n"] != json.Number("1") {
		t.Errorf("stored %v", evs)
	}
}

func TestAxiomGoForbidden(t *testing.T) {
	srv := NewForTest(t, WithTokens("xaat-good"))
	client := newAxiomClient(t, srv, "xaat-bad")
	_, err := client.IngestEvents(context.Background(), "logs", []axiom.Event{{"a": 1}})
	if !errors.Is(err, axiom.ErrUnauthorized) {
		t.Fatalf("error %v is not ErrUnauthorized", err)
	}
	if srv.EventCount("logs") != 0 {
		t.Error("events stored")
	}
}

func TestAxiomGoLimitErrors(t *testing.T) {
	reset := time.Now().Add(time.Hour).Truncate(time.Second)
	cases := []struct {
		fault Fault
		code  int
		text  string
	}{
		{RateLimited(reset), 429, "rate limit exceeded"},
		{IngestLimited(reset), 430, "ingest limit exceeded"},
	}
	for _, c := range cases {
		srv := NewForTest(t)
		srv.Fail("logs", c.fault)
		client := newAxiomClient(t, srv, testToken)
		_, err := client.IngestEvents(context.Background(), "logs", []axiom.Event{{"a": 1}})
		var le axiom.LimitError
		if !errors.As(err, &le) {
			t.Fatalf("%d: error %T %v is not a LimitError", c.code, err, err)
		}
		if le.Status != c.code || !le.Limit.Reset.Equal(reset) || le.Limit.Remaining != 0 || le.Limit.Limit == 0 || !strings.Contains(le.Error(), c.text) {
			t.Errorf("%d: %+v (%v)", c.code, le, le)
		}
		if c.code == 429 && le.Limit.Scope != axiom.LimitScopeOrganization {
			t.Errorf("scope %v", le.Limit.Scope)
		}
	}
}

func TestAxiomGoRetriesThrough5xxAndReset(t *testing.T) {
	srv := NewForTest(t)
	srv.Fail("logs", Status(503), ConnReset())
	client := newAxiomClient(t, srv, testToken)
	status, err := client.IngestEvents(context.Background(), "logs", []axiom.Event{{"a": 1}, {"a": 2}})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if status.Ingested != 2 || len(reqs) != 3 || reqs[0].Status != 503 || reqs[1].Status != 0 || reqs[2].Status != 200 {
		t.Errorf("status %+v, requests %+v", status, reqs)
	}
	if srv.EventCount("logs") != 2 {
		t.Errorf("%d events", srv.EventCount("logs"))
	}
}
