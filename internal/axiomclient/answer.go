package axiomclient

import (
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// StatusLimitExceeded is Axiom's non-standard "ingest or query limit
// reached" (axiom-go: httpStatusLimitExceeded in axiom/limit.go).
const StatusLimitExceeded = 430

// Kind says what a sender does after Axiom's answer. It depends on the
// status code only: never on the Content-Type or the body, which proxies
// and load balancers in front of Axiom do not keep to Axiom's shapes.
type Kind int

const (
	Accepted  Kind = iota // 2xx, whatever its content type or body
	Retry                 // 5xx, 408 (and transport errors): back off and retry
	Throttle              // 429, 430: wait for the reset, then retry
	Permanent             // other statuses: retrying cannot help
)

func (k Kind) String() string {
	return [...]string{"accepted", "retry", "throttle", "permanent"}[k]
}

// Classify reads a status code.
func Classify(status int) Kind {
	switch {
	case status >= 200 && status < 300:
		return Accepted
	case status == http.StatusTooManyRequests || status == StatusLimitExceeded:
		return Throttle
	case status == http.StatusRequestTimeout || status >= 500:
		return Retry
	default:
		return Permanent
	}
}

// Reset is when a throttled request may be sent again, zero when the answer
// does not say. Each status has its own headers (Axiom's API limits page,
// https://axiom.co/docs/restapi/api-limits): a 429 is the per-minute rate
// limit, X-RateLimit-Reset; a 430 is the monthly ingest limit,
// X-IngestLimit-Reset. Axiom sends X-IngestLimit-* on every ingest answer,
// so reading it first whatever the status, as axiom-go's parseLimit does
// (axiom/limit.go), makes a 429 wait for the end of the month. Retry-After
// (seconds or an HTTP date; not documented by Axiom, but what proxies and
// the OTLP convention use) is the fallback for both.
func Reset(status int, h http.Header, now time.Time) time.Time {
	var header string
	switch status {
	case http.StatusTooManyRequests:
		header = "X-RateLimit-Reset"
	case StatusLimitExceeded:
		header = "X-IngestLimit-Reset"
	default:
		return time.Time{}
	}
	if secs, err := strconv.ParseInt(h.Get(header), 10, 64); err == nil && secs > 0 {
		return time.Unix(secs, 0)
	}
	return retryAfter(h.Get("Retry-After"), now)
}

func retryAfter(v string, now time.Time) time.Time {
	if v == "" {
		return time.Time{}
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return time.Time{}
		}
		return now.Add(time.Duration(secs) * time.Second)
	}
	if t, err := http.ParseTime(v); err == nil {
		return t
	}
	return time.Time{}
}

// Message is a readable reason from an error answer: Axiom's JSON
// {"message": ...} or {"error": ...} when the body is that, else the start
// of the body as text, else the status text. An empty or non-JSON body is
// normal (load balancers, proxies) and never an error of its own: axiom-go
// turns an empty JSON error body into "error decoding ... EOF", which hides
// the status (axiom/client.go, Client.Do).
func Message(status int, contentType string, body []byte) string {
	if ct, _, _ := mime.ParseMediaType(contentType); ct == "application/json" || strings.HasSuffix(ct, "+json") {
		var m struct {
			Message string `json:"message"`
			Error   string `json:"error"`
		}
		if json.Unmarshal(body, &m) == nil {
			if m.Message != "" {
				return m.Message
			}
			if m.Error != "" {
				return m.Error
			}
		}
	}
	if s := strings.TrimSpace(string(body)); s != "" {
		return truncate(s, 200)
	}
	if text := http.StatusText(status); text != "" {
		return text
	}
	return "status " + strconv.Itoa(status)
}

// truncate keeps a misdirected answer (an HTML error page) from filling a log line.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
