package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// runtimePieceBytes is how long a piece of a line a container runtime
// writes: containerd's CRI files and docker's json-file both cut at 16 KiB.
const runtimePieceBytes = 16 << 10

// Span lines from the npm client, up to its 256 KiB limit, written to
// container log files the way the runtimes write long lines (CRI P/F
// pieces; docker json-file 16 KiB pieces), arrive whole: every span, once.
func TestJSClientSpanLinesSurviveContainerLogSplitting(t *testing.T) {
	node := nodeBinary(t)
	npmInstalled(t, jsClientDir, "node_modules/@opentelemetry/sdk-trace-base")
	cri, crilines := jsSpanLines(t, node)
	docker, dockerlines := jsSpanLines(t, node)

	logDir := t.TempDir()
	writeFile(t, filepath.Join(logDir, "cri.log"), criPieces(crilines))
	writeFile(t, filepath.Join(logDir, "docker.log"), dockerPieces(t, dockerlines))

	fake := axiomtest.NewForTest(t)
	StartSidecar(t, sidecarConfig{
		signals: []string{"logs", "traces"},
		receivers: yamlMap{"stdout": yamlMap{"files": yamlMap{
			"include": []string{filepath.Join(logDir, "*.log")}, "format": "auto",
			"start_at": "beginning", "poll_interval": "50ms",
		}}},
		exporters: axiomExporter(fake.URL(), nil),
	}.yaml())

	want := len(cri) + len(docker)
	if err := fake.WaitSpans("app-traces", want, 60*time.Second); err != nil {
		t.Fatalf("waiting for %d spans: %v", want, err)
	}
	got := spansByID(t, fake.Traces("app-traces"))
	for _, written := range []map[pcommon.SpanID]int{cri, docker} {
		for id, padBytes := range written {
			sp, ok := got[id]
			if !ok {
				t.Errorf("span %s missing", id)
				continue
			}
			if pad, _ := sp.Attributes().Get("pad"); len(pad.Str()) != padBytes {
				t.Errorf("span %q: pad of %d bytes, written %d", sp.Name(), len(pad.Str()), padBytes)
			}
		}
	}
	if len(got) != want || fake.EventCount("app-logs") != 0 {
		t.Errorf("%d spans and %d log events in Axiom, want %d spans and none", len(got), fake.EventCount("app-logs"), want)
	}
}

// jsSpanLines runs the client's big-spans fixture and returns its span ids
// with the byte size of each one's pad attribute, and its lines.
func jsSpanLines(t *testing.T, node string) (map[pcommon.SpanID]int, [][]byte) {
	t.Helper()
	cmd := exec.Command(node, "test/fixtures/big-spans.mjs", "600", "2000")
	cmd.Dir = jsClientDir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("big-spans: %v", err)
	}
	ids := map[pcommon.SpanID]int{}
	lines := bytes.SplitAfter(out, []byte("\n"))
	lines = lines[:len(lines)-1] // after the last newline
	long := 0
	for _, line := range lines {
		if len(line) > 4*runtimePieceBytes {
			long++
		}
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(line)
		if err != nil {
			t.Fatalf("a line of %d bytes: %v", len(line), err)
		}
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					pad, _ := sp.Attributes().Get("pad")
					ids[sp.SpanID()] = len(pad.Str())
				}
			}
		}
	}
	if long == 0 || len(ids) != 601 {
		t.Fatalf("the fixture wrote %d spans in %d lines, %d of them over 64 KiB", len(ids), len(lines), long)
	}
	return ids, lines
}

// criPieces writes lines as containerd does: each in 16 KiB pieces, all but
// the last tagged P.
func criPieces(lines [][]byte) []byte {
	var b bytes.Buffer
	ts := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).Format(time.RFC3339Nano)
	for _, line := range lines {
		line = bytes.TrimSuffix(line, []byte("\n"))
		for len(line) > runtimePieceBytes {
			fmt.Fprintf(&b, "%s stdout P %s\n", ts, line[:runtimePieceBytes])
			line = line[runtimePieceBytes:]
		}
		fmt.Fprintf(&b, "%s stdout F %s\n", ts, line)
	}
	return b.Bytes()
}

// dockerPieces writes lines as docker's json-file driver does: 16 KiB
// pieces, only the last one ending in "\n".
func dockerPieces(t *testing.T, lines [][]byte) []byte {
	var b bytes.Buffer
	ts := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).Format(time.RFC3339Nano)
	for _, line := range lines {
		for len(line) > 0 {
			n := min(len(line), runtimePieceBytes)
			rec, err := json.Marshal(map[string]string{"log": string(line[:n]), "stream": "stdout", "time": ts})
			if err != nil {
				t.Fatal(err)
			}
			b.Write(rec)
			b.WriteByte('\n')
			line = line[n:]
		}
	}
	return b.Bytes()
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
