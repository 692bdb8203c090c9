package axiomtest

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

const testToken = "xaat-test-token"

// post sends a raw ingest request and returns status, headers and body.
func post(t *testing.T, url string, header http.Header, body []byte) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

func ingestHeader(contentType string) http.Header {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+testToken)
	h.Set("Content-Type", contentType)
	return h
}

func zstdBytes(t testing.TB, b []byte) []byte {
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll(b, nil)
}

func gzipBytes(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestIngestStatusIsExact(t *testing.T) {
	srv := NewForTest(t)
	body := "{\"_time\":\"2024-01-01T00:00:00Z\",\"msg\":\"a\"}\n{\"msg\":\"b\",\"n\":1}\n"
	h := ingestHeader("application/x-ndjson")
	h.Set("X-Axiom-Event-Labels", `{"env":"test"}`)
	code, hdr, got := post(t, srv.URL()+"/v1/datasets/ds1/ingest", h, []byte(body))
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, got)
	}
	want := `{"ingested":2,"failed":0,"failures":[],"processedBytes":` + strconv.Itoa(len(body)+len(`{"env":"test"}`)) + `,"blocksCreated":0,"walLength":2}`
	if got != want {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}
	if ct := hdr.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	if hdr.Get("X-Axiom-Trace-Id") == "" {
		t.Error("no X-Axiom-Trace-Id")
	}
	evs := srv.Events("ds1")
	if len(evs) != 2 {
		t.Fatalf("stored %d events", len(evs))
	}
	if evs[0]["_time"] != "2024-01-01T00:00:00Z" || evs[0]["msg"] != "a" || evs[0]["env"] != "test" {
		t.Errorf("event 0: %v", evs[0])
	}
	if evs[1]["n"] != json.Number("1") {
		t.Errorf("number not kept exact: %#v", evs[1]["n"])
	}
	for i, ev := range evs {
		if _, err := time.Parse(time.RFC3339Nano, ev["_sysTime"].(string)); err != nil {
			t.Errorf("event %d _sysTime: %v", i, err)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
