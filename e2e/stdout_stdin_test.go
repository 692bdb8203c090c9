package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// stdinConfig runs the stdout receiver on stdin (with the stdin settings)
// into the axiom exporter pointed at url, with axiom added to the exporter's
// settings.
func stdinConfig(url string, stdin, axiom yamlMap) sidecarConfig {
	return sidecarConfig{
		signals:   []string{"logs", "traces"},
		receivers: yamlMap{"stdout": yamlMap{"stdin": stdin}},
		exporters: axiomExporter(url, axiom),
	}
}

// pinoLogger writes lines the way pino does: the fixed prefix
// {"level":N,"time":<epoch ms>,"pid":..,"hostname":..}, then the child's
// bindings, then the merged object, then "msg"; JSON.stringify escaping
// (no HTML escaping); one line each.
type pinoLogger struct {
	w        *bufio.Writer
	pid      int
	hostname string
	bindings string // `,"module":"db"` for a child logger
	clock    int64  // epoch ms of the next line
}

func (p *pinoLogger) log(level int, obj map[string]any, msg string) map[string]any {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"level":%d,"time":%d,"pid":%d,"hostname":%s%s`, level, p.clock, p.pid, jsonString(p.hostname), p.bindings)
	p.clock++
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	for _, k := range sortedKeys(keys) {
		fmt.Fprintf(&b, ",%s:%s", jsonString(k), jsonValue(obj[k]))
	}
	fmt.Fprintf(&b, `,"msg":%s}`, jsonString(msg))
	line := b.String()
	p.w.WriteString(line + "\n")
	var parsed map[string]any
	if err := json.Unmarshal([]byte(line), &parsed); err != nil {
		panic(err)
	}
	return parsed
}

func sortedKeys(k []string) []string {
	for i := 1; i < len(k); i++ {
		for j := i; j > 0 && k[j] < k[j-1]; j-- {
			k[j], k[j-1] = k[j-1], k[j]
		}
	}
	return k
}

func jsonValue(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func jsonString(s string) string { return jsonValue(s) }

// axiomPinoEvent is what @axiomhq/pino (axiomhq/axiom-js packages/pino)
// sends for a pino object, `{_time: time, level: mapLogLevel(level),
// ...rest}`, as the fake Axiom stores it (which normalises _time to RFC 3339
// and adds _sysTime).
func axiomPinoEvent(obj map[string]any) map[string]any {
	ev := map[string]any{}
	for k, v := range obj {
		ev[k] = v
	}
	delete(ev, "time")
	ev["_time"] = time.UnixMilli(int64(obj["time"].(float64))).UTC().Format(time.RFC3339Nano)
	ev["level"] = "silent"
	for i, name := range []string{"trace", "debug", "info", "warn", "error", "fatal"} {
		if obj["level"].(float64) <= float64(10*(i+1)) {
			ev["level"] = name
			break
		}
	}
	return ev
}

const stdinSpanLine = `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"shop"}}]},` +
	`"scopeSpans":[{"scope":{"name":"shop"},"spans":[{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174",` +
	`"name":"GET /orders","kind":2,"startTimeUnixNano":"1764504000000000000","endTimeUnixNano":"1764504000100000000",` +
	`"status":{}}]}]}]}`

// `app | sidecar`: pino lines, stack traces and a span line go in; at end of
// input the sidecar drains its pipeline and exits 0, and exactly the lines
// written are in Axiom, pino lines shaped as @axiomhq/pino would send them.
func TestStdinShipsEveryLineLikeAxiomPinoAndExitsAtEOF(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	s := StartSidecar(t, stdinConfig(fake.URL(), yamlMap{}, nil).yaml(), WithStdin())

	w := bufio.NewWriter(s.Stdin)
	app := &pinoLogger{w: w, pid: 4242, hostname: "ip-10-0-1-17", clock: 1764504000000}
	db := &pinoLogger{w: w, pid: 4242, hostname: "ip-10-0-1-17", bindings: `,"module":"db"`, clock: 1764504500000}
	const requests = 3000
	var pinoObjs []map[string]any
	textLines := 0
	for i := range requests {
		pinoObjs = append(pinoObjs, app.log(30, map[string]any{
			"req": map[string]any{"id": fmt.Sprintf("req-%d", i), "method": "GET", "url": fmt.Sprintf("/orders/%d?x=<&>", i)},
			"res": map[string]any{"statusCode": 200}, "responseTime": 12.5,
		}, "request completed"))
		if i%500 == 0 {
			pinoObjs = append(pinoObjs, db.log(50, map[string]any{
				"err": map[string]any{"type": "Error", "message": "connect ECONNREFUSED", "stack": "Error: connect ECONNREFUSED\n    at TCPConnectWrap (node:net:1555:16)"},
			}, "query failed \u00e9\u4e2d"))
			// An uncaught exception's stack trace, printed raw by the runtime.
			w.WriteString("TypeError: Cannot read properties of undefined (reading 'id')\n")
			w.WriteString("    at handler (/app/src/orders.js:42:17)\n")
			w.WriteString("    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)\n")
			textLines += 3
		}
		if i == requests/2 {
			w.WriteString(stdinSpanLine + "\n")
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	code := s.EndInput(t, 90*time.Second)
	if code != 0 {
		t.Fatalf("exit code %d at end of input, want 0", code)
	}

	// The process exited after its exporters flushed: everything is there.
	events := fake.Events("app-logs")
	if want := len(pinoObjs) + textLines; len(events) != want {
		t.Fatalf("%d events in Axiom, want exactly %d", len(events), want)
	}
	if n := fake.SpanCount("app-traces"); n != 1 {
		t.Fatalf("%d spans in Axiom, want 1", n)
	}
	spans := fake.Spans("app-traces")
	if name := spans[0]["name"]; name != "GET /orders" {
		t.Errorf("span %v", spans[0])
	}

	byMsgTime := map[string]map[string]any{}
	texts := 0
	for _, ev := range events {
		if _, ok := ev["pid"]; ok {
			byMsgTime[fmt.Sprint(ev["_time"], ev["msg"])] = ev
		} else {
			texts++
		}
	}
	if texts != textLines {
		t.Errorf("%d non-JSON events, want %d", texts, textLines)
	}
	for _, obj := range pinoObjs {
		want := axiomPinoEvent(obj)
		got, ok := byMsgTime[fmt.Sprint(want["_time"], want["msg"])]
		if !ok {
			t.Fatalf("pino line missing in Axiom: %v", obj)
		}
		// Compared as JSON so number representations do not matter.
		if g, w := jsonValue(withoutKey(got, "_sysTime")), jsonValue(want); g != w {
			t.Fatalf("pino line differs from what @axiomhq/pino sends:\n got %s\nwant %s", g, w)
		}
	}
}

func withoutKey(m map[string]any, k string) map[string]any {
	out := make(map[string]any, len(m))
	for key, v := range m {
		if key != k {
			out[key] = v
		}
	}
	return out
}

// An empty stdin (the app printed nothing) still ends the sidecar cleanly:
// end of input can come before the collector listens for signals.
func TestStdinEmptyInputExitsZero(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	s := StartSidecar(t, stdinConfig(fake.URL(), yamlMap{}, nil).yaml(), WithStdin())
	code := s.EndInput(t, 60*time.Second)
	if code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	if n := fake.EventCount("app-logs"); n != 0 {
		t.Fatalf("%d events from no input", n)
	}
}

// With exit_on_eof: false the sidecar keeps serving after end of input
// (other transports may still be running) until it is stopped.
func TestStdinStaysUpWithoutExitOnEOF(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	s := StartSidecar(t, stdinConfig(fake.URL(), yamlMap{"exit_on_eof": false}, nil).yaml(), WithStdin())
	if _, err := io.WriteString(s.Stdin, "plain line one\n{\"level\":40,\"time\":1764504000000,\"msg\":\"two\"}\n"); err != nil {
		t.Fatal(err)
	}
	if err := s.Stdin.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fake.WaitEvents("app-logs", 2, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	if code, err := s.Wait(2 * time.Second); err == nil {
		t.Fatalf("sidecar exited (code %d) at end of input with exit_on_eof false", code)
	}
	if code := s.Stop(t); code != 0 {
		t.Fatalf("exit code %d after SIGTERM", code)
	}
	if n := fake.EventCount("app-logs"); n != 2 {
		t.Fatalf("%d events, want 2", n)
	}
}

// With when_full: block, when the pipeline refuses data (here: the
// exporter's queue is full while Axiom answers slowly) the receiver stops
// reading stdin and retries instead of dropping: every line still arrives
// exactly once.
func TestStdinBlockWhenFullLosesNothing(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	slow := make([]axiomtest.Fault, 4)
	for i := range slow {
		slow[i] = axiomtest.Slow(time.Second)
	}
	fake.Fail("app-logs", slow...)
	// The smallest memory budget: an in-memory queue of about 1 MiB.
	queue := yamlMap{"memory": "9MiB", "sending_queue": yamlMap{"block_on_overflow": false}}
	cfg := stdinConfig(fake.URL(), yamlMap{"when_full": "block"}, queue)
	cfg.metrics = FreeAddr(t)
	s := StartSidecar(t, cfg.yaml(), WithStdin())
	w := bufio.NewWriter(s.Stdin)
	app := &pinoLogger{w: w, pid: 1, hostname: "h", clock: 1764504000000}
	const n = 30000
	for i := range n {
		app.log(30, map[string]any{"seq": i}, "work")
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := fake.WaitEvents("app-logs", n, 90*time.Second); err != nil {
		t.Fatal(err)
	}
	checkRefused(t, cfg.metrics)
	if err := s.Stdin.Close(); err != nil {
		t.Fatal(err)
	}
	code, err := s.Wait(120 * time.Second)
	if err != nil || code != 0 {
		t.Fatalf("exit %d, %v", code, err)
	}
	events := fake.Events("app-logs")
	seen := make(map[string]bool, n)
	for _, ev := range events {
		seq := fmt.Sprint(ev["seq"])
		if seen[seq] {
			t.Fatalf("line %s arrived twice", seq)
		}
		seen[seq] = true
	}
	if len(seen) != n {
		t.Fatalf("%d distinct lines arrived, want %d", len(seen), n)
	}
}

// A line over max_line_bytes reaches Axiom as one event with every member:
// the long value cut at the limit, the members after it kept (pino's msg
// comes last), its own _time and level, marked log.truncated; the next line
// is unharmed.
func TestStdinHugeLineIsCutKeepingItsFieldsAndMarked(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	cfg := stdinConfig(fake.URL(), yamlMap{}, nil)
	cfg.receivers["stdout"].(yamlMap)["max_line_bytes"] = 65536
	s := StartSidecar(t, cfg.yaml(), WithStdin())
	huge := hugeLinePrefix + strings.Repeat("x", 200<<10) + `","msg":"boom"}`
	if _, err := io.WriteString(s.Stdin, huge+"\n"+lineAfterHuge+"\n"); err != nil {
		t.Fatal(err)
	}
	s.Stdin.Close()
	if code, err := s.Wait(60 * time.Second); err != nil || code != 0 {
		t.Fatalf("exit %d, %v", code, err)
	}
	cut := checkHugeLineCut(t, fake.Events("app-logs"), nil)
	if tm, _ := cut["_time"].(string); !strings.HasPrefix(tm, "2025-11-30T12:00:00") {
		t.Fatalf("_time %v, want the line's own", cut["_time"])
	}
}

// The huge-line tests write a pino line that starts with hugeLinePrefix,
// goes on with a value far over max_line_bytes (65536 in them), ends with
// msg "boom" and members of their own, and then lineAfterHuge.
const (
	hugeLinePrefix = `{"level":50,"time":1764504000000,"req":{"id":7},"stack":"`
	lineAfterHuge  = `{"level":30,"time":1764504000001,"msg":"after"}`
)

// checkHugeLineCut checks what Axiom got from a huge-line test: two events,
// the line after unharmed, the huge one's stack cut to what fits in 65,536
// bytes, its other members kept (level, req, msg and the given extra ones),
// and marked log.truncated. It returns the cut event.
func checkHugeLineCut(t *testing.T, events []map[string]any, extra map[string]any) map[string]any {
	t.Helper()
	if len(events) != 2 {
		t.Fatalf("%d events, want 2", len(events))
	}
	var cut, after map[string]any
	for _, ev := range events {
		if ev["msg"] == "after" {
			after = ev
		} else {
			cut = ev
		}
	}
	if after == nil || after["level"] != "info" {
		t.Fatalf("the line after the huge one: %v", after)
	}
	if stack, _ := cut["stack"].(string); stack != strings.Repeat("x", 65536-len(hugeLinePrefix)) {
		t.Fatalf("cut value has %d bytes, want the %d that fit", len(stack), 65536-len(hugeLinePrefix))
	}
	if cut["level"] != "error" || fmt.Sprint(cut["req"]) != "map[id:7]" || cut["msg"] != "boom" {
		t.Fatalf("members not kept: level %v, req %v, msg %v", cut["level"], cut["req"], cut["msg"])
	}
	for k, v := range extra {
		if cut[k] != v {
			t.Fatalf("member %s: %v, want %v", k, cut[k], v)
		}
	}
	if attrs, _ := cut["attributes"].(map[string]any); attrs["log.truncated"] != true {
		t.Fatalf("truncated event not marked: attributes %v", cut["attributes"])
	}
	return cut
}

// SIGTERM while stdin is still open (the app still runs): the sidecar stops
// cleanly, exit 0, with the lines read so far delivered.
func TestStdinStopWhileInputOpenDeliversWhatWasRead(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	s := StartSidecar(t, stdinConfig(fake.URL(), yamlMap{}, nil).yaml(), WithStdin())
	if _, err := io.WriteString(s.Stdin, "{\"level\":30,\"time\":1764504000000,\"msg\":\"one\"}\nplain two\n"); err != nil {
		t.Fatal(err)
	}
	if err := fake.WaitEvents("app-logs", 2, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	if code := s.Stop(t); code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	if n := fake.EventCount("app-logs"); n != 2 {
		t.Fatalf("%d events, want 2", n)
	}
}

// checkRefused fails the test unless the sidecar serving its metrics at addr
// counted a push its pipeline refused. Pauses as short as the flow-control
// tests' (about one slow request) are not logged, so the counter is the
// evidence that the test exercised flow control.
func checkRefused(t *testing.T, addr string) {
	t.Helper()
	_, port, _ := strings.Cut(addr, ":")
	if scrapeCounter(port, "otelcol_receiver_stdout_refused_pushes", "") == 0 {
		t.Fatal("the queue never refused: the test did not exercise flow control")
	}
}
