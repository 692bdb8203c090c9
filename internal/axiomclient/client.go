// Package axiomclient sends event batches to Axiom's ingest API and reads
// Axiom's answers by status code. The sidecar's axiom exporter and the Fluent
// Bit plugin (cmd/fluent-bit-axiom) both send through it; the retrying, the
// batching and what to count stay with them.
//
// It replaces axiom-go's Client.Ingest for the request, because axiom-go
// decides by Content-Type before status (axiom/client.go, Client.Do, v0.37.0):
// a 2xx whose Content-Type is not application/json is an error ("cannot
// decode response with unsupported content type"), so an accepted batch was
// sent again; an error with an empty JSON body becomes a decoding error with
// no status, retried as a transport error; a 429 with a non-JSON body is a
// plain HTTPError without its reset. Here the status decides (see Classify),
// and the headers of that status give the reset (see Reset).
package axiomclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"time"
)

// maxAnswer bounds how much of an answer is read: an ingest status is
// small, and an error page need not be read whole.
const maxAnswer = 64 << 10

// IngestURL is where events for dataset go: {edge}/v1/ingest/{dataset} on
// an edge endpoint, else {base}/v1/datasets/{dataset}/ingest (Axiom's ingest
// API docs; axiom-go's DatasetsService.Ingest builds the same paths).
func IngestURL(base *url.URL, edge bool, dataset string) string {
	if edge {
		return base.JoinPath("v1", "ingest", dataset).String()
	}
	return base.JoinPath("v1", "datasets", dataset, "ingest").String()
}

// Client posts NDJSON bodies, zstd-compressed, to one ingest URL.
type Client struct {
	HTTP      *http.Client
	URL       string // from IngestURL
	Token     string // sent only in the Authorization header, never in errors
	OrgID     string // X-Axiom-Org-Id when not empty
	UserAgent string
}

// Status is an accepted request's outcome. Axiom answers an ingest with
// {"ingested", "failed", "failures"}; an accepted answer without that body
// (another Content-Type, empty, unreadable) counts every event as ingested.
type Status struct {
	Code         int
	Ingested     uint64
	Failed       uint64
	FirstFailure string
}

// Error is an answer that was not a 2xx.
type Error struct {
	Status  int
	Kind    Kind
	Reset   time.Time // when a Throttle may be retried; zero when unknown
	Message string
	TraceID string // X-Axiom-Trace-Id, for Axiom's support
}

func (e *Error) Error() string {
	return fmt.Sprintf("Axiom answered %d %s: %s", e.Status, http.StatusText(e.Status), e.Message)
}

// Ingest posts body (zstd-compressed NDJSON of events events). It returns
// a *Error for a non-2xx answer and the transport's error otherwise.
func (c *Client) Ingest(ctx context.Context, body []byte, events int) (Status, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return Status{}, err
	}
	req.Header.Set("Content-Type", "application/x-ndjson")
	req.Header.Set("Content-Encoding", "zstd")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.Token)
	if c.OrgID != "" {
		req.Header.Set("X-Axiom-Org-Id", c.OrgID)
	}
	if c.UserAgent != "" {
		req.Header.Set("User-Agent", c.UserAgent)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return Status{}, err // a *url.Error: method, URL and cause; no headers
	}
	defer resp.Body.Close()
	answer, readErr := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswer)) // let the connection be reused
	kind := Classify(resp.StatusCode)
	if kind == Accepted {
		// Accepted even if the answer was cut off: Axiom has the events.
		return ingestStatus(resp.StatusCode, resp.Header.Get("Content-Type"), answer, events), nil
	}
	if readErr != nil && len(answer) == 0 {
		answer = []byte(readErr.Error())
	}
	return Status{}, &Error{
		Status:  resp.StatusCode,
		Kind:    kind,
		Reset:   Reset(resp.StatusCode, resp.Header, time.Now()),
		Message: Message(resp.StatusCode, resp.Header.Get("Content-Type"), answer),
		TraceID: resp.Header.Get("X-Axiom-Trace-Id"),
	}
}

func ingestStatus(code int, contentType string, answer []byte, events int) Status {
	st := Status{Code: code, Ingested: uint64(events)}
	if ct, _, _ := mime.ParseMediaType(contentType); ct != "application/json" {
		return st
	}
	var body struct {
		Ingested *uint64 `json:"ingested"`
		Failed   uint64  `json:"failed"`
		Failures []struct {
			Error string `json:"error"`
		} `json:"failures"`
	}
	if json.Unmarshal(answer, &body) != nil || body.Ingested == nil {
		return st
	}
	st.Ingested, st.Failed = *body.Ingested, body.Failed
	if len(body.Failures) > 0 {
		st.FirstFailure = body.Failures[0].Error
	}
	return st
}
