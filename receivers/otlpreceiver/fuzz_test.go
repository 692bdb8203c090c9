package otlpreceiver

import (
	"bytes"
	"compress/gzip"
	"math/rand/v2"
	"net/http"
	"testing"

	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/consumer/consumertest"
)

// FuzzHTTPBodies sends any bytes, as either content type and in the
// encodings a client may declare (none, gzip, zstd: really compressed, or
// garbage that only says it is), to every OTLP/HTTP path of a receiver that
// decodes (with a body limit) and to the traces path of one that
// pre-samples. The answer is 200, 400 or 413, never a 5xx (which would make
// the client send the same bytes again); an error is a google.rpc.Status
// that does not echo the body; and a well-formed request is still served.
func FuzzHTTPBodies(f *testing.F) {
	cfg := testConfig(f)
	cfg.Protocols.HTTP.Get().MaxRequestBodySize = 64 << 10
	decoded := start(f, cfg, sinks{traces: consumertest.NewNop(), logs: consumertest.NewNop(), metrics: consumertest.NewNop()})
	pre, _ := presampled(f, &dropFilter{})
	valid := tracesJSON(f, traces("a", "b"))
	validProto := tracesProto(f, traces("a", "b"))

	random := make([]byte, 1024)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range random {
		random[i] = byte(rng.UintN(256))
	}
	for _, seed := range [][]byte{
		nil, []byte("{}"), valid, valid[:len(valid)/2], validProto, validProto[:len(validProto)/2], random,
		[]byte(logsJSON(f, testLogs())), []byte(metricsJSON(f, testMetrics())),
		[]byte(`{"resourceSpans": 7}`), []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz"}]}]}]}`),
		make([]byte, 70<<10), // over the body limit
	} {
		for enc := range uint8(5) {
			f.Add(seed, uint8(0), enc, uint8(0), false)
			f.Add(seed, uint8(1), enc, uint8(0), true)
		}
	}
	f.Add([]byte(logsJSON(f, testLogs())), uint8(0), uint8(0), uint8(1), false)
	f.Add([]byte(metricsJSON(f, testMetrics())), uint8(0), uint8(1), uint8(2), false)

	zenc, err := zstd.NewWriter(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte, ct, enc, path uint8, presample bool) {
		contentType := []string{jsonContentType, protoContentType}[ct%2]
		url := decoded.httpURL([]string{tracesPath, logsPath, metricsPath}[path%3])
		if presample {
			url = pre.httpURL(tracesPath)
		}
		sent, header := body, []string(nil)
		switch enc % 5 {
		case 1:
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			_, _ = zw.Write(body)
			_ = zw.Close()
			sent, header = b.Bytes(), []string{"Content-Encoding", "gzip"}
		case 2:
			header = []string{"Content-Encoding", "gzip"}
		case 3:
			sent, header = zenc.EncodeAll(body, nil), []string{"Content-Encoding", "zstd"}
		case 4:
			header = []string{"Content-Encoding", "zstd"}
		}
		resp, answer := post(t, url, contentType, sent, header...)
		switch resp.StatusCode {
		case http.StatusOK:
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
			statusOf(t, resp, answer)
			if len(body) >= 16 && bytes.Contains(answer, body[:16]) {
				t.Fatalf("the answer echoes the body: %q", answer)
			}
		default:
			t.Fatalf("%d %q, want 200, 400 or 413", resp.StatusCode, answer)
		}
		if resp, answer := post(t, decoded.httpURL(tracesPath), jsonContentType, valid); resp.StatusCode != http.StatusOK {
			t.Fatalf("a well-formed request afterwards: %d %q", resp.StatusCode, answer)
		}
	})
}
