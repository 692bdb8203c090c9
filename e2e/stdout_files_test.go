package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// filesConfig tails logDir/*.log (CRI) into the axiom exporter, with
// offsets in a file_storage extension under storageDir.
func filesConfig(logDir, storageDir, url string) sidecarConfig {
	return sidecarConfig{
		signals:    []string{"logs"},
		extensions: yamlMap{"file_storage": yamlMap{"directory": storageDir}},
		receivers: yamlMap{"stdout": yamlMap{
			"storage": "file_storage",
			"files": yamlMap{
				"include":       []string{filepath.Join(logDir, "*.log")},
				"format":        "cri",
				"start_at":      "beginning",
				"poll_interval": "50ms",
			},
		}},
		exporters: axiomExporter(url, nil),
	}
}

// criWriter writes pino lines in the CRI format containerd writes to
// /var/log/pods/.../0.log, every 7th split into P and F pieces.
type criWriter struct {
	t    *testing.T
	path string
	f    *os.File
}

func newCRIWriter(t *testing.T, path string) *criWriter {
	w := &criWriter{t: t, path: path}
	w.reopen()
	t.Cleanup(func() { w.f.Close() })
	return w
}

func (w *criWriter) reopen() {
	if w.f != nil {
		w.f.Close()
	}
	f, err := os.OpenFile(w.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		w.t.Error(err)
		return
	}
	w.f = f
}

func (w *criWriter) write(from, to int) {
	var b strings.Builder
	for i := from; i < to; i++ {
		ts := time.UnixMilli(1764504000000 + int64(i)).UTC().Format(time.RFC3339Nano)
		line := fmt.Sprintf(`{"level":30,"time":%d,"pid":7,"hostname":"web-1","seq":%d,"msg":"request %d done"}`, 1764504000000+int64(i), i, i)
		if i%7 == 0 {
			fmt.Fprintf(&b, "%s stdout P %s\n%s stdout F %s\n", ts, line[:20], ts, line[20:])
		} else {
			fmt.Fprintf(&b, "%s stdout F %s\n", ts, line)
		}
		if b.Len() > 32<<10 || i == to-1 {
			if _, err := w.f.WriteString(b.String()); err != nil {
				w.t.Error(err)
				return
			}
			b.Reset()
		}
	}
}

// renameRotate rotates as kubelet does: rename, the runtime writes one more
// line to the old file, then reopens the path.
func (w *criWriter) renameRotate(suffix string, lastLine int) {
	if err := os.Rename(w.path, w.path+suffix); err != nil {
		w.t.Error(err)
		return
	}
	w.write(lastLine, lastLine+1)
	w.reopen()
}

// copyTruncate rotates as logrotate's copytruncate does.
func (w *criWriter) copyTruncate(suffix string) {
	data, err := os.ReadFile(w.path)
	if err != nil {
		w.t.Error(err)
		return
	}
	if err := os.WriteFile(w.path+suffix, data, 0o644); err != nil {
		w.t.Error(err)
		return
	}
	if err := w.f.Truncate(0); err != nil {
		w.t.Error(err)
	}
}

func waitEvents(t *testing.T, fake *axiomtest.Server, n int) {
	t.Helper()
	if err := fake.WaitEvents("app-logs", n, 60*time.Second); err != nil {
		t.Fatalf("waiting for %d events: %v (have %d)", n, err, fake.EventCount("app-logs"))
	}
}

// Container log files, rotated both ways while the sidecar reads them and
// once more while it is stopped (SIGTERM in the middle of the stream), with
// offsets in file_storage: after the restart exactly every line is in Axiom,
// once, as the pino event it is.
func TestStdoutFilesShipEveryLineOnceAcrossRotationAndRestart(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	logDir, storageDir := t.TempDir(), t.TempDir()
	cfg := filesConfig(logDir, storageDir, fake.URL()).yaml()
	w := newCRIWriter(t, filepath.Join(logDir, "0.log"))

	s := StartSidecar(t, cfg)
	w.write(0, 3000)
	waitEvents(t, fake, 1000)
	w.renameRotate(".20251130-120000", 3000) // kubelet
	w.write(3001, 6000)
	// copytruncate loses what is written between the copy and the truncate
	// (documented); wait until everything is read so that the count is exact.
	waitEvents(t, fake, 6000)
	w.copyTruncate(".1")
	w.write(6000, 9000)
	waitEvents(t, fake, 7000)

	// SIGTERM while lines are still coming; more are written while stopped.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 9000; i < 12000; i += 50 {
			w.write(i, i+50)
			time.Sleep(10 * time.Millisecond)
		}
	}()
	waitEvents(t, fake, 9100)
	if code := s.Stop(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	<-done
	stopped := fake.EventCount("app-logs")
	w.renameRotate(".20251130-121000", 12000) // rotated while the sidecar is down
	w.write(12001, 13000)
	t.Logf("%d events before the restart", stopped)

	s = StartSidecar(t, cfg)
	w.write(13000, 15000)
	const total = 15000
	waitEvents(t, fake, total)
	if code := s.Stop(t); code != 0 { // drains: late duplicates would be in now
		t.Fatalf("exit code %d", code)
	}

	events := fake.Events("app-logs")
	if missing, duplicated := countSeqs(t, events, total); missing+duplicated > 0 {
		t.Errorf("%d lines missing, %d duplicated", missing, duplicated)
	}
	if len(events) != total {
		t.Errorf("%d events, want %d", len(events), total)
	}

	// One event checked field by field: the pino shape, and where it came from.
	ev := events[0]
	seq, _ := strconv.Atoi(fmt.Sprint(ev["seq"]))
	if ev["level"] != "info" || ev["msg"] != fmt.Sprintf("request %d done", seq) || ev["hostname"] != "web-1" {
		t.Errorf("event not in @axiomhq/pino shape: %v", ev)
	}
	if want := time.UnixMilli(1764504000000 + int64(seq)).UTC().Format(time.RFC3339Nano); ev["_time"] != want {
		t.Errorf("_time %v, want %s", ev["_time"], want)
	}
	if !strings.Contains(fmt.Sprint(ev), filepath.Join(logDir, "0.log")) {
		t.Errorf("event does not name its file (log.file.path): %v", ev)
	}
}

// A pino line over max_line_bytes that containerd wrote in 16 KiB P pieces
// arrives as one event with its members after the huge value (msg, level,
// req) and only that value cut, marked log.truncated, as on stdin.
func TestStdoutFilesHugeJSONLineIsCutKeepingItsFields(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	logDir, storageDir := t.TempDir(), t.TempDir()
	cfg := filesConfig(logDir, storageDir, fake.URL())
	cfg.receivers["stdout"].(yamlMap)["max_line_bytes"] = 65536
	const ts = "2026-12-01T12:00:00.000000001Z"
	huge := hugeLinePrefix + strings.Repeat("x", 200<<10) + `","msg":"boom"}`
	var cri strings.Builder
	for rest := huge; rest != ""; {
		piece, tag := rest[:min(len(rest), 16<<10)], "P"
		if rest = rest[len(piece):]; rest == "" {
			tag = "F"
		}
		fmt.Fprintf(&cri, "%s stdout %s %s\n", ts, tag, piece)
	}
	cri.WriteString(ts + " stdout F " + lineAfterHuge + "\n")
	if err := os.WriteFile(filepath.Join(logDir, "0.log"), []byte(cri.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	s := StartSidecar(t, cfg.yaml())
	waitEvents(t, fake, 2)
	if code := s.Stop(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	cut := checkHugeLineCut(t, fake.Events("app-logs"), nil)
	if attrs, _ := cut["attributes"].(map[string]any); attrs["log.iostream"] != "stdout" {
		t.Fatalf("attributes %v, want log.iostream stdout", cut["attributes"])
	}
}
