package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// loggersNodeDir holds the real Node loggers (pino, @axiomhq/pino, bunyan,
// winston), installed by scripts/setup.sh from its lockfile.
const loggersNodeDir = "testdata/loggers/node"

// pinoCorpus runs the corpus generator (real pino under many options) and
// returns its lines.
func pinoCorpus(t *testing.T) []byte {
	t.Helper()
	node := nodeBinary(t)
	npmInstalled(t, loggersNodeDir, "node_modules/@axiomhq/pino/package.json")
	cmd := exec.Command(node, "pino-corpus.mjs")
	cmd.Dir = loggersNodeDir
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("generating the pino corpus: %v", err)
	}
	return out
}

// The same pino lines, sent by the real @axiomhq/pino transport and piped
// into the sidecar, reach Axiom as the same events.
//
// Normalised before comparing, and nothing else:
//   - _sysTime, which Axiom (the fake) sets on arrival;
//   - _time on lines with no `time` or `_time` of their own (or one Axiom
//     cannot read as a date): the transport sends none, so Axiom stamps the
//     ingest time, and the sidecar stamps the read time; both must fall
//     within the test's run. The sidecar keeps a better _time where the line
//     has a timestamp under another key (see the stdout receiver README):
//     there its _time must equal that key's date.
//
// Lines that are not JSON (pino writes `{,"time":...}` when
// formatters.level returns {}): the transport drops them; the sidecar keeps
// each as a `message` event, checked separately.
func TestPinoLinesMatchTheAxiomPinoTransport(t *testing.T) {
	corpus := pinoCorpus(t)
	lines := strings.Split(strings.TrimSuffix(string(corpus), "\n"), "\n")
	if len(lines) < 200 {
		t.Fatalf("corpus has %d lines, want at least 200", len(lines))
	}
	var invalid []string
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			invalid = append(invalid, l)
		}
	}
	path := filepath.Join(t.TempDir(), "corpus.ndjson")
	if err := os.WriteFile(path, corpus, 0o600); err != nil {
		t.Fatal(err)
	}

	fake := axiomtest.NewForTest(t)
	start := time.Now()

	send := exec.Command(nodeBinary(t), "axiom-pino-send.mjs", path)
	send.Dir = loggersNodeDir
	send.Env = append(cleanEnv(), "AXIOM_URL="+fake.URL(), "AXIOM_DATASET=transport")
	out, err := send.CombinedOutput()
	if err != nil || bytes.Contains(out, []byte("ingest failed")) {
		t.Fatalf("@axiomhq/pino: %v\n%s", err, out)
	}
	if n := bytes.Count(out, []byte("transport dropped a line")); n != len(invalid) {
		t.Fatalf("the transport dropped %d lines, the corpus has %d that are not JSON\n%s", n, len(invalid), out)
	}

	s := StartSidecar(t, stdinConfig(fake.URL(), yamlMap{}, nil).yaml(), WithStdin())
	if _, err := s.Stdin.Write(corpus); err != nil {
		t.Fatal(err)
	}
	s.Stdin.Close()
	if code, err := s.Wait(60 * time.Second); err != nil || code != 0 {
		t.Fatalf("sidecar exit %d, %v", code, err)
	}
	end := time.Now()

	viaTransport := fake.Events("transport")
	viaSidecar := fake.Events("app-logs")
	if len(viaTransport) != len(lines)-len(invalid) || len(viaSidecar) != len(lines) {
		t.Fatalf("%d lines (%d not JSON): the transport sent %d events, the sidecar %d",
			len(lines), len(invalid), len(viaTransport), len(viaSidecar))
	}

	// The sidecar's events for the lines that are not JSON.
	var kept []string
	viaSidecar = slices.DeleteFunc(viaSidecar, func(ev map[string]any) bool {
		msg, ok := ev["message"].(string)
		if ok && slices.Contains(invalid, msg) {
			kept = append(kept, msg)
			return true
		}
		return false
	})
	slices.Sort(kept)
	slices.Sort(invalid)
	if !slices.Equal(kept, invalid) {
		t.Errorf("lines that are not JSON: the sidecar kept %q, want %q", kept, invalid)
	}

	inRun := func(v any) bool {
		s, _ := v.(string)
		tm, err := time.Parse(time.RFC3339Nano, s)
		return err == nil && !tm.Before(start.Add(-time.Second)) && !tm.After(end.Add(time.Second))
	}
	normalise := func(evs []map[string]any, sidecar bool) []string {
		var out []string
		for _, ev := range evs {
			delete(ev, "_sysTime")
			switch {
			case inRun(ev["_time"]):
				ev["_time"] = "<the time of the run>"
			case sidecar && timeFromOtherKey(ev):
				ev["_time"] = "<the time of the run>"
			}
			b, err := json.Marshal(ev) // sorted keys
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(b))
		}
		slices.Sort(out)
		return out
	}
	want, got := normalise(viaTransport, false), normalise(viaSidecar, true)
	if slices.Equal(got, want) {
		return
	}
	onlyIn := func(a, b []string) (diff []string) {
		for _, e := range a {
			if i, ok := slices.BinarySearch(b, e); !ok || b[i] != e {
				diff = append(diff, short(e))
			}
		}
		return diff
	}
	t.Errorf("events differ\nonly from the transport:\n  %s\nonly from the sidecar:\n  %s",
		strings.Join(onlyIn(want, got), "\n  "), strings.Join(onlyIn(got, want), "\n  "))
}

// timeFromOtherKey reports whether an event's _time is the date in its
// timestamp, ts or @timestamp field (the sidecar's _time for such lines).
func timeFromOtherKey(ev map[string]any) bool {
	tm, err := time.Parse(time.RFC3339Nano, fmt.Sprint(ev["_time"]))
	if err != nil {
		return false
	}
	for _, k := range []string{"timestamp", "ts", "@timestamp"} {
		switch v := ev[k].(type) {
		case string:
			if other, err := time.Parse(time.RFC3339Nano, v); err == nil && other.Equal(tm) {
				return true
			}
		case json.Number:
			if f, err := v.Float64(); err == nil {
				ms := f
				if f < 1e11 {
					ms = f * 1e3
				}
				if d := tm.Sub(time.UnixMilli(int64(ms))); d > -time.Millisecond && d < time.Millisecond {
					return true
				}
			}
		}
	}
	return false
}

func short(s string) string {
	if len(s) > 600 {
		return fmt.Sprintf("%s…(%d bytes)…%s", s[:300], len(s)-600, s[len(s)-300:])
	}
	return s
}
