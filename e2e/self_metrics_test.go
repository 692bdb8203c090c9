package e2e

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// TestSelfMetricsAreServedUnderTheCollectorsScheme pipes a JSON line and a
// text line into `sidecar` and reads its Prometheus endpoint: our metrics
// are there under the names README.md's table gives
// (otelcol_<kind>_<type>_<what>, no suffix added), labelled with the
// component's ID like the collector's own, and they agree with what the fake
// Axiom received.
func TestSelfMetricsAreServedUnderTheCollectorsScheme(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	metrics := FreeAddr(t)
	_, metricsPort, _ := strings.Cut(metrics, ":")
	s := StartSidecar(t, "", WithArgs(), WithStdin(), WithEnv(
		"AXIOM_URL="+fake.URL(), "AXIOM_TOKEN="+testToken,
		"SIDECAR_OTLP_GRPC_ENDPOINT="+FreeAddr(t), "SIDECAR_OTLP_HTTP_ENDPOINT="+FreeAddr(t),
		"SIDECAR_HEALTH_ENDPOINT="+FreeAddr(t), "SIDECAR_METRICS_PORT="+metricsPort))
	if _, err := fmt.Fprintf(s.Stdin, "%s\nnot json\n", pinoLine(1)); err != nil {
		t.Fatal(err)
	}
	if err := fake.WaitEvents("logs", 2, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	s.WaitListening(t, metrics)

	want := map[string]string{
		`otelcol_receiver_stdout_lines{receiver="stdout"}`:                  "2",
		`otelcol_receiver_stdout_json_records{receiver="stdout"}`:           "1",
		`otelcol_receiver_stdout_text_records{receiver="stdout"}`:           "1",
		`otelcol_exporter_axiom_sent_items{exporter="axiom",signal="logs"}`: "2",
		`otelcol_exporter_axiom_requests{exporter="axiom",signal="logs",status="200"}`: fmt.Sprint(
			fake.Stats().Datasets["logs"].Requests),
	}
	// The exporter counts a request once its answer is read, just after the
	// fake stored the events: scrape until the counts settle.
	var got map[string]string
	for deadline := time.Now().Add(30 * time.Second); ; {
		got = scrape(t, "http://"+metrics+"/metrics")
		settled := true
		for series, v := range want {
			settled = settled && got[series] == v
		}
		if settled {
			break
		}
		if time.Now().After(deadline) {
			for series, v := range want {
				if got[series] != v {
					t.Errorf("%s = %q, want %s", series, got[series], v)
				}
			}
			t.Fatalf("served metrics:\n%v", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for series := range got {
		if strings.HasPrefix(series, "sidecar") || strings.HasPrefix(series, "axiom_exporter") {
			t.Errorf("%s: a metric outside the otelcol_ scheme", series)
		}
	}
	if err := s.Stdin.Close(); err != nil {
		t.Fatal(err)
	}
	if code, err := s.Wait(60 * time.Second); err != nil || code != 0 {
		t.Fatalf("at EOF: exit code %d, %v", code, err)
	}
}

// scrape returns series -> value of a Prometheus text page.
func scrape(t *testing.T, url string) map[string]string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			out[line[:i]] = line[i+1:]
		}
	}
	return out
}
