package e2e

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
	"github.com/sidecarhq/sidecar/internal/setupcheck"
)

// nodeAppDir is the example app (examples/node-app), installed by
// scripts/setup.sh from its lockfile.
const nodeAppDir = "../examples/node-app"

// nodeAppSampling is merged over embedded:stdin. The ioredis
// instrumentation (0.71) emits the stable semantic conventions only
// (db.system.name, db.operation.name), so the rule names db.system.name.
const nodeAppSampling = `
processors:
  sampling:
    always_keep: {errors: true, min_duration: 40ms}
    rules:
      - name: redis
        match: {kind: [client], attributes: {db.system.name: redis}}
        probability: 0.25
    summaries: {interval: 1s}
`

// nodeAppRequests is the load: /orders/0 .. /orders/299, 8 at a time.
const (
	nodeAppRequests    = 300
	nodeAppConcurrency = 8
	nodeAppMinDuration = 40 * time.Millisecond
	nodeAppThreshold   = 0xc0000000000000 // th for probability 1/4
)

// The example app under Node and under Bun, under load, its stdout piped into
// the real sidecar (embedded:stdin plus a Redis rule): every log line arrives
// once in @axiomhq/pino's shape, every server span arrives, exactly the Redis
// spans the rule keeps arrive with their weights (and those it dropped from
// failed or slow requests, rescued with weight 0), the summaries account for
// every Redis span, logs join their server spans by trace and span id, and
// the app holds no socket but its listener, its clients and Redis.
func TestNodeAppShipsLogsAndSpansThroughStdoutOnly(t *testing.T) {
	t.Run("node", func(t *testing.T) { testNodeApp(t, nodeBinary(t)) })
	t.Run("bun", func(t *testing.T) { testNodeApp(t, npmInstalled(t, nodeAppDir, "node_modules/.bin/bun")) })
}

func testNodeApp(t *testing.T, runtime string) {
	npmInstalled(t, nodeAppDir, "node_modules/@sidecarhq/otel-stdout")
	redisAddr := startRedis(t)

	fake := axiomtest.NewForTest(t)
	overlay := filepath.Join(t.TempDir(), "sampling.yaml")
	if err := os.WriteFile(overlay, []byte(nodeAppSampling), 0o600); err != nil {
		t.Fatal(err)
	}
	s := StartSidecar(t, "", WithStdin(),
		WithArgs("--config", "embedded:stdin", "--config", "file:"+overlay),
		WithEnv(append(embeddedEnv(t, fake), "AXIOM_DATASET=app-logs", "AXIOM_TRACES_DATASET=app-traces")...))

	appAddr := FreeAddr(t)
	_, appPort, _ := net.SplitHostPort(appAddr)
	app := startApp(t, runtime, s.Stdin, "PORT="+appPort, "REDIS_URL=redis://"+redisAddr.String(), "SERVICE_NAME=node-app")
	waitDial(t, appAddr, app.exited)

	stopWatch := watchSockets(t, app.cmd.Process.Pid, netip.MustParseAddrPort(appAddr), redisAddr)
	load(t, appAddr)
	sawRedis := stopWatch()
	if !sawRedis {
		t.Error("no connection to Redis seen during the load: the socket check saw nothing")
	}

	// SIGTERM: the app exports its last spans and exits.
	if err := app.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-app.exited
	if app.err != nil {
		t.Fatalf("app: %v\n%s", app.err, app.stderr.String())
	}
	logs, spans := app.output(t)
	for _, obj := range logs {
		if obj["msg"] == "stopped" && obj["droppedSpans"] != float64(0) {
			t.Errorf("the app's StdoutSpanExporter dropped %v spans", obj["droppedSpans"])
		}
	}
	// At the end of its input the sidecar drains, summaries of the last
	// interval included, and exits 0.
	if err := s.Stdin.Close(); err != nil {
		t.Fatal(err)
	}
	if code, err := s.Wait(90 * time.Second); err != nil || code != 0 {
		t.Fatalf("sidecar exit code %d, %v", code, err)
	}
	checkNodeAppLogs(t, fake, logs)
	checkNodeAppSpans(t, fake, spans)
}

// startRedis runs a redis-server on a free 127.0.0.1 port until the test ends.
func startRedis(t *testing.T) netip.AddrPort {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		setupcheck.Missing(t, "redis-server")
	}
	addr := netip.MustParseAddrPort(FreeAddr(t))
	cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", strconv.Itoa(int(addr.Port())), "--save", "", "--appendonly", "no")
	cmd.Dir = t.TempDir()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	waitDial(t, addr.String(), exited)
	return addr
}

// waitDial waits until addr accepts connections, failing if exited closes
// or 30 s pass first.
func waitDial(t *testing.T, addr string, exited <-chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-exited:
			t.Fatalf("process exited before listening on %s", addr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listening on %s after 30s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runningApp is the example app with its stdout copied, line by line, to
// the sidecar's stdin (left open at the app's exit) and kept for the test to
// compare with what arrived.
type runningApp struct {
	cmd    *exec.Cmd
	stderr lockedBuffer
	lines  [][]byte // every stdout line, once exited is closed
	exited chan struct{}
	err    error
}

func startApp(t *testing.T, runtime string, sidecarStdin io.WriteCloser, env ...string) *runningApp {
	t.Helper()
	a := &runningApp{exited: make(chan struct{})}
	a.cmd = exec.Command(runtime, "server.js")
	a.cmd.Dir = nodeAppDir
	a.cmd.Env = append(cleanEnv(), env...)
	a.cmd.Stderr = &a.stderr
	stdout, err := a.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(a.exited)
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				a.lines = append(a.lines, line)
				if _, werr := sidecarStdin.Write(line); werr != nil && a.err == nil {
					a.err = fmt.Errorf("writing to the sidecar: %w", werr)
				}
			}
			if err != nil {
				break
			}
		}
		if err := a.cmd.Wait(); err != nil && a.err == nil {
			a.err = err
		}
	}()
	t.Cleanup(func() {
		select {
		case <-a.exited:
		default:
			a.cmd.Process.Kill()
			<-a.exited
		}
		if t.Failed() {
			t.Logf("app stderr:\n%s", a.stderr.String())
		}
	})
	return a
}

// output splits what the app wrote into pino objects and its spans.
func (a *runningApp) output(t *testing.T) ([]map[string]any, ptrace.Traces) {
	t.Helper()
	var logs []map[string]any
	spans := ptrace.NewTraces()
	for _, line := range a.lines {
		if bytes.HasPrefix(line, []byte(`{"resourceSpans":`)) {
			td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(line)
			if err != nil {
				t.Fatalf("a span line of %d bytes: %v\n%s", len(line), err, tornLineReport(line))
			}
			td.ResourceSpans().MoveAndAppendTo(spans.ResourceSpans())
			continue
		}
		var obj map[string]any
		if err := json.Unmarshal(line, &obj); err != nil {
			t.Fatalf("the app wrote a line of %d bytes that is neither a pino line nor a span line: %v\n%s", len(line), err, tornLineReport(line))
		}
		logs = append(logs, obj)
	}
	return logs, spans
}

// tornLineReport shows where pino lines start inside a line that does not
// parse: a torn line is one write cut into by another.
func tornLineReport(line []byte) string {
	var b strings.Builder
	fmt.Fprintf(&b, "starts %q\n", line[:min(len(line), 80)])
	for off := 1; ; {
		i := bytes.Index(line[off:], []byte(`{"level":`))
		if i < 0 {
			break
		}
		off += i
		fmt.Fprintf(&b, "at byte %d: %q\n", off, line[max(0, off-40):min(len(line), off+200)])
		off++
	}
	return b.String()
}

// load sends the requests and checks the answers: 500 for ids ending in 7.
func load(t *testing.T, addr string) {
	t.Helper()
	ids := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bad []string
	for range nodeAppConcurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range ids {
				res, err := http.Get(fmt.Sprintf("http://%s/orders/%d", addr, id))
				want := http.StatusOK
				if id%10 == 7 {
					want = http.StatusInternalServerError
				}
				if err == nil {
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
				if err != nil || res.StatusCode != want {
					mu.Lock()
					bad = append(bad, fmt.Sprintf("/orders/%d: %v %v", id, err, res))
					mu.Unlock()
				}
			}
		}()
	}
	for id := range nodeAppRequests {
		ids <- id
	}
	close(ids)
	wg.Wait()
	if len(bad) > 0 {
		t.Fatalf("%d requests failed, e.g. %s", len(bad), bad[0])
	}
}

// watchSockets samples the app's sockets until the returned function is
// called; it fails the test for any socket other than the app's listener,
// connections to it, and connections to Redis, and reports whether a Redis
// connection was seen.
func watchSockets(t *testing.T, pid int, app, redis netip.AddrPort) func() bool {
	stop, done := make(chan struct{}), make(chan struct{})
	var sawRedis bool
	var errs []string
	go func() {
		defer close(done)
		for {
			socks, err := processSockets(pid)
			if err != nil {
				errs = append(errs, err.Error())
				return
			}
			for _, s := range socks {
				switch {
				case s.listening && s.local.Port() == app.Port():
				case !s.listening && s.local == app:
				case !s.listening && s.remote == redis:
					sawRedis = true
				default:
					errs = append(errs, "unexpected socket: "+s.String())
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() bool {
		close(stop)
		<-done
		for _, e := range errs {
			t.Error(e)
		}
		return sawRedis
	}
}

// checkNodeAppLogs: every line the app logged arrived once, as @axiomhq/pino
// would have sent it; the rest of the logs dataset is sampling summaries.
func checkNodeAppLogs(t *testing.T, fake *axiomtest.Server, logs []map[string]any) {
	t.Helper()
	want := map[string]int{}
	for _, obj := range logs {
		want[canonicalJSON(t, axiomPinoEvent(obj))]++
	}
	arrived := 0
	for _, ev := range fake.Events("app-logs") {
		if _, summary := ev["sampling"]; summary {
			continue
		}
		arrived++
		k := canonicalJSON(t, withoutKey(ev, "_sysTime"))
		if want[k] == 0 {
			t.Errorf("event in Axiom that the app did not log (or a duplicate): %s", k)
			continue
		}
		want[k]--
	}
	if arrived != len(logs) {
		t.Errorf("%d log events in Axiom, the app logged %d lines", arrived, len(logs))
	}
	if len(logs) < nodeAppRequests {
		t.Errorf("the app logged %d lines for %d requests", len(logs), nodeAppRequests)
	}
}

// canonicalJSON is v as JSON after a round trip through float64 numbers, so
// json.Number and float64 forms of one value compare equal.
func canonicalJSON(t *testing.T, v any) string {
	var x any
	if err := json.Unmarshal([]byte(jsonValue(v)), &x); err != nil {
		t.Fatal(err)
	}
	return jsonValue(x)
}

// checkNodeAppSpans: server spans all arrive untouched; Redis spans arrive
// exactly when always_keep or the rule's threshold keeps them, weighted 1 or
// 4; the summaries count every Redis span; log lines join server spans.
func checkNodeAppSpans(t *testing.T, fake *axiomtest.Server, written ptrace.Traces) {
	t.Helper()
	got := spansByID(t, fake.Traces("app-traces"))
	// A request that failed or was slow rescues the Redis spans the rule
	// dropped (deferred drops, sampling/README.md): its server span is the
	// local root they wait for.
	rescuing := map[pcommon.TraceID]bool{}
	for _, rs := range written.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				if sp.Kind() == ptrace.SpanKindServer {
					rescuing[sp.TraceID()] = failedOrSlow(sp)
				}
			}
		}
	}
	var servers, redis, keptRedis, ruleKept, rescued, errs int
	for _, rs := range written.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				g, arrived := got[sp.SpanID()]
				weight, tracestate := 0.0, ""
				if arrived {
					weight, tracestate = spanWeight(g), g.TraceState().AsRaw()
				}
				switch {
				case sp.Kind() == ptrace.SpanKindServer:
					servers++
					if !arrived || weight != 0 {
						t.Errorf("server span %s %q: arrived %v, weight %v", sp.SpanID(), sp.Name(), arrived, weight)
					}
				case isRedis(sp):
					redis++
					failed := sp.Status().Code() == ptrace.StatusCodeError
					slow := spanDuration(sp) >= nodeAppMinDuration
					tid := sp.TraceID()
					byRule := binary.BigEndian.Uint64(tid[8:])&(1<<56-1) >= nodeAppThreshold
					if failed {
						errs++
					}
					switch {
					case failed || slow:
						keptRedis++
						if !arrived || weight != 1 || tracestate != "" {
							t.Errorf("always-kept Redis span %q (error %v, slow %v): arrived %v, weight %v, tracestate %q", sp.Name(), failed, slow, arrived, weight, tracestate)
						}
					case byRule:
						keptRedis++
						ruleKept++
						if !arrived || weight != 4 || tracestate != "ot=th:c" {
							t.Errorf("sampled Redis span %q: arrived %v, weight %v, tracestate %q", sp.Name(), arrived, weight, tracestate)
						}
					case rescuing[tid]:
						rescued++
						r, _ := g.Attributes().Get("sampling.rescued")
						if !arrived || !r.Bool() || weight != 0 || tracestate != "" {
							t.Errorf("Redis span %q of a failed or slow request: arrived %v, rescued %v, weight %v, tracestate %q", sp.Name(), arrived, r.AsRaw(), weight, tracestate)
						}
					default:
						if arrived {
							t.Errorf("Redis span %q arrived; the rule drops it", sp.Name())
						}
					}
				default:
					t.Errorf("unexpected span %q kind %s", sp.Name(), sp.Kind())
				}
			}
		}
	}
	t.Logf("%d server spans, %d Redis spans: %d kept (%d by the rule), %d rescued, %d errors", servers, redis, keptRedis, ruleKept, rescued, errs)
	if servers != nodeAppRequests {
		t.Errorf("the app wrote %d server spans for %d requests", servers, nodeAppRequests)
	}
	if len(got) != servers+keptRedis+rescued {
		t.Errorf("%d spans in Axiom, want %d", len(got), servers+keptRedis+rescued)
	}
	if ruleKept == 0 || ruleKept == redis {
		t.Errorf("the rule kept %d of %d Redis spans: no sampling to observe", ruleKept, redis)
	}

	var seen, kept, dropped, summaryRescued, summaryErrs int64
	for _, ev := range fake.Events("app-logs") {
		s, ok := ev["sampling"].(map[string]any)
		if !ok || s["summary"] != true {
			continue
		}
		n := func(k string) int64 { v, _ := s[k].(json.Number).Int64(); return v }
		if s["rule"] != "redis" || s["service"] != "node-app" || n("seen") != n("kept")+n("dropped") {
			t.Errorf("summary %v", s)
		}
		seen, kept, dropped = seen+n("seen"), kept+n("kept"), dropped+n("dropped")
		summaryRescued, summaryErrs = summaryRescued+n("rescued"), summaryErrs+n("errors")
	}
	// A rescued span stays among the dropped and is counted again in rescued.
	if seen != int64(redis) || kept != int64(keptRedis) || dropped != int64(redis-keptRedis) || summaryRescued != int64(rescued) || summaryErrs != int64(errs) {
		t.Errorf("summaries: seen %d kept %d dropped %d rescued %d errors %d; the app wrote %d Redis spans, %d kept, %d rescued, %d errors",
			seen, kept, dropped, summaryRescued, summaryErrs, redis, keptRedis, rescued, errs)
	}

	// Every "request completed" line names the server span of its request.
	joined := map[pcommon.SpanID]int{}
	for _, ev := range fake.Events("app-logs") {
		if ev["msg"] != "request completed" {
			continue
		}
		var tid pcommon.TraceID
		var sid pcommon.SpanID
		t1, _ := hex.DecodeString(fmt.Sprint(ev["trace_id"]))
		s1, _ := hex.DecodeString(fmt.Sprint(ev["span_id"]))
		copy(tid[:], t1)
		copy(sid[:], s1)
		sp, ok := got[sid]
		if !ok || sp.TraceID() != tid || sp.Kind() != ptrace.SpanKindServer || ev["trace_flags"] != "01" {
			t.Errorf("log line not joined to a server span: trace_id %v span_id %v trace_flags %v", ev["trace_id"], ev["span_id"], ev["trace_flags"])
			continue
		}
		joined[sid]++
	}
	if len(joined) != servers {
		t.Errorf("%d server spans have their request's log line, want all %d", len(joined), servers)
	}
}

// failedOrSlow tells whether a local root rescues its trace's dropped
// spans: status ERROR, an exception event, or always_keep's min_duration.
func failedOrSlow(sp ptrace.Span) bool {
	if sp.Status().Code() == ptrace.StatusCodeError || spanDuration(sp) >= nodeAppMinDuration {
		return true
	}
	for _, ev := range sp.Events().All() {
		if ev.Name() == "exception" {
			return true
		}
	}
	return false
}

func spanDuration(sp ptrace.Span) time.Duration {
	return sp.EndTimestamp().AsTime().Sub(sp.StartTimestamp().AsTime())
}

// spanWeight is a span's sampling.adjusted_count, 0 if it has none.
func spanWeight(sp ptrace.Span) float64 {
	v, ok := sp.Attributes().Get("sampling.adjusted_count")
	if !ok {
		return 0
	}
	return v.Double()
}

func isRedis(sp ptrace.Span) bool {
	v, ok := sp.Attributes().Get("db.system.name")
	return ok && sp.Kind() == ptrace.SpanKindClient && v.Str() == "redis"
}
