package axiomclient

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestClassifyByStatusOnly(t *testing.T) {
	for status, want := range map[int]Kind{
		200: Accepted, 202: Accepted, 204: Accepted,
		400: Permanent, 401: Permanent, 403: Permanent, 404: Permanent, 413: Permanent, 302: Permanent,
		408: Retry, 500: Retry, 502: Retry, 503: Retry, 504: Retry,
		429: Throttle, 430: Throttle,
	} {
		if got := Classify(status); got != want {
			t.Errorf("Classify(%d) = %v, want %v", status, got, want)
		}
	}
}

func TestResetReadsTheHeadersOfItsStatus(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	rate, month := "1800000060", "1802592000"
	both := http.Header{"X-Ratelimit-Reset": {rate}, "X-Ingestlimit-Reset": {month}}
	for _, tc := range []struct {
		name   string
		status int
		h      http.Header
		want   time.Time
	}{
		{"429 with both groups waits for the rate window", 429, both, time.Unix(1800000060, 0)},
		{"430 with both groups waits for the ingest reset", 430, both, time.Unix(1802592000, 0)},
		{"429 with only ingest headers falls back to Retry-After", 429, http.Header{"X-Ingestlimit-Reset": {month}, "Retry-After": {"7"}}, now.Add(7 * time.Second)},
		{"430 with only rate headers falls back to Retry-After", 430, http.Header{"X-Ratelimit-Reset": {rate}, "Retry-After": {"9"}}, now.Add(9 * time.Second)},
		{"Retry-After as an HTTP date", 429, http.Header{"Retry-After": {"Fri, 15 Jan 2027 08:00:00 GMT"}}, time.Date(2027, 1, 15, 8, 0, 0, 0, time.UTC)},
		{"nothing usable", 429, http.Header{"Retry-After": {"soon"}, "X-Ratelimit-Reset": {"0"}}, time.Time{}},
		{"other statuses have no reset", 503, http.Header{"Retry-After": {"5"}}, time.Time{}},
	} {
		if got := Reset(tc.status, tc.h, now); !got.Equal(tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestMessage(t *testing.T) {
	for _, tc := range []struct {
		status      int
		contentType string
		body        string
		want        string
	}{
		{400, "application/json", `{"message":"invalid field"}`, "invalid field"},
		{400, "application/json; charset=utf-8", `{"error":"bad"}`, "bad"},
		{400, "application/json", ``, "Bad Request"},
		{503, "text/html", "  <html>down</html>\n", "<html>down</html>"},
		{430, "", "", "status 430"},
		{500, "text/plain", strings.Repeat("é", 300), strings.Repeat("é", 100) + "…"},
	} {
		if got := Message(tc.status, tc.contentType, []byte(tc.body)); got != tc.want {
			t.Errorf("Message(%d, %q, %.20q) = %q, want %q", tc.status, tc.contentType, tc.body, got, tc.want)
		}
	}
}
