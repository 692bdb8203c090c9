package axiomclient

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

const testToken = "xaat-00000000-1111-2222-3333-444444444444"

func newClient(t *testing.T, srv *axiomtest.Server, edge bool) *Client {
	t.Helper()
	base, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	return &Client{HTTP: &http.Client{Timeout: 10 * time.Second}, URL: IngestURL(base, edge, "d"), Token: testToken, UserAgent: "test"}
}

func zstdNDJSON(t *testing.T, lines ...string) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	return enc.EncodeAll([]byte(strings.Join(lines, "\n")+"\n"), nil)
}

func TestIngestAcceptedWithItsStatus(t *testing.T) {
	srv := axiomtest.NewForTest(t)
	srv.Fail("d", axiomtest.PartialFailure(1))
	for _, edge := range []bool{false, true} {
		st, err := newClient(t, srv, edge).Ingest(context.Background(), zstdNDJSON(t, `{"a":1}`, `{"a":2}`), 2)
		if err != nil {
			t.Fatalf("edge=%v: %v", edge, err)
		}
		if st.Code != 200 || st.Ingested+st.Failed != 2 {
			t.Errorf("edge=%v: status %+v", edge, st)
		}
	}
	reqs := srv.Requests()
	if reqs[0].Path != "/v1/datasets/d/ingest" || reqs[1].Path != "/v1/ingest/d" {
		t.Errorf("paths %q %q", reqs[0].Path, reqs[1].Path)
	}
	if srv.EventCount("d") != 3 {
		t.Errorf("%d events, want 3 (one of the first request rejected)", srv.EventCount("d"))
	}
}

// Every case of issue 11 item 5, through a real HTTP exchange with the fake.
func TestAnswersReadByStatus(t *testing.T) {
	soon := time.Now().Add(90 * time.Second).Truncate(time.Second)
	month := time.Now().Add(30 * 24 * time.Hour).Truncate(time.Second)
	for _, tc := range []struct {
		name      string
		fault     axiomtest.Fault
		kind      Kind
		reset     time.Time // zero: none expected
		stored    int
		messageIn string
	}{
		{"200 that is not JSON is accepted", axiomtest.Accepted("text/plain", "OK"), Accepted, time.Time{}, 2, ""},
		{"200 with an empty body is accepted", axiomtest.Accepted("application/json", " "), Accepted, time.Time{}, 2, ""},
		{"429 waits for X-RateLimit-Reset, not the ingest reset", axiomtest.RateLimited(soon).WithIngestLimit(month), Throttle, soon, 0, "rate limit exceeded"},
		{"430 waits for X-IngestLimit-Reset", axiomtest.IngestLimited(month).WithRateLimit(soon), Throttle, month, 0, "ingest limit exceeded"},
		{"429 with a non-JSON body keeps its reset", axiomtest.RateLimited(soon).WithBody("text/plain", "Too Many Requests"), Throttle, soon, 0, "Too Many Requests"},
		{"400 with an empty JSON body is permanent", axiomtest.Status(400).WithBody("application/json", ""), Permanent, time.Time{}, 0, "Bad Request"},
		{"503 with an empty JSON body is retried", axiomtest.Status(503).WithBody("application/json", ""), Retry, time.Time{}, 0, "Service Unavailable"},
		{"502 with an HTML page is retried", axiomtest.Status(502).WithBody("text/html", "<html>bad gateway</html>"), Retry, time.Time{}, 0, "bad gateway"},
		{"403 with no Content-Type is permanent", axiomtest.Status(403).WithBody("", ""), Permanent, time.Time{}, 0, "Forbidden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := axiomtest.NewForTest(t)
			srv.Fail("d", tc.fault)
			st, err := newClient(t, srv, false).Ingest(context.Background(), zstdNDJSON(t, `{"a":1}`, `{"a":2}`), 2)
			var ae *Error
			switch {
			case tc.kind == Accepted:
				if err != nil || st.Ingested != 2 {
					t.Fatalf("got %+v, %v; want accepted with 2 ingested", st, err)
				}
			case !errors.As(err, &ae):
				t.Fatalf("got %v, want an *Error", err)
			case ae.Kind != tc.kind || !ae.Reset.Equal(tc.reset) || !strings.Contains(ae.Error(), tc.messageIn):
				t.Errorf("got kind %v reset %v (%v), want %v reset %v with %q", ae.Kind, ae.Reset, ae, tc.kind, tc.reset, tc.messageIn)
			case ae.TraceID == "":
				t.Error("no trace id")
			}
			if n := srv.EventCount("d"); n != tc.stored {
				t.Errorf("%d events stored, want %d", n, tc.stored)
			}
		})
	}
}

func TestTransportErrorIsNotAnAnswerAndHidesTheToken(t *testing.T) {
	srv := axiomtest.NewForTest(t)
	srv.Fail("d", axiomtest.ConnReset())
	_, err := newClient(t, srv, false).Ingest(context.Background(), zstdNDJSON(t, `{}`), 1)
	var ae *Error
	if err == nil || errors.As(err, &ae) {
		t.Fatalf("got %v, want a transport error", err)
	}
	if strings.Contains(err.Error(), testToken) {
		t.Error("the error carries the token")
	}
}
