package tail

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream/streamtest"
)

func mustTime(s string) time.Time {
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return ts
}

func TestFormats(t *testing.T) {
	const ts1, ts2 = "2024-05-06T07:08:09.123456789Z", "2024-05-06T07:08:10Z"
	tests := []struct {
		name, format, content string
		want                  []streamtest.Line
	}{
		{
			name:   "cri with partials",
			format: FormatCRI,
			content: ts1 + " stdout P {\"msg\":\n" +
				ts2 + " stdout P \"joined\n" +
				ts2 + " stdout F \"}\n" +
				ts2 + " stderr F panic: boom\n" +
				"not a cri line\n",
			want: []streamtest.Line{
				{Data: `{"msg":"joined"}`, Time: mustTime(ts1), Stream: "stdout"},
				{Data: "panic: boom", Time: mustTime(ts2), Stream: "stderr"},
				{Data: "not a cri line"},
			},
		},
		{
			name:   "cri pieces of two streams interleaved",
			format: FormatCRI,
			content: ts1 + " stdout P out-a \n" +
				ts2 + " stderr F err\n" +
				ts2 + " stdout F out-b\n",
			want: []streamtest.Line{
				{Data: "out-a ", Time: mustTime(ts1), Stream: "stdout"},
				{Data: "err", Time: mustTime(ts2), Stream: "stderr"},
				{Data: "out-b", Time: mustTime(ts2), Stream: "stdout"},
			},
		},
		{
			name:   "docker with split line and escapes",
			format: FormatDocker,
			content: `{"log":"{\"msg\":\"a \\\"quoted\\\" \u003cb\u003e\"}\n","stream":"stdout","time":"` + ts1 + `"}` + "\n" +
				`{"log":"first half ","stream":"stderr","time":"` + ts2 + `"}` + "\n" +
				`{"log":"second half\n","stream":"stderr","time":"` + ts2 + `"}` + "\n",
			want: []streamtest.Line{
				{Data: `{"msg":"a \"quoted\" <b>"}`, Time: mustTime(ts1), Stream: "stdout"},
				{Data: "first half second half", Time: mustTime(ts2), Stream: "stderr"},
			},
		},
		{
			name:    "raw",
			format:  FormatRaw,
			content: "{\"msg\":\"x\"}\n\nplain \xff bytes\n",
			want:    []streamtest.Line{{Data: `{"msg":"x"}`}, {Data: ""}, {Data: "plain \xff bytes"}},
		},
		{
			name:    "auto finds cri",
			format:  FormatAuto,
			content: ts1 + " stdout F hi\n",
			want:    []streamtest.Line{{Data: "hi", Time: mustTime(ts1), Stream: "stdout"}},
		},
		{
			name:    "auto finds docker",
			format:  FormatAuto,
			content: `{"log":"hi\n","stream":"stdout","time":"` + ts1 + `"}` + "\n",
			want:    []streamtest.Line{{Data: "hi", Time: mustTime(ts1), Stream: "stdout"}},
		},
		{
			name:    "auto falls back to raw",
			format:  FormatAuto,
			content: `{"msg":"hi"}` + "\n" + ts1 + " stdout F not parsed as cri\n",
			want:    []streamtest.Line{{Data: `{"msg":"hi"}`}, {Data: ts1 + " stdout F not parsed as cri"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, path := tempLog(t, "0.log")
			writeFile(t, path, tt.content)
			c := streamtest.NewRecorder()
			cfg := cfgFor(path)
			cfg.Format = tt.format
			startTailer(t, cfg, Settings{}, c)
			lines := c.Wait(t, len(tt.want))
			for i := range tt.want {
				tt.want[i].Attrs = map[string]string{"log.file.path": path}
			}
			if !equalLines(lines, tt.want) {
				t.Errorf("got  %+v\nwant %+v", lines, tt.want)
			}
		})
	}
}

func equalLines(a, b []streamtest.Line) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Data != b[i].Data || !a[i].Time.Equal(b[i].Time) || a[i].Stream != b[i].Stream ||
			a[i].Truncated != b[i].Truncated || a[i].Attrs["log.file.path"] != b[i].Attrs["log.file.path"] {
			return false
		}
	}
	return true
}

// A line that arrives in pieces (no newline yet) is delivered once, whole.
func TestIncompleteLineWaits(t *testing.T) {
	_, path := tempLog(t, "0.log")
	writeFile(t, path, "2024-05-06T07:08:09Z stdout P {\"a\":")
	c := streamtest.NewRecorder()
	startTailer(t, cfgFor(path), Settings{}, c)
	appendFile(t, path, "1,\n")
	appendFile(t, path, "2024-05-06T07:08:09Z stdout F \"b\":2}\n")
	appendFile(t, path, "2024-05-06T07:08:09Z stdout F third\n")
	lines := c.Wait(t, 1)
	if lines[0].Data != `{"a":1,"b":2}` {
		t.Fatalf("first line %q, want the joined line", lines[0].Data)
	}
	if lines = c.Wait(t, 2); len(lines) != 2 || lines[1].Data != "third" {
		t.Fatalf("lines %+v", lines)
	}
}

func TestGlobIncludeExclude(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.log", "b.log", "skip.log", "a.log.20240506-070809"} {
		writeFile(t, filepath.Join(dir, name), name+"\n")
	}
	c := streamtest.NewRecorder()
	cfg := cfgFor(filepath.Join(dir, "*.log"))
	cfg.Exclude = []string{filepath.Join(dir, "skip*")}
	cfg.Format = FormatRaw
	startTailer(t, cfg, Settings{}, c)
	c.Wait(t, 2)
	// A file that appears later is found by the next poll, from its start.
	writeFile(t, filepath.Join(dir, "c.log"), "c.log\n")
	lines := c.Wait(t, 3)
	seen := map[string]bool{}
	for _, l := range lines {
		seen[l.Data] = true
		if p := l.Attrs["log.file.path"]; p != filepath.Join(dir, l.Data) {
			t.Errorf("line %q has path %q", l.Data, p)
		}
	}
	if len(lines) != 3 || !seen["a.log"] || !seen["b.log"] || !seen["c.log"] {
		t.Errorf("got %+v", lines)
	}
}

// writeRotating writes CRI lines [from, to) to path, rotating every
// `every` lines. Before rotating it waits until the tailer has delivered a
// line of the current file: a poller cannot see a file that is created and
// rotated away between two polls (kubelet rotates every 10s at the most).
// With copytruncate it waits for the whole file, because lines written
// between a copy and its truncate are lost by design.
func writeRotating(t *testing.T, path string, from, to, every int, copyTruncate bool, c *streamtest.Recorder) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { f.Close() }()
	for i := from; i < to; i++ {
		if i > from && i%every == 0 {
			rotated := fmt.Sprintf("%s.%d", path, i)
			if copyTruncate {
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				writeFile(t, rotated, string(data))
				c.Wait(t, i)
				if err := f.Truncate(0); err != nil {
					t.Fatal(err)
				}
			} else {
				c.Wait(t, i-every+2) // line i-every went to the file before
				rotateByRename(t, path, rotated, f, criLine(i))
				i++
				f.Close()
				if f, err = os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := f.WriteString(criLine(i)); err != nil {
			t.Fatal(err)
		}
		if i%50 == 0 {
			time.Sleep(time.Millisecond) // let the tailer interleave with the writer
		}
	}
}

// rotateByRename rotates like kubelet: rename, then the runtime writes a
// little more to the old file before it reopens the path.
func rotateByRename(t *testing.T, path, rotated string, old *os.File, last string) {
	t.Helper()
	if err := os.Rename(path, rotated); err != nil {
		t.Fatal(err)
	}
	if _, err := old.WriteString(last); err != nil {
		t.Fatal(err)
	}
}

func TestRenameRotationWhileWriting(t *testing.T) {
	_, path := tempLog(t, "0.log")
	c := streamtest.NewRecorder()
	startTailer(t, cfgFor(path), Settings{}, c)
	const n = 20000
	writeRotating(t, path, 0, n, 3000, false, c)
	checkSequence(t, c.Wait(t, n), n)
}

func TestCopyTruncateWhileWriting(t *testing.T) {
	_, path := tempLog(t, "0.log")
	c := streamtest.NewRecorder()
	startTailer(t, cfgFor(path), Settings{}, c)
	const n = 20000
	writeRotating(t, path, 0, n, 3000, true, c)
	checkSequence(t, c.Wait(t, n), n)
}

// Stopping in the middle and starting again with the same storage neither
// loses nor repeats a line: with rotations while running, a batch refused at
// shutdown, and a rename rotation while the sidecar was down.
func TestRestartResumesExactly(t *testing.T) {
	_, path := tempLog(t, "0.log")
	store := newMemStorage()
	cfg := cfgFor(path)
	cfg.StartAt = StartAtEnd // resuming must not depend on start_at
	writeFile(t, path, "")

	c := streamtest.NewRecorder()
	first := startTailer(t, cfg, Settings{Storage: store}, c)
	waitCheckpoint(t, store)
	writeRotating(t, path, 0, 8000, 3000, false, c)
	// Pause the pipeline, write more, and stop while it holds a batch.
	release := c.Block()
	calls := c.Calls()
	for i := 8000; i < 10000; i++ {
		appendFile(t, path, criLine(i))
	}
	waitCalls(t, c, calls+1)
	if err := first.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	stoppedAt := c.Len()
	if stoppedAt >= 10000 {
		t.Fatalf("all lines read before the stop; the test needs a stop in the middle")
	}

	// While down: more lines, a rotation, lines in the new file.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	for i := 10000; i < 11000; i++ {
		appendFile(t, path, criLine(i))
	}
	rotateByRename(t, path, path+".down", f, criLine(11000))
	f.Close()
	for i := 11001; i < 12000; i++ {
		appendFile(t, path, criLine(i))
	}
	if c.Len() != stoppedAt {
		t.Fatalf("lines arrived after Shutdown returned")
	}

	release()
	startTailer(t, cfg, Settings{Storage: store}, c)
	writeRotating(t, path, 12000, 15000, 1000, false, c)
	checkSequence(t, c.Wait(t, 15000), 15000)
}

func TestStartAt(t *testing.T) {
	for _, startAt := range []string{StartAtEnd, StartAtBeginning} {
		t.Run(startAt, func(t *testing.T) {
			dir, path := tempLog(t, "old.log")
			writeFile(t, path, criLine(0)+criLine(1)+"2024-05-06T07:08:09Z stdout F half-written")
			c := streamtest.NewRecorder()
			cfg := cfgFor(filepath.Join(dir, "*.log"))
			cfg.StartAt = startAt
			store := newMemStorage()
			startTailer(t, cfg, Settings{Storage: store}, c)
			waitCheckpoint(t, store)
			appendFile(t, path, " line\n"+criLine(2))
			// A file created after the start is read from its beginning.
			writeFile(t, filepath.Join(dir, "new.log"), criLine(3))
			var want []string
			if startAt == StartAtBeginning {
				want = []string{criData(0), criData(1), "half-written line"}
			} else {
				// From the end of the last complete line: the line being
				// written at start is delivered whole.
				want = []string{"half-written line"}
			}
			want = append(want, criData(2), criData(3))
			lines := c.Wait(t, len(want))
			var data []string
			for _, l := range lines {
				data = append(data, l.Data)
			}
			if strings.Join(data, "\n") != strings.Join(want, "\n") {
				t.Errorf("got %q, want %q", data, want)
			}
		})
	}
}

func criData(i int) string {
	l := criLine(i)
	return l[strings.Index(l, " F ")+3 : len(l)-1]
}

// waitCheckpoint waits until the tailer saved offsets once, which it does
// after its first poll.
func waitCheckpoint(t *testing.T, store *memStorage) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if v, _ := store.Get(context.Background(), checkpointKey); len(v) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no checkpoint was written")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func waitCalls(t *testing.T, c *streamtest.Recorder, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for c.Calls() < n {
		if time.Now().After(deadline) {
			t.Fatal("the sink was not called")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A checkpoint entry for the same device and inode but other first bytes is
// another file that reuses the inode: it is read from its start, not from
// the old offset. The same entry with the right fingerprint resumes.
func TestInodeReuseCaughtByFingerprint(t *testing.T) {
	for _, sameContent := range []bool{false, true} {
		t.Run(fmt.Sprintf("same_content=%v", sameContent), func(t *testing.T) {
			_, path := tempLog(t, "0.log")
			writeFile(t, path, criLine(0)+criLine(1)+criLine(2))
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			id := idOf(st)
			head := []byte(criLine(0))
			if !sameContent {
				head = []byte(strings.Replace(criLine(0), "seq", "SEQ", 1))
			}
			offset := int64(len(criLine(0)) + len(criLine(1)))
			raw, _ := json.Marshal(checkpoint{Version: 1, Files: []checkpointEntry{{
				Path: path, Dev: id.dev, Ino: id.ino,
				Fingerprint: fingerprint{Len: len(head), Sum: fnv64a(head)},
				Offset:      offset,
			}}})
			store := newMemStorage()
			_ = store.Set(context.Background(), checkpointKey, raw)
			c := streamtest.NewRecorder()
			cfg := cfgFor(path)
			cfg.StartAt = StartAtEnd
			startTailer(t, cfg, Settings{Storage: store}, c)
			if sameContent {
				lines := c.Wait(t, 1)
				if len(lines) != 1 || lines[0].Data != criData(2) {
					t.Fatalf("resumed wrongly: %+v", lines)
				}
				return
			}
			checkSequence(t, c.Wait(t, 3), 3)
		})
	}
}

func TestHugeLinesTruncated(t *testing.T) {
	const limit = 1000
	big := strings.Repeat("x", 300<<10) // longer than the read buffer too
	ts := "2024-05-06T07:08:09Z"
	tests := []struct {
		name, format, content string
		want                  []streamtest.Line
	}{
		{
			name:    "raw",
			format:  FormatRaw,
			content: big + "\nnext\n",
			want:    []streamtest.Line{{Data: big[:limit], Truncated: true}, {Data: "next"}},
		},
		{
			name:    "cri single line",
			format:  FormatCRI,
			content: ts + " stdout F " + big + "\n" + ts + " stdout F next\n",
			want:    []streamtest.Line{{Data: big[:limit], Truncated: true, Stream: "stdout", Time: mustTime(ts)}, {Data: "next", Stream: "stdout", Time: mustTime(ts)}},
		},
		{
			name:    "cri partials",
			format:  FormatCRI,
			content: strings.Repeat(ts+" stdout P "+big[:600]+"\n", 5) + ts + " stdout F end\n" + ts + " stdout F next\n",
			want:    []streamtest.Line{{Data: big[:limit], Truncated: true, Stream: "stdout", Time: mustTime(ts)}, {Data: "next", Stream: "stdout", Time: mustTime(ts)}},
		},
		{
			name:   "docker splits",
			format: FormatDocker,
			content: strings.Repeat(`{"log":"`+big[:16<<10]+`","stream":"stdout","time":"`+ts+`"}`+"\n", 3) +
				`{"log":"end\n","stream":"stdout","time":"` + ts + `"}` + "\n" +
				`{"log":"next\n","stream":"stdout","time":"` + ts + `"}` + "\n",
			want: []streamtest.Line{{Data: big[:limit], Truncated: true, Stream: "stdout", Time: mustTime(ts)}, {Data: "next", Stream: "stdout", Time: mustTime(ts)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, path := tempLog(t, "0.log")
			writeFile(t, path, tt.content)
			c := streamtest.NewRecorder()
			cfg := cfgFor(path)
			cfg.Format = tt.format
			startTailer(t, cfg, Settings{MaxLineBytes: limit}, c)
			lines := c.Wait(t, len(tt.want))
			for i := range tt.want {
				tt.want[i].Attrs = map[string]string{"log.file.path": path}
			}
			if !equalLines(lines, tt.want) {
				t.Errorf("got %d lines: %.200v", len(lines), lines)
			}
		})
	}
}

// A JSON line over the limit, split by the runtime as containerd (CRI P
// pieces of 16 KiB of content) and docker's json-file driver (16 KiB log
// pieces, JSON-escaped) write it, keeps its small members after the huge
// one: only the huge value is cut, as on stdin (stream.Skimmer).
func TestHugeJSONLinesKeepTheirMembers(t *testing.T) {
	const limit, split = 1000, 16 << 10
	ts := "2024-05-06T07:08:09.123456789Z"
	head := `{"level":50,"time":1764504000000,"stack":"`
	tail := `","msg":"request \"failed\"","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","ok":false}`
	line := head + strings.Repeat("at f (file.js:1:2) ", 15<<10) + tail // ~300 KiB
	want := line[:limit] + tail                                         // the stack cut at the limit, closed by its own quote
	if !json.Valid([]byte(want)) {
		t.Fatalf("bad want %.100s", want)
	}
	pieces := func(s string) (out []string) {
		for len(s) > split {
			out, s = append(out, s[:split]), s[split:]
		}
		return append(out, s)
	}
	var cri, docker strings.Builder
	split16k := pieces(line)
	for i, p := range split16k {
		tag := "P"
		if i == len(split16k)-1 {
			tag = "F"
		}
		fmt.Fprintf(&cri, "%s stdout %s %s\n", ts, tag, p)
		if tag == "F" {
			p += "\n"
		}
		entry, err := json.Marshal(struct {
			Log    string `json:"log"`
			Stream string `json:"stream"`
			Time   string `json:"time"`
		}{p, "stdout", ts})
		if err != nil {
			t.Fatal(err)
		}
		docker.Write(append(entry, '\n'))
	}
	next := `{"msg":"next"}`
	cri.WriteString(ts + " stdout F " + next + "\n")
	docker.WriteString(`{"log":"{\"msg\":\"next\"}\n","stream":"stdout","time":"` + ts + `"}` + "\n")
	for _, tt := range []struct{ format, content string }{{FormatCRI, cri.String()}, {FormatDocker, docker.String()}} {
		t.Run(tt.format, func(t *testing.T) {
			_, path := tempLog(t, "0.log")
			writeFile(t, path, tt.content)
			c := streamtest.NewRecorder()
			cfg := cfgFor(path)
			cfg.Format = tt.format
			startTailer(t, cfg, Settings{MaxLineBytes: limit}, c)
			lines := c.Wait(t, 2)
			wantLines := []streamtest.Line{
				{Data: want, Truncated: true, Stream: "stdout", Time: mustTime(ts), Attrs: map[string]string{"log.file.path": path}},
				{Data: next, Stream: "stdout", Time: mustTime(ts), Attrs: map[string]string{"log.file.path": path}},
			}
			if !equalLines(lines, wantLines) {
				t.Errorf("got %d lines: %.300v\nwant %.300v", len(lines), lines, wantLines)
			}
		})
	}
}

// While the sink blocks the file is paused; every line still arrives once.
func TestBackpressureLosesNothing(t *testing.T) {
	_, path := tempLog(t, "0.log")
	c := streamtest.NewRecorder()
	c.Block()
	startTailer(t, cfgFor(path), Settings{}, c)
	const n = 5000
	for i := 0; i < n; i++ {
		appendFile(t, path, criLine(i))
	}
	for c.Len() < n {
		// One batch at a time; the last one may still be being recorded.
		c.Admit(10 * time.Millisecond)
	}
	checkSequence(t, c.Lines(), n)
	if c.Batches() < n/maxBatchLines {
		t.Errorf("%d batches for %d lines: batches exceed the limit", c.Batches(), n)
	}
}

// A Sink that fails (shutdown) does not advance the offset: the next run
// delivers the same lines.
func TestSinkErrorKeepsOffset(t *testing.T) {
	_, path := tempLog(t, "0.log")
	writeFile(t, path, criLine(0)+criLine(1))
	store := newMemStorage()
	blocked := streamtest.NewRecorder()
	blocked.Block() // never accepts
	tl := startTailer(t, cfgFor(path), Settings{Storage: store}, blocked)
	waitCalls(t, blocked, 1)
	if err := tl.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := streamtest.NewRecorder()
	startTailer(t, cfgFor(path), Settings{Storage: store}, c)
	checkSequence(t, c.Wait(t, 2), 2)
}

func TestConfigValidate(t *testing.T) {
	good := NewDefaultConfig()
	good.Include = []string{"/var/log/pods/*/*/*.log"}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := []func(*Config){
		func(c *Config) { c.Include = nil },
		func(c *Config) { c.Include = []string{"["} },
		func(c *Config) { c.Exclude = []string{"a[b"} },
		func(c *Config) { c.Format = "json" },
		func(c *Config) { c.StartAt = "middle" },
		func(c *Config) { c.PollInterval = -time.Second },
		func(c *Config) { c.MaxOpenFiles = -1 },
	}
	for i, mutate := range bad {
		c := good
		mutate(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("case %d: invalid config accepted: %+v", i, c)
		}
	}
}

// The offset committed with a batch is never inside a logical line, also
// when a line is finished by a piece of the other stream starting.
func TestOffsetStaysOnLineBoundary(t *testing.T) {
	_, path := tempLog(t, "0.log")
	first := "2024-05-06T07:08:09Z stdout P a\n"
	writeFile(t, path, first+"2024-05-06T07:08:09Z stderr P b\n")
	fd, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	f := &file{fd: fd, format: FormatCRI}
	c := streamtest.NewRecorder()
	if err := newReader(1024).readFile(context.Background(), f, c.Sink, false); err != nil {
		t.Fatal(err)
	}
	if lines := c.Lines(); len(lines) != 1 || lines[0].Data != "a" {
		t.Fatalf("lines %+v, want the stdout piece alone", lines)
	}
	if f.offset != int64(len(first)) {
		t.Fatalf("offset %d, want %d (the start of the pending stderr piece)", f.offset, len(first))
	}
}

// With max_open_files reached, further files wait; a deleted file is read
// to its end and let go, which frees its place.
func TestMaxOpenFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.log"), filepath.Join(dir, "b.log")
	writeFile(t, a, "a1\n")
	writeFile(t, b, "b1\n")
	c := streamtest.NewRecorder()
	cfg := cfgFor(filepath.Join(dir, "*.log"))
	cfg.Format = FormatRaw
	cfg.MaxOpenFiles = 1
	startTailer(t, cfg, Settings{}, c)
	c.Wait(t, 1)
	appendFile(t, a, "a2 without newline")
	if err := os.Remove(a); err != nil { // still open: the tailer finishes it
		t.Fatal(err)
	}
	lines := c.Wait(t, 3)
	want := []string{"a1", "a2 without newline", "b1"}
	for i, l := range lines {
		if l.Data != want[i] {
			t.Fatalf("got %+v, want %q", lines, want)
		}
	}
}

// Each batch's offset is saved as soon as the sink accepted it, before the
// next batch is read: a kill -9 at any moment makes the next start read
// again at most the batch the sink was taking, not a second's worth.
func TestOffsetSavedAfterEveryBatch(t *testing.T) {
	_, path := tempLog(t, "0.log")
	n := 3*maxBatchLines + 10
	var b strings.Builder
	ends := make([]int64, n) // end offset of each line
	for i := range n {
		b.WriteString(criLine(i))
		ends[i] = int64(b.Len())
	}
	writeFile(t, path, b.String())
	store := newMemStorage()
	var delivered atomic.Int64
	var stale []string // read after Shutdown, which waits for the sink's goroutine
	sink := func(_ context.Context, batch stream.Batch) error {
		// What a restart would resume from if the process died now.
		var saved int64
		if raw, _ := store.Get(context.Background(), checkpointKey); len(raw) > 0 {
			var cp checkpoint
			if err := json.Unmarshal(raw, &cp); err != nil || len(cp.Files) != 1 {
				t.Errorf("checkpoint %s: %v", raw, err)
			} else {
				saved = cp.Files[0].Offset
			}
		}
		if d := delivered.Load(); d > 0 && saved != ends[d-1] {
			stale = append(stale, fmt.Sprintf("after %d lines the saved offset is %d, not %d", d, saved, ends[d-1]))
		}
		delivered.Add(int64(len(batch.Lines)))
		return nil
	}
	tl, err := New(cfgFor(path), Settings{Storage: store, Logger: zaptest.NewLogger(t)}, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for delivered.Load() < int64(n) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if err := tl.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if delivered.Load() != int64(n) || len(stale) > 0 {
		t.Fatalf("%d of %d lines delivered; %v", delivered.Load(), n, stale)
	}
}
