package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluent/fluent-logger-golang/fluent"
	"github.com/klauspost/compress/zstd"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

const fwdContainerID = "9f3c2b1a0e8d7c6b5a4938271605f4e3d2c1b0a99887766554433221100ffeed"

// forwardConfig runs the stdout receiver with only its Fluent Forward
// transport, on TCP addr and the unix socket sock, into the axiom exporter
// pointed at url, with axiom added to the exporter's settings.
func forwardConfig(addr, sock, url string, axiom yamlMap) sidecarConfig {
	return sidecarConfig{
		signals:   []string{"logs"},
		receivers: yamlMap{"stdout": yamlMap{"forward": yamlMap{"endpoint": addr, "unix_socket": sock}}},
		exporters: axiomExporter(url, axiom),
	}
}

// socketPath returns a unix socket path short enough for sun_path, in a
// directory that does not exist yet (the sidecar creates it).
func socketPath(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "fwd-e2e")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "run", "fluent.sock")
}

// fwdPinoTime is the pino `time` (epoch ms) of line i.
func fwdPinoTime(i int) int64 { return 1767225600000 + int64(i) }

// postLines sends n docker-shaped records (as docker's fluentd driver and
// FireLens do) with pino lines, plus one plain-text line, through logger.
func postLines(t *testing.T, logger *fluent.Fluent, via string, n int) {
	t.Helper()
	for i := range n {
		line := fmt.Sprintf(`{"level":%d,"time":%d,"pid":7,"hostname":"ip-10-0-1-23","via":%q,"seq":%d,"msg":"request %d"}`,
			[]int{30, 40, 50}[i%3], fwdPinoTime(i), via, i, i)
		rec := map[string]string{"container_id": fwdContainerID, "container_name": "/ecs-app-" + via, "source": "stdout", "log": line}
		if err := logger.PostWithTime("app-firelens-"+via, time.UnixMilli(fwdPinoTime(i)), rec); err != nil {
			t.Fatalf("%s post %d: %v", via, i, err)
		}
	}
	plain := map[string]string{"container_id": fwdContainerID, "container_name": "/ecs-app-" + via, "source": "stderr",
		"log": "panic: runtime error via " + via}
	if err := logger.Post("app-firelens-"+via, plain); err != nil {
		t.Fatal(err)
	}
}

// checkForwardEvents checks that every line sent through via arrived once,
// shaped as @axiomhq/pino would have sent it, with the forward attributes.
func checkForwardEvents(t *testing.T, events []map[string]any, via string, n int, wantResource map[string]string) {
	t.Helper()
	levels := []string{"info", "warn", "error"}
	seen := make(map[int]bool)
	plain := 0
	for _, ev := range events {
		res, _ := ev["resource"].(map[string]any)
		if res["fluent.tag"] != "app-firelens-"+via {
			continue
		}
		if res["container_name"] != "/ecs-app-"+via || res["container_id"] != fwdContainerID {
			t.Errorf("%s: resource %v", via, res)
		}
		for k, v := range wantResource {
			if res[k] != v {
				t.Errorf("%s: resource %s = %v, want %q", via, k, res[k], v)
			}
		}
		if msg, ok := ev["message"].(string); ok && msg == "panic: runtime error via "+via {
			plain++
			continue
		}
		if ev["split"] == true {
			continue // checked by checkSplitLine
		}
		seq, err := strconv.Atoi(fmt.Sprint(ev["seq"])) // a number, whichever way the JSON was decoded
		if err != nil {
			t.Errorf("%s: unexpected event %v", via, ev)
			continue
		}
		if seen[seq] {
			t.Errorf("%s: line %d arrived twice", via, seq)
		}
		seen[seq] = true
		if ev["level"] != levels[seq%3] || ev["msg"] != fmt.Sprintf("request %d", seq) || ev["via"] != via ||
			ev["hostname"] != "ip-10-0-1-23" || fmt.Sprint(ev["pid"]) != "7" {
			t.Errorf("%s: line %d fields: %v", via, seq, ev)
		}
		if _, ok := ev["time"]; ok {
			t.Errorf("%s: line %d kept `time` next to `_time`", via, seq)
		}
		if !sameInstant(ev["_time"], fwdPinoTime(seq)) {
			t.Errorf("%s: line %d _time %v, want epoch ms %d", via, seq, ev["_time"], fwdPinoTime(seq))
		}
	}
	if len(seen) != n || plain != 1 {
		t.Errorf("%s: %d distinct pino lines (want %d), %d plain lines (want 1)", via, len(seen), n, plain)
	}
}

// postSplitLine sends one 40 KB pino line the way docker's driver sends a
// line longer than 16 KiB: as partial messages with a shared partial_id.
func postSplitLine(t *testing.T, logger *fluent.Fluent, via string) {
	t.Helper()
	line := fmt.Sprintf(`{"level":30,"time":%d,"split":true,"msg":"%s"}`, fwdPinoTime(0), strings.Repeat("x", 40000))
	for i, off := 0, 0; off < len(line); i, off = i+1, off+16384 {
		end := min(off+16384, len(line))
		rec := map[string]string{"container_id": fwdContainerID, "container_name": "/ecs-app-" + via, "source": "stdout",
			"log": line[off:end], "partial_message": "true", "partial_id": "b2f1c0de" + via,
			"partial_ordinal": strconv.Itoa(i + 1), "partial_last": strconv.FormatBool(end == len(line))}
		if err := logger.Post("app-firelens-"+via, rec); err != nil {
			t.Fatal(err)
		}
	}
}

// checkSplitLine checks that the split line arrived once, joined.
func checkSplitLine(t *testing.T, events []map[string]any, via string) {
	t.Helper()
	found := 0
	for _, ev := range events {
		if res, _ := ev["resource"].(map[string]any); ev["split"] != true || res["fluent.tag"] != "app-firelens-"+via {
			continue
		}
		found++
		if ev["msg"] != strings.Repeat("x", 40000) || ev["level"] != "info" {
			t.Errorf("%s: split line not joined: msg of %d bytes, level %v", via, len(fmt.Sprint(ev["msg"])), ev["level"])
		}
	}
	if found != 1 {
		t.Errorf("%s: split line arrived %d times, want once", via, found)
	}
}

// sameInstant reports whether _time (stored by Axiom as an RFC 3339
// string) is the instant of epoch milliseconds ms.
func sameInstant(v any, ms int64) bool {
	s, _ := v.(string)
	tm, err := time.Parse(time.RFC3339Nano, s)
	return err == nil && tm.Equal(time.UnixMilli(ms))
}

func newFluentLogger(t *testing.T, cfg fluent.Config) *fluent.Fluent {
	t.Helper()
	cfg.RequestAck = true
	cfg.Timeout = 10 * time.Second
	l, err := fluent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Fluent Forward over TCP (synchronous, acked) and over the unix socket
// (asynchronous with sub-second EventTime, as FireLens sends): every post is
// acknowledged, every line arrives once (pino lines as their fields, a plain
// line as its message) with the record's container fields in the resource, a
// line docker split into partial messages arrives joined, and the socket file
// is removed at exit.
func TestStdoutForwardAcksAndShipsEveryRecordOverTCPAndUnix(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	addr, sock := FreeAddr(t), socketPath(t)
	s := StartSidecar(t, forwardConfig(addr, sock, fake.URL(), nil).yaml())
	s.WaitListening(t, addr)
	s.WaitListening(t, sock)

	host, portStr, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portStr)
	const n = 300
	// TCP, synchronous: each Post returns after the sidecar's ack.
	tcp := newFluentLogger(t, fluent.Config{FluentHost: host, FluentPort: port})
	postLines(t, tcp, "tcp", n)
	postSplitLine(t, tcp, "tcp")
	if err := tcp.Close(); err != nil {
		t.Fatal(err)
	}
	// Unix socket, asynchronous with sub-second EventTime, as FireLens's
	// log driver sends; an ack failure would be reported to the callback.
	var asyncErrs atomic.Int64
	unix := newFluentLogger(t, fluent.Config{FluentNetwork: "unix", FluentSocketPath: sock, Async: true, SubSecondPrecision: true,
		AsyncResultCallback: func(_ []byte, err error) {
			if err != nil {
				asyncErrs.Add(1)
			}
		}})
	postLines(t, unix, "unix", n)
	if err := unix.Close(); err != nil { // waits until every message was acked
		t.Fatal(err)
	}
	if asyncErrs.Load() != 0 {
		t.Fatalf("%d async posts were not acknowledged", asyncErrs.Load())
	}

	const want = 2*(n+1) + 1
	if err := fake.WaitEvents("app-logs", want, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	if code := s.Stop(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	events := fake.Events("app-logs")
	if len(events) != want {
		t.Fatalf("%d events, want %d", len(events), want)
	}
	checkForwardEvents(t, events, "tcp", n, nil)
	checkSplitLine(t, events, "tcp")
	checkForwardEvents(t, events, "unix", n, nil)
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("unix socket left behind after exit: %v", err)
	}
}

// On ECS (ECS_CONTAINER_METADATA_URI_V4 set) every event carries the task's
// cluster, ARN and task definition as FireLens names them, and the aws.ecs.*
// and cloud.* resource attributes, read from the metadata endpoint once.
func TestStdoutForwardAddsECSMetadata(t *testing.T) {
	task := `{
  "Cluster": "arn:aws:ecs:us-east-1:111122223333:cluster/prod-api",
  "TaskARN": "arn:aws:ecs:us-east-1:111122223333:task/prod-api/0b69d5c0d0b74b8fa2f5d3f3d9a1e7c2",
  "Family": "checkout",
  "Revision": "42",
  "DesiredStatus": "RUNNING",
  "KnownStatus": "RUNNING",
  "Limits": {"CPU": 0.5, "Memory": 1024},
  "AvailabilityZone": "us-east-1b",
  "LaunchType": "FARGATE",
  "Containers": [{"DockerId": "0b69d5c0d0b74b8fa2f5d3f3d9a1e7c2-1", "Name": "log_router", "Image": "sidecar:1"}]
}`
	var hits atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v4/0b69d5c0-log-router/task", func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(task))
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	meta := httptest.NewUnstartedServer(mux)
	meta.Listener = ln
	meta.Start()
	defer meta.Close()

	fake := axiomtest.NewForTest(t)
	addr, sock := FreeAddr(t), socketPath(t)
	s := StartSidecar(t, forwardConfig(addr, sock, fake.URL(), nil).yaml(),
		WithEnv("ECS_CONTAINER_METADATA_URI_V4="+meta.URL+"/v4/0b69d5c0-log-router"))
	s.WaitListening(t, sock)

	const n = 20
	unix := newFluentLogger(t, fluent.Config{FluentNetwork: "unix", FluentSocketPath: sock, SubSecondPrecision: true})
	postLines(t, unix, "ecs", n)
	if err := unix.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fake.WaitEvents("app-logs", n+1, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	if code := s.Stop(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	checkForwardEvents(t, fake.Events("app-logs"), "ecs", n, map[string]string{
		"ecs_cluster":         "prod-api",
		"ecs_task_arn":        "arn:aws:ecs:us-east-1:111122223333:task/prod-api/0b69d5c0d0b74b8fa2f5d3f3d9a1e7c2",
		"ecs_task_definition": "checkout:42",
		// the OpenTelemetry semantic conventions, beside FireLens's names
		"cloud.provider":          "aws",
		"cloud.platform":          "aws_ecs",
		"cloud.region":            "us-east-1",
		"cloud.account.id":        "111122223333",
		"cloud.availability_zone": "us-east-1b",
		"aws.ecs.cluster.arn":     "arn:aws:ecs:us-east-1:111122223333:cluster/prod-api",
		"aws.ecs.task.arn":        "arn:aws:ecs:us-east-1:111122223333:task/prod-api/0b69d5c0d0b74b8fa2f5d3f3d9a1e7c2",
		"aws.ecs.task.id":         "0b69d5c0d0b74b8fa2f5d3f3d9a1e7c2",
		"aws.ecs.task.family":     "checkout",
		"aws.ecs.task.revision":   "42",
		"aws.ecs.launchtype":      "fargate",
	})
	if hits.Load() != 1 {
		t.Errorf("task metadata read %d times, want once", hits.Load())
	}
}

// With when_full: block, while the pipeline refuses data (Axiom slow,
// exporter queue full), the sidecar stops reading the connection: a
// synchronous client's writes block (TCP backpressure, as the docker driver
// sees it) and every line still arrives exactly once.
func TestStdoutForwardBlockWhenFullLosesNothing(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	slow := make([]axiomtest.Fault, 4)
	for i := range slow {
		slow[i] = axiomtest.Slow(time.Second)
	}
	fake.Fail("app-logs", slow...)
	// The smallest memory budget: an in-memory queue of about 1 MiB.
	queue := yamlMap{"memory": "9MiB", "sending_queue": yamlMap{"block_on_overflow": false}}
	addr, sock := FreeAddr(t), socketPath(t)
	cfg := forwardConfig(addr, sock, fake.URL(), queue)
	cfg.receivers["stdout"].(yamlMap)["forward"].(yamlMap)["when_full"] = "block"
	cfg.metrics = FreeAddr(t)
	s := StartSidecar(t, cfg.yaml())
	s.WaitListening(t, addr)
	host, portStr, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portStr)
	// Synchronous and without acks, as docker's driver runs by default: a
	// Post returns once its bytes are written to the socket.
	logger, err := fluent.New(fluent.Config{FluentHost: host, FluentPort: port, Timeout: 10 * time.Second, SubSecondPrecision: true})
	if err != nil {
		t.Fatal(err)
	}
	const n = 30000
	postLines(t, logger, "bp", n)
	if err := logger.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fake.WaitEvents("app-logs", n+1, 90*time.Second); err != nil {
		t.Fatal(err)
	}
	checkRefused(t, cfg.metrics)
	if code := s.Stop(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	events := fake.Events("app-logs")
	if len(events) != n+1 {
		t.Fatalf("%d events, want %d", len(events), n+1)
	}
	checkForwardEvents(t, events, "bp", n, nil)
}

// A JSON line over max_line_bytes that docker's driver split into partial
// messages reaches Axiom as one event with every member, as on stdin: the
// long value cut where the joined line reached the limit, the members
// after it kept (pino's msg, a trace id), marked log.truncated; the next
// line is unharmed.
func TestStdoutForwardHugeSplitLineKeepsItsFields(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	addr, sock := FreeAddr(t), socketPath(t)
	cfg := forwardConfig(addr, sock, fake.URL(), nil)
	cfg.receivers["stdout"].(yamlMap)["max_line_bytes"] = 65536
	s := StartSidecar(t, cfg.yaml())
	s.WaitListening(t, addr)
	host, portStr, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portStr)
	logger := newFluentLogger(t, fluent.Config{FluentHost: host, FluentPort: port})

	line := hugeLinePrefix + strings.Repeat("x", 200<<10) + `","msg":"boom","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"}`
	for i, off := 0, 0; off < len(line); i, off = i+1, off+16384 {
		end := min(off+16384, len(line))
		rec := map[string]string{"container_name": "/app", "source": "stdout", "log": line[off:end],
			"partial_message": "true", "partial_id": "9e1d", "partial_ordinal": strconv.Itoa(i + 1),
			"partial_last": strconv.FormatBool(end == len(line))}
		if err := logger.Post("docker.app", rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := logger.Post("docker.app", map[string]string{"container_name": "/app", "source": "stdout",
		"log": lineAfterHuge}); err != nil {
		t.Fatal(err)
	}
	if err := logger.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fake.WaitEvents("app-logs", 2, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	checkHugeLineCut(t, fake.Events("app-logs"), map[string]any{"trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"})
}

// A record whose JSON log holds raw newlines between its tokens (as a
// multiline parser joins `JSON.stringify(obj, null, 2)` output) arrives as
// one event with its fields, and every request is NDJSON line by line (the
// fake Axiom reads a body as a stream of values, so a proxy in front checks
// each line): the decoder keeps such a batch's raw scope off one-line, so
// the exporter's own scan turns those newlines into spaces.
func TestStdoutForwardSpacedJSONArrivesWhole(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	var brokenLines atomic.Int64
	strict := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
		}
		if r.Header.Get("Content-Encoding") == "zstd" {
			dec, _ := zstd.NewReader(nil)
			plain, err := dec.DecodeAll(body, nil)
			dec.Close()
			if err != nil {
				t.Error(err)
			}
			for line := range bytes.Lines(plain) {
				if line = bytes.TrimSpace(line); len(line) > 0 && !json.Valid(line) {
					brokenLines.Add(1)
				}
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		fake.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(strict.Close)
	addr := FreeAddr(t)
	s := StartSidecar(t, forwardConfig(addr, socketPath(t), strict.URL, nil).yaml())
	s.WaitListening(t, addr)
	host, portStr, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portStr)
	logger := newFluentLogger(t, fluent.Config{FluentHost: host, FluentPort: port})
	const n = 50
	postLines(t, logger, "tcp", n)
	spaced := "{\n  \"level\": 30,\n  \"time\": 1767225600999,\n  \"spaced\": true,\n  \"nested\": {\n    \"a\": [1,\n 2]\n  },\n  \"msg\": \"pretty\"\n}"
	rec := map[string]string{"container_id": fwdContainerID, "container_name": "/ecs-app-tcp", "source": "stdout", "log": spaced}
	if err := logger.PostWithTime("app-firelens-tcp", time.UnixMilli(1767225600999), rec); err != nil {
		t.Fatal(err)
	}
	postLines(t, logger, "tcp", n)
	if err := logger.Close(); err != nil {
		t.Fatal(err)
	}
	const want = 2*(n+1) + 1
	if err := fake.WaitEvents("app-logs", want, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	if code := s.Stop(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	if got := brokenLines.Load(); got != 0 {
		t.Errorf("%d request lines were not a JSON value each", got)
	}
	events := fake.Events("app-logs")
	if len(events) != want {
		t.Fatalf("%d events, want %d", len(events), want)
	}
	found := 0
	for _, ev := range events {
		if ev["spaced"] != true {
			continue
		}
		found++
		nested, _ := ev["nested"].(map[string]any)
		if ev["msg"] != "pretty" || ev["level"] != "info" || fmt.Sprint(nested["a"]) != "[1 2]" {
			t.Errorf("spaced event arrived changed: %v", ev)
		}
	}
	if found != 1 {
		t.Errorf("spaced event arrived %d times, want once", found)
	}
}
