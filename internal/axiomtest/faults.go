package axiomtest

import (
	"net/http"
	"strconv"
	"time"
)

// Fault is one scripted answer for one request; see Server.Fail.
type Fault struct {
	Status int // 0 = serve normally (use with Delay for a slow success)
	// Body is the response body; Content-Type comes from Header or is
	// sniffed from the body. With Status 0, a non-empty Body replaces the
	// normal answer's body and Header entries replace its headers (see
	// Accepted).
	Body   string
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
	h := rateLimitHeaders(reset)
	h.Set("Content-Type", "application/json")
	return Fault{Status: http.StatusTooManyRequests, Body: `{"message":"rate limit exceeded"}`, Header: h}
}

// IngestLimited is Axiom's non-standard 430: the monthly ingest volume is used up.
func IngestLimited(reset time.Time) Fault {
	h := ingestLimitHeaders(reset)
	h.Set("Content-Type", "application/json")
	return Fault{Status: statusIngestLimited, Body: `{"message":"ingest limit exceeded"}`, Header: h}
}

func rateLimitHeaders(reset time.Time) http.Header {
	h := http.Header{}
	h.Set("X-RateLimit-Scope", "organization")
	h.Set("X-RateLimit-Limit", "1000")
	h.Set("X-RateLimit-Remaining", "0")
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	return h
}

func ingestLimitHeaders(reset time.Time) http.Header {
	h := http.Header{}
	h.Set("X-IngestLimit-Limit", "1000")
	h.Set("X-IngestLimit-Remaining", "0")
	h.Set("X-IngestLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	return h
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

// Accepted serves the request normally (its events are stored) but answers
// 200 with this Content-Type and body, as a proxy in front of Axiom may.
// Any 2xx is a success whatever its body: axiom-go v0.37.0 calls a 200
// that is not application/json an error, and the batch was sent again.
func Accepted(contentType, body string) Fault {
	return Fault{Header: http.Header{"Content-Type": {contentType}}, Body: body}
}

// WithBody is f answering body as contentType instead ("" sends no
// Content-Type; net/http then sniffs a non-empty body). An empty body with
// application/json is what some Axiom error paths send.
func (f Fault) WithBody(contentType, body string) Fault {
	f.Header = f.Header.Clone()
	if f.Header == nil {
		f.Header = http.Header{}
	}
	f.Header.Del("Content-Type")
	if contentType != "" {
		f.Header.Set("Content-Type", contentType)
	}
	f.Body = body
	if body == "" && contentType == "" {
		f.Header["Content-Type"] = nil // keep net/http from adding one
	}
	return f
}

// WithIngestLimit adds the X-IngestLimit-* group with its reset. Axiom
// sends it on every ingest answer, a 429 included, where its reset (the
// end of the month) is not the one to wait for.
func (f Fault) WithIngestLimit(reset time.Time) Fault {
	return f.withHeaders(ingestLimitHeaders(reset))
}

// WithRateLimit adds the X-RateLimit-* group with its reset. Axiom sends it
// on every answer, a 430 included.
func (f Fault) WithRateLimit(reset time.Time) Fault {
	return f.withHeaders(rateLimitHeaders(reset))
}

// WithRetryAfter adds Retry-After in whole seconds.
func (f Fault) WithRetryAfter(d time.Duration) Fault {
	return f.withHeaders(http.Header{"Retry-After": {strconv.Itoa(int(d / time.Second))}})
}

func (f Fault) withHeaders(h http.Header) Fault {
	f.Header = f.Header.Clone()
	if f.Header == nil {
		f.Header = http.Header{}
	}
	for k, vs := range h {
		f.Header[k] = vs
	}
	return f
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
