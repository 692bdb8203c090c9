package stdoutreceiver

import (
	"context"
	"flag"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tinylib/msgp/msgp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/sidecarhq/sidecar/exporters/axiomexporter"
	"github.com/sidecarhq/sidecar/internal/freeport"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/forward"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stdin"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/tail"
)

var updateEvents = flag.Bool("update-events", false, "rewrite testdata/events/*.ndjson from what the transports now send")

// The Axiom events each transport's lines become, byte for byte, through
// the real transport, decoder and axiom exporter (local_dir mode): the
// records between them may change shape (how attributes are carried, how
// records are allocated), the events may not. The events are compared as a
// set of lines: their order depends on how the transport cut its batches.
func TestEventsPerTransport(t *testing.T) {
	pino := []string{
		`{"level":30,"time":1764504000123,"pid":1,"hostname":"h","msg":"hello"}`,
		`{"level":50,"time":1764504000124,"trace_id":"5b8efff798038103d269b633813fc60c","span_id":"eee19b7ec3c1b174","err":{"message":"boom"},"msg":"bye"}`,
		`{"time":"2026-12-01T12:00:00.5Z","msg":"no level","n":1.5,"tags":["a","b"]}`,
		`{"level":"WARN","ts":1764504000.25,"msg":"zap-like"}`,
		`{"_time":1764504000200,"time":1,"level":20,"msg":"dup","msg":"last wins"}`,
		`{"level":30,"time":1764504000400,"blob":"` + strings.Repeat("x", 400) + `","msg":"cut at eventsMaxLine"}`,
		`{}`, // last: stdin leaves it out (its _time would be the time read)
	}
	for _, c := range []struct {
		name string
		run  func(t *testing.T, logs consumer.Logs)
	}{
		{"stdin", func(t *testing.T, logs consumer.Logs) {
			cfg := stdinConfig(true)
			cfg.MaxLineBytes = eventsMaxLine
			s := startReceiver(t, cfg, strings.NewReader(strings.Join(pino[:len(pino)-1], "\n")+"\n"), logs, nil)
			<-s.eof
		}},
		{"cri", func(t *testing.T, logs consumer.Logs) {
			var b strings.Builder
			for i, l := range pino {
				stream := []string{"stdout", "stderr"}[i%2]
				b.WriteString("2026-12-02T04:00:00.12345678" + string(rune('0'+i)) + "Z " + stream + " F " + l + "\n")
			}
			b.WriteString("2026-12-02T04:00:01.5Z stderr P Error: a line in \n")
			b.WriteString("2026-12-02T04:00:01.6Z stderr F two parts\n")
			tailFile(t, logs, tail.FormatCRI, b.String(), len(pino)+1)
		}},
		{"docker", func(t *testing.T, logs consumer.Logs) {
			var b strings.Builder
			for i, l := range pino {
				stream := []string{"stderr", "stdout"}[i%2]
				b.WriteString(`{"log":` + jsonString(l+"\n") + `,"stream":"` + stream + `","time":"2026-12-02T04:00:00.00000000` + string(rune('0'+i)) + `Z"}` + "\n")
			}
			b.WriteString(`{"log":"panic: plain text\n","stream":"stderr","time":"2026-12-02T04:00:02Z"}` + "\n")
			tailFile(t, logs, tail.FormatDocker, b.String(), len(pino)+1)
		}},
		{"forward-message", func(t *testing.T, logs consumer.Logs) {
			var frames []byte
			for i, l := range append(slices.Clone(pino), "text from docker", `{"level":30,"msg":"`+"multi\\nline"+`",`+"\n"+`"time":1764504000300}`) {
				frames = msgp.AppendArrayHeader(frames, 3)
				frames = msgp.AppendString(frames, "docker.app")
				frames = msgp.AppendInt64(frames, 1764504000+int64(i))
				frames = msgp.AppendMapHeader(frames, 4)
				frames = msgp.AppendString(frames, "container_id")
				frames = msgp.AppendString(frames, "0123456789ab")
				frames = msgp.AppendString(frames, "container_name")
				frames = msgp.AppendString(frames, "/app")
				frames = msgp.AppendString(frames, "source")
				frames = msgp.AppendString(frames, []string{"stdout", "stdout", "stderr"}[i%3])
				frames = msgp.AppendString(frames, "log")
				frames = msgp.AppendString(frames, l)
			}
			sendForward(t, logs, frames, len(pino)+2)
		}},
		{"forward-forward", func(t *testing.T, logs consumer.Logs) {
			lines := append(slices.Clone(pino), "text from firelens")
			frame := msgp.AppendArrayHeader(nil, 2)
			frame = msgp.AppendString(frame, "app-firelens-0123")
			frame = msgp.AppendArrayHeader(frame, uint32(len(lines)))
			for i, l := range lines {
				frame = msgp.AppendArrayHeader(frame, 2)
				frame = msgp.AppendInt64(frame, 1764504000+int64(i))
				frame = msgp.AppendMapHeader(frame, 7)
				for _, kv := range [][2]string{
					{"container_id", "0123456789ab"}, {"container_name", "app"},
					{"source", []string{"stdout", "stderr"}[i%2]}, {"log", l},
					{"ecs_cluster", "prod"}, {"ecs_task_arn", "arn:aws:ecs:eu-west-1:1:task/prod/abc"},
					{"ecs_task_definition", "app:7"},
				} {
					frame = msgp.AppendString(frame, kv[0])
					frame = msgp.AppendString(frame, kv[1])
				}
			}
			sendForward(t, logs, frame, len(lines))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			f := axiomexporter.NewFactory()
			cfg := f.CreateDefaultConfig().(*axiomexporter.Config)
			cfg.Token, cfg.LocalDir, cfg.LogsDataset = "", dir, "logs"
			cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
			exp, err := f.CreateLogs(context.Background(), exportertest.NewNopSettings(f.Type()), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := exp.Start(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			c.run(t, exp)
			if err := exp.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(dir, "logs.ndjson"))
			if err != nil {
				t.Fatal(err)
			}
			// A tailed file's path is a resource attribute: the test's own.
			got = regexp.MustCompile(`"log.file.path":"[^"]*"`).ReplaceAll(got, []byte(`"log.file.path":"app.log"`))
			gotLines := strings.SplitAfter(string(got), "\n")
			slices.Sort(gotLines)
			golden := filepath.Join("testdata", "events", c.name+".ndjson")
			if *updateEvents {
				if err := os.WriteFile(golden, []byte(strings.Join(gotLines, "")), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if g := strings.Join(gotLines, ""); g != string(want) {
				t.Errorf("events (sorted):\n%s\nwant (%s):\n%s", g, golden, want)
			}
		})
	}
}

// eventsMaxLine is max_line_bytes in TestEventsPerTransport: one line is
// longer.
const eventsMaxLine = 300

func jsonString(s string) string {
	s = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
	return `"` + s + `"`
}

// tailFile writes content to a log file and tails it from its start in the
// given format until want records arrived.
func tailFile(t *testing.T, logs consumer.Logs, format, content string, want int) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "app.log"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filesConfig(dir)
	cfg.MaxLineBytes = eventsMaxLine
	cfg.Files.Get().Format = format
	counted := &countingLogs{next: logs}
	f := NewFactory()
	r, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, counted)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background(), fileStorage(t, t.TempDir())); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := r.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	counted.wait(t, want)
}

// countingLogs passes logs on and counts their records.
type countingLogs struct {
	next    consumer.Logs
	records atomic.Int64
}

func (c *countingLogs) Capabilities() consumer.Capabilities { return c.next.Capabilities() }

func (c *countingLogs) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	n := ld.LogRecordCount()
	err := c.next.ConsumeLogs(ctx, ld)
	if err == nil {
		c.records.Add(int64(n))
	}
	return err
}

func (c *countingLogs) wait(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); c.records.Load() < int64(n); {
		if time.Now().After(deadline) {
			t.Fatalf("%d records after 30s, want %d", c.records.Load(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sendForward serves Fluent Forward on a free port, writes frames to it on
// one connection and waits until want records arrived.
func sendForward(t *testing.T, logs consumer.Logs, frames []byte, want int) {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.MaxLineBytes = eventsMaxLine
	cfg.Stdin = configoptional.None[stdin.Config]()
	cfg.Files = configoptional.None[tail.Config]()
	fc := forward.NewDefaultConfig()
	fc.Endpoint = freeport.Addr(t)
	cfg.Forward = configoptional.Some(fc)
	counted := &countingLogs{next: logs}
	startReceiver(t, cfg, strings.NewReader(""), counted, nil)
	var conn net.Conn
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; {
		if conn, err = net.Dial("tcp", fc.Endpoint); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write(frames); err != nil {
		t.Fatal(err)
	}
	counted.wait(t, want)
}
