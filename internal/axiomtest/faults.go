package axiomtest

import (
	"net/http"
	"strconv"
	"time"
)

// Fault is one scripted answer for one request; see Server.Fail.
type Fault struct {
	Status int           // 0 = serve normally (use with Delay for a slow success)
	Body   string        // response body; Content-Type comes from Header or is sniffed from the body
	Header http.Header   // extra response headers
	Delay  time.Duration // wait before answering
	Reset  bool          // read the request, then close the connection without answering (connection reset)
	// RejectEvents, with Status 0, rejects the first n events of the request
	// (not stored) and accepts the rest: in failures[] on ingest routes, in
	// partial_success on OTLP routes (spans or log records).
	RejectEvents int
}

// RateLimited is Axiom's 429 with the full X-RateLimit-* header set, so that
// axiom-go turns it into a LimitError (it ignores incomplete header groups).
func RateLimited(reset time.Time) Fault {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("X-RateLimit-Scope", "organization")
	h.Set("X-RateLimit-Limit", "1000")
	h.Set("X-RateLimit-Remaining", "0")
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	return Fault{Status: http.StatusTooManyRequests, Body: `{"message":"rate limit exceeded"}`, Header: h}
}

// IngestLimited is Axiom's non-standard 430: the monthly ingest volume is used up.
func IngestLimited(reset time.Time) Fault {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("X-IngestLimit-Limit", "1000")
	h.Set("X-IngestLimit-Remaining", "0")
	h.Set("X-IngestLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	return Fault{Status: statusIngestLimited, Body: `{"message":"ingest limit exceeded"}`, Header: h}
}

// Status answers with code: a JSON error like Axiom's API for 4xx, plain text
// for 5xx (Axiom's load balancers answer those without JSON).
func Status(code int) Fault {
	h := http.Header{}
	text := http.StatusText(code)
	if text == "" {
		text = "status " + strconv.Itoa(code)
	}
	if code >= 400 && code < 500 {
		h.Set("Content-Type", "application/json")
		return Fault{Status: code, Header: h, Body: `{"code":` + strconv.Itoa(code) + `,"message":` + strconv.Quote(text) + `}`}
	}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	return Fault{Status: code, Header: h, Body: text + "\n"}
}

// Slow serves the request normally after d.
func Slow(d time.Duration) Fault { return Fault{Delay: d} }

// ConnReset reads the request and resets the connection without an answer.
func ConnReset() Fault { return Fault{Reset: true} }

// PartialFailure answers 200 with the first n events (or OTLP spans or log
// records) of the request rejected.
func PartialFailure(n int) Fault { return Fault{RejectEvents: n} }

const statusIngestLimited = 430

// faultQueues holds scripted faults per dataset; "" matches every request.
type faultQueues map[string][]Fault

// next pops the fault for a request to dataset: the dataset's own queue first,
// then the catch-all queue.
func (q faultQueues) next(dataset string) (Fault, bool) {
	if f, ok := q.pop(dataset); ok || dataset == "" {
		return f, ok
	}
	return q.pop("")
}

func (q faultQueues) pop(key string) (Fault, bool) {
	fs := q[key]
	if len(fs) == 0 {
		return Fault{}, false
	}
	if len(fs) == 1 {
		delete(q, key)
	} else {
		q[key] = fs[1:]
	}
	return fs[0], true
}
