package e2e

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.yaml.in/yaml/v3"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// TestHoldBudgetUnderAFloodOfOrphanLeaves floods the real binary with Redis
// GET leaves whose request roots never come (400,000 spans over OTLP/HTTP,
// raw path, a 1/1024 rule), once with holding off and once on: with it on
// the peak RSS stays within the 96 MB budget of issue 10, spans were held
// and the oldest released early (counted in released_items{reason="budget"}).
func TestHoldBudgetUnderAFloodOfOrphanLeaves(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc")
	}
	peaks := map[bool]int64{}
	for _, hold := range []bool{false, true} {
		t.Run(fmt.Sprintf("hold=%v", hold), func(t *testing.T) {
			fake := axiomtest.NewForTest(t)
			grpcAddr, httpAddr, metrics := FreeAddr(t), FreeAddr(t), FreeAddr(t)
			otlp := otlpReceiver(grpcAddr, httpAddr)
			otlp["sampling_processor"] = "sampling"
			sampling := yamlMap{"rules": []yamlMap{{
				"name":        "redis-get",
				"match":       yamlMap{"kind": []string{"client"}, "attributes": yamlMap{"db.system": "redis"}},
				"probability": 1.0 / 1024,
			}}}
			if !hold {
				sampling["hold"] = yamlMap{"max_bytes": 0}
			}
			cfg := withMetrics(t, sidecarConfig{
				signals:    []string{"traces"},
				receivers:  yamlMap{"otlp": otlp},
				processors: yamlMap{"sampling": sampling},
				exporters:  axiomExporter(fake.URL(), nil),
			}.yaml(), metrics)
			s := StartSidecar(t, cfg)
			s.WaitListening(t, httpAddr)
			s.WaitOutput(t, `"presampling": true`)

			const requests, perRequest = 200, 2000
			var seq uint64
			for range requests {
				td := ptrace.NewTraces()
				rs := td.ResourceSpans().AppendEmpty()
				rs.Resource().Attributes().PutStr("service.name", "checkout")
				spans := rs.ScopeSpans().AppendEmpty().Spans()
				for range perRequest {
					seq++
					var tid pcommon.TraceID
					binary.BigEndian.PutUint64(tid[:8], seq)
					binary.BigEndian.PutUint64(tid[8:], seq*0x9e3779b97f4a7c15)
					sp := spans.AppendEmpty()
					sp.SetTraceID(tid)
					sp.SetSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, 8})
					sp.SetParentSpanID(pcommon.SpanID{9, 9, 9, 9, 9, 9, 9, byte(seq)})
					sp.SetName("GET")
					sp.SetKind(ptrace.SpanKindClient)
					sp.SetStartTimestamp(1_000_000_000)
					sp.SetEndTimestamp(1_000_400_000)
					sp.Attributes().PutStr("db.system", "redis")
					sp.Attributes().PutStr("db.statement", "GET user:session:"+strconv.FormatUint(seq, 16))
				}
				postTraces(t, httpAddr, td)
			}
			s.WaitListening(t, metrics)
			var got map[string]string
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
				got = scrape(t, "http://"+metrics+"/metrics")
				if got[`otelcol_processor_sampling_seen_items{processor="sampling",rule="redis-get",signal="traces"}`] == strconv.Itoa(requests*perRequest) {
					break
				}
			}
			peaks[hold] = peakRSS(t, s.cmd.Process.Pid)
			held := got[`otelcol_processor_sampling_held_items{processor="sampling"}`]
			early := got[`otelcol_processor_sampling_released_items{processor="sampling",reason="budget"}`]
			t.Logf("%d orphan leaves, hold %v: peak RSS %.1f MB, held %s, released early %s", requests*perRequest, hold, float64(peaks[hold])/1e6, held, early)
			if hold {
				if n, _ := strconv.Atoi(held); n == 0 {
					t.Errorf("nothing held: %v", got)
				}
				if n, _ := strconv.Atoi(early); n == 0 {
					t.Errorf("nothing released early under the byte budget: %v", got)
				}
				if peaks[hold] > 96_000_000 {
					t.Errorf("peak RSS %d bytes, over the 96 MB budget", peaks[hold])
				}
			} else if held != "" && held != "0" {
				t.Errorf("held %s with hold.max_bytes 0", held)
			}
			if code := s.Stop(t); code != 0 {
				t.Errorf("exit code %d", code)
			}
		})
	}
}

// withMetrics turns the config's self-metrics on, served for Prometheus at addr.
func withMetrics(t *testing.T, cfg, addr string) string {
	t.Helper()
	var doc yamlMap
	if err := yaml.Unmarshal([]byte(cfg), &doc); err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(addr, ":")
	p, _ := strconv.Atoi(port)
	doc["service"].(yamlMap)["telemetry"] = yamlMap{"metrics": yamlMap{"readers": []yamlMap{{"pull": yamlMap{"exporter": yamlMap{"prometheus": yamlMap{"host": host, "port": p}}}}}}}
	out, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
