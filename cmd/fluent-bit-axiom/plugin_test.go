package main

// These tests build out_axiom.so and a C harness (testdata/harness.c) that
// loads it as Fluent Bit's Go proxy does, and check what reaches the fake
// Axiom against what the sidecar's own components make of the same records
// arriving over Fluent Forward.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tinylib/msgp/msgp"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/sidecarhq/sidecar/exporters/axiomexporter"
	"github.com/sidecarhq/sidecar/internal/axiomtest"
	"github.com/sidecarhq/sidecar/internal/freeport"
	"github.com/sidecarhq/sidecar/internal/losses"
	"github.com/sidecarhq/sidecar/internal/workload"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver"
	"github.com/sidecarhq/sidecar/sampling"
)

const testToken = "xaat-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"

var (
	buildOnce         sync.Once
	buildDir          string
	buildErr          error
	pluginSO, harness string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// built returns the plugin and the harness, building both once per run.
func built(t testing.TB) (so, bin string) {
	t.Helper()
	if out, err := exec.Command("go", "env", "CGO_ENABLED").Output(); err != nil || strings.TrimSpace(string(out)) != "1" {
		t.Skip("cgo is unavailable here (go env CGO_ENABLED is not 1): the plugin is a c-shared library and cannot be built")
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc is not installed: cgo, the plugin and the harness need it")
	}
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "out_axiom"); buildErr != nil {
			return
		}
		pluginSO, harness = filepath.Join(buildDir, "out_axiom.so"), filepath.Join(buildDir, "harness")
		cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", pluginSO, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("building the plugin: %v\n%s", err, out)
			return
		}
		headers, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/fluent/fluent-bit-go").Output()
		if err != nil {
			buildErr = fmt.Errorf("finding fluent-bit-go's headers: %v", err)
			return
		}
		cmd = exec.Command("gcc", "-O1", "-Wall", "-Werror", "-o", harness, filepath.Join("testdata", "harness.c"),
			"-I", filepath.Join(strings.TrimSpace(string(headers)), "output"), "-ldl", "-lpthread")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("building the harness: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return pluginSO, harness
}

// run drives the plugin through the harness with script; it returns the
// result lines (stdout) and the plugin's log (stderr).
func run(t testing.TB, script ...string) (results []string, logs string) {
	t.Helper()
	so, bin := built(t)
	cmd := exec.Command(bin, so)
	cmd.Stdin = strings.NewReader(strings.Join(script, "\n") + "\n")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("harness: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n"), stderr.String()
}

// writeChunk writes chunk to a file in t's temp dir.
func writeChunk(t testing.TB, name string, chunk []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, chunk, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// sidecar is the sidecar's log path built from its components: the stdout
// receiver's Fluent Forward transport, the sampling processor (with rules)
// and the axiom exporter to dataset.
type sidecar struct {
	addr       string
	components []component.Component
}

func startSidecar(t *testing.T, axiomURL, dataset, rulesFile string) *sidecar {
	t.Helper()
	ctx := context.Background()
	ecfg := axiomexporter.NewFactory().CreateDefaultConfig().(*axiomexporter.Config)
	ecfg.URL, ecfg.Token, ecfg.LogsDataset = axiomURL, testToken, dataset
	exp, err := axiomexporter.NewFactory().CreateLogs(ctx, exportertest.NewNopSettings(axiomexporter.NewFactory().Type()), ecfg)
	if err != nil {
		t.Fatal(err)
	}
	s := &sidecar{components: []component.Component{exp}}
	var next consumer.Logs = exp
	if rulesFile != "" {
		scfg, err := readRules(rulesFile)
		if err != nil {
			t.Fatal(err)
		}
		proc, err := sampling.NewFactory().CreateLogs(ctx, processortest.NewNopSettings(sampling.NewFactory().Type()), scfg, exp)
		if err != nil {
			t.Fatal(err)
		}
		s.components = append(s.components, proc)
		next = proc
	}
	s.addr = freeport.Addr(t)
	rcfg := stdoutreceiver.NewFactory().CreateDefaultConfig()
	if err := confmap.NewFromStringMap(map[string]any{"forward": map[string]any{"endpoint": s.addr}}).Unmarshal(rcfg); err != nil {
		t.Fatal(err)
	}
	rcv, err := stdoutreceiver.NewFactory().CreateLogs(ctx, receivertest.NewNopSettings(stdoutreceiver.NewFactory().Type()), rcfg, next)
	if err != nil {
		t.Fatal(err)
	}
	s.components = append(s.components, rcv)
	for _, c := range s.components {
		if err := c.Start(ctx, componenttest.NewNopHost()); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(s.stop)
	return s
}

// stop shuts the components down, receiver first; the sampling processor
// emits its last summaries and the exporter drains its queue.
func (s *sidecar) stop() {
	for i := len(s.components) - 1; i >= 0; i-- {
		_ = s.components[i].Shutdown(context.Background())
	}
	s.components = nil
}

// send writes chunk as one PackedForward frame and waits for its ack.
func (s *sidecar) send(t *testing.T, tag string, chunk []byte) {
	t.Helper()
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	frame := msgp.AppendArrayHeader(nil, 3)
	frame = msgp.AppendString(frame, tag)
	frame = msgp.AppendBytes(frame, chunk)
	frame = msgp.AppendMapHeader(frame, 1)
	frame = msgp.AppendString(frame, "chunk")
	frame = msgp.AppendString(frame, "c1")
	if _, err := c.Write(frame); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	r := msgp.NewReader(bufio.NewReader(c))
	if _, err := r.ReadMapHeader(); err != nil {
		t.Fatalf("no ack: %v", err)
	}
}

// eventSet is events as sorted JSON texts, summaries apart, without what
// differs between two runs: the fake's arrival time (_sysTime), and a
// summary's interval and time.
func eventSet(t *testing.T, events []map[string]any) (records, summaries []string) {
	t.Helper()
	for _, ev := range events {
		delete(ev, "_sysTime")
		if s, ok := ev["sampling"].(map[string]any); ok && s["summary"] == true {
			delete(s, "interval_seconds")
			delete(ev, "_time")
			b, _ := json.Marshal(ev)
			summaries = append(summaries, string(b))
			continue
		}
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		records = append(records, string(b))
	}
	slices.Sort(records)
	slices.Sort(summaries)
	return records, summaries
}

const rulesYAML = `
rules:
  - name: completed-requests
    match: { signal: logs, body: { msg: request completed } }
    probability: 0.125
summaries: { interval: 1h }
`

// Two instances (one sampling, with its token in a file) flush FireLens
// chunks in both record forms, side by side; every record arrives once, as
// the sidecar ships the same records, and the sampling decisions and
// summaries are the sidecar's.
func TestPluginShipsWhatTheSidecarShips(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.yaml")
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(rules, []byte(rulesYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tokenFile, []byte(testToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A FireLens log router runs in the app's task: the plugin and the
	// sidecar both name it from the task metadata endpoint.
	t.Setenv(workload.EnvECSMetadataURI, ecsMetadata(t))
	const tag = "app-firelens-0123456789"
	classic := fireLensChunk(false, 0, 300)
	v2 := fireLensChunk(true, 300, 200)

	plain := startSidecar(t, fake.URL(), "sidecar-logs", "")
	sampled := startSidecar(t, fake.URL(), "sidecar-sampled", rules)
	for _, chunk := range [][]byte{classic, v2} {
		plain.send(t, tag, chunk)
		sampled.send(t, tag, chunk)
	}
	plain.stop()
	sampled.stop()

	classicFile, v2File := writeChunk(t, "classic.msgpack", classic), writeChunk(t, "v2.msgpack", v2)
	results, logs := run(t,
		"init plain Dataset=plugin-logs Token="+testToken+" URL="+fake.URL(),
		"init sampled dataset=plugin-sampled token_file="+tokenFile+" url="+fake.URL()+" rules_file="+rules,
		"parallel "+tag+" plain "+classicFile+" sampled "+classicFile,
		"flush plain "+tag+" "+v2File,
		"flush sampled "+tag+" "+v2File,
		"exit plain",
		"exit sampled",
	)
	want := []string{"register 0 axiom 2 11", "init plain 1", "init sampled 1", "parallel plain=1 sampled=1",
		"flush plain 1", "flush sampled 1", "exit plain 1", "exit sampled 1"}
	if !reflect.DeepEqual(results, want) {
		t.Fatalf("harness results\n%s\nwant\n%s\nlog:\n%s", strings.Join(results, "\n"), strings.Join(want, "\n"), logs)
	}
	if strings.Contains(logs, testToken) || strings.Contains(logs, testToken[5:]) {
		t.Errorf("the plugin's log holds the token:\n%s", logs)
	}

	pluginRecs, _ := eventSet(t, fake.Events("plugin-logs"))
	sidecarRecs, _ := eventSet(t, fake.Events("sidecar-logs"))
	if len(pluginRecs) != 500 || !slices.Equal(pluginRecs, sidecarRecs) {
		t.Fatalf("plugin sent %d events, the sidecar %d; they differ (first plugin event %.300s, first sidecar event %.300s)",
			len(pluginRecs), len(sidecarRecs), first(pluginRecs), first(sidecarRecs))
	}
	if len(slices.Compact(slices.Clone(pluginRecs))) != 500 {
		t.Error("an event arrived twice")
	}
	if !strings.Contains(pluginRecs[0], `"aws.ecs.task.arn":"arn:aws:ecs:us-west-2:111122223333:task/default/`) {
		t.Errorf("the events do not name the ECS task: %.600s", pluginRecs[0])
	}
	// Decisions on log records without a trace id hash the record with its
	// observed (arrival) time, so the plugin and the sidecar keep different
	// records; the rule, what it saw and how kept records look are the same.
	pluginKept, pluginSums := eventSet(t, fake.Events("plugin-sampled"))
	_, sidecarSums := eventSet(t, fake.Events("sidecar-sampled"))
	if got, want := summaryTotals(t, pluginSums), summaryTotals(t, sidecarSums); got.groups != want.groups || got.seen != want.seen || got.seen != 480 {
		t.Errorf("summaries: plugin %+v, sidecar %+v (want 480 seen by the rule)", got, want)
	}
	sums := summaryTotals(t, pluginSums)
	if len(pluginKept) != 20+sums.kept || sums.kept == 0 || sums.kept == 480 {
		t.Errorf("the plugin sent %d events: want the 20 no rule matched plus the %d kept", len(pluginKept), sums.kept)
	}
	for _, ev := range pluginKept {
		if !slices.Contains(pluginRecs, withoutSampling(t, ev)) {
			t.Fatalf("a kept event is not a record of the plain instance with the sampling attributes added: %.400s", ev)
		}
	}
}

type totals struct{ groups, seen, kept, dropped int }

func summaryTotals(t *testing.T, summaries []string) (out totals) {
	t.Helper()
	for _, s := range summaries {
		var ev struct {
			Sampling struct{ Seen, Kept, Dropped int } `json:"sampling"`
		}
		if err := json.Unmarshal([]byte(s), &ev); err != nil {
			t.Fatal(err)
		}
		out.groups++
		out.seen += ev.Sampling.Seen
		out.kept += ev.Sampling.Kept
		out.dropped += ev.Sampling.Dropped
	}
	if out.kept+out.dropped != out.seen {
		t.Errorf("summary totals do not add up: %+v", out)
	}
	return out
}

// withoutSampling removes what the sampling processor adds to a kept record.
func withoutSampling(t *testing.T, event string) string {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal([]byte(event), &ev); err != nil {
		t.Fatal(err)
	}
	attrs, _ := ev["attributes"].(map[string]any)
	if _, ok := attrs[sampling.WeightAttribute]; ok {
		delete(attrs, sampling.WeightAttribute)
		delete(attrs, sampling.RuleAttribute)
	}
	b, _ := json.Marshal(ev)
	return string(b)
}

// ecsMetadata serves the task metadata endpoint (ECS sets its URI in every
// container of a task) with a recorded Fargate answer.
func ecsMetadata(t *testing.T) string {
	t.Helper()
	body, err := os.ReadFile("../../internal/workload/testdata/task_fargate.json")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v4/task-meta/task" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v4/task-meta"
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// Fluent Bit keeps a chunk and retries it on FLB_RETRY, drops it on
// FLB_ERROR: 429, 430, 503 and a refused token (401, 403: the exporter holds
// data until the token is fixed) are retried, 400 is not, and a retried
// chunk is delivered once when Axiom accepts it.
func TestPluginAnswersFluentBitByAxiomsAnswer(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	chunk := writeChunk(t, "chunk.msgpack", fireLensChunk(false, 0, 50))
	s := startSession(t)
	if got := s.do(t, "init a Dataset=logs Token="+testToken+" URL="+fake.URL()); got != "init a 1" {
		t.Fatalf("%s\n%s", got, s.logs())
	}
	// The exporter checks the token with one empty request at start: let
	// it pass before scripting the answers.
	for deadline := time.Now().Add(30 * time.Second); len(fake.Requests()) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no token check request\n%s", s.logs())
		}
	}
	soon := time.Now().Add(time.Minute)
	fake.Fail("logs", axiomtest.RateLimited(soon), axiomtest.IngestLimited(soon), axiomtest.Status(503),
		axiomtest.Status(401), axiomtest.Status(403), axiomtest.Status(400))
	var got []string
	for range 7 {
		got = append(got, s.do(t, "flush a app "+chunk))
	}
	got = append(got, s.do(t, "exit a"))
	logs := s.close(t)
	want := []string{
		"flush a 2", "flush a 2", "flush a 2", // 429, 430, 503: FLB_RETRY
		"flush a 2", "flush a 2", // 401, 403: FLB_RETRY, held until the token is fixed
		"flush a 0", // 400: FLB_ERROR
		"flush a 1", // accepted
		"exit a 1"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("harness results\n%s\nwant\n%s\nlog:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), logs)
	}
	// Besides the chunk, the logs dataset holds the report of the 50
	// records Axiom rejected with 400.
	var events int
	var reported []any
	for _, ev := range fake.Events("logs") {
		if ev["sidecar.event"] == losses.EventKind {
			reported = append(reported, ev["reason"], ev["dropped_items"])
			continue
		}
		events++
	}
	if events != 50 {
		t.Errorf("%d events, want the chunk's 50 once", events)
	}
	if fmt.Sprint(reported) != "[rejected 50]" {
		t.Errorf("loss reports (reason, records): %v, want one of 50 rejected", reported)
	}
	if n := strings.Count(logs, "Axiom rejected"); n != 1 {
		t.Errorf("the rejection was logged %d times, want once:\n%s", n, logs)
	}
	if !strings.Contains(logs, "records rejected by Axiom and dropped") {
		t.Errorf("the exit line does not count the rejected records:\n%s", logs)
	}
	if strings.Contains(logs, testToken) {
		t.Errorf("the log holds the token:\n%s", logs)
	}
}

// session is the harness run command by command, for tests that script
// Axiom's answers between commands.
type session struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	stderr *lockedBuilder
}

func startSession(t *testing.T) *session {
	t.Helper()
	so, bin := built(t)
	s := &session{cmd: exec.Command(bin, so), stderr: &lockedBuilder{}}
	s.cmd.Stderr = s.stderr
	var err error
	if s.in, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.out = bufio.NewScanner(stdout)
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.cmd.Process.Kill() })
	if !s.out.Scan() || s.out.Text() != "register 0 axiom 2 11" {
		t.Fatalf("register: %q\n%s", s.out.Text(), s.logs())
	}
	return s
}

// do sends one command and returns its result line.
func (s *session) do(t *testing.T, command string) string {
	t.Helper()
	if _, err := io.WriteString(s.in, command+"\n"); err != nil {
		t.Fatal(err)
	}
	if !s.out.Scan() {
		t.Fatalf("%s: no result\n%s", command, s.logs())
	}
	return s.out.Text()
}

// close ends the session and returns the plugin's log.
func (s *session) close(t *testing.T) string {
	t.Helper()
	s.in.Close()
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("harness: %v\n%s", err, s.logs())
	}
	return s.logs()
}

func (s *session) logs() string { return s.stderr.String() }

type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestPluginRefusesABadConfiguration(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	results, logs := run(t,
		"init notoken Dataset=logs URL="+fake.URL(),
		"init nodataset Token="+testToken+" URL="+fake.URL(),
		"init both Dataset=logs Token="+testToken+" URL="+fake.URL()+" Edge=eu-central-1.aws.edge.axiom.co",
		"init badrules Dataset=logs Token="+testToken+" URL="+fake.URL()+" Rules_File=/nonexistent/rules.yaml",
	)
	want := []string{"register 0 axiom 2 11", "init notoken 0", "init nodataset 0", "init both 0", "init badrules 0"}
	if !reflect.DeepEqual(results, want) {
		t.Fatalf("harness results %v, want %v\n%s", results, want, logs)
	}
	for _, reason := range []string{"no token", "Dataset is not set", "not both", "Rules_File"} {
		if !strings.Contains(logs, reason) {
			t.Errorf("the log does not say %q:\n%s", reason, logs)
		}
	}
	if strings.Contains(logs, testToken) {
		t.Errorf("the log holds the token:\n%s", logs)
	}
}

// At exit the sampler's last summaries are sent; when Axiom is down the
// exit gives up after its grace instead of holding Fluent Bit's shutdown,
// and says what it dropped.
func TestPluginExitGivesUpOnSummariesWhenAxiomIsDown(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	down := make([]axiomtest.Fault, 200)
	for i := range down {
		down[i] = axiomtest.Status(503)
	}
	fake.Fail("", down...)
	rules := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(rules, []byte(rulesYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	chunk := writeChunk(t, "chunk.msgpack", fireLensChunk(false, 0, 100))
	results, logs := run(t,
		"init a Dataset=logs Token="+testToken+" URL="+fake.URL()+" Rules_File="+rules,
		"flush a app "+chunk,
		"exit a",
	)
	want := []string{"register 0 axiom 2 11", "init a 1", "flush a 2", "exit a 1"}
	if !reflect.DeepEqual(results, want) {
		t.Fatalf("harness results %v, want %v\n%s", results, want, logs)
	}
	if !strings.Contains(logs, "shutdown_timeout reached") {
		t.Errorf("the exit does not say that the summaries were dropped:\n%s", logs)
	}
	if n := fake.EventCount("logs"); n != 0 {
		t.Errorf("%d events reached a down Axiom", n)
	}
}
