package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// loggerFormats is the stdout receiver README's table of what each logger's
// fields become in Axiom, checked against the recorded output of the real
// library (testdata/loggers/recorded, written by testdata/loggers/node's
// record-loggers.mjs and testdata/loggers/go).
var loggerFormats = []struct {
	file    string
	timeKey string            // the field _time comes from
	levels  map[string]string // the line's level value (as JSON) -> the event's level
}{
	{"bunyan.ndjson", "time", map[string]string{"10": "trace", "30": "info", "40": "warn", "50": "error", "60": "fatal"}},
	{"winston.ndjson", "timestamp", map[string]string{`"silly"`: "silly", `"debug"`: "debug", `"http"`: "http", `"info"`: "info", `"warn"`: "warn", `"error"`: "error"}},
	{"ecs.ndjson", "@timestamp", nil}, // log.level kept, no level added
	{"zap.ndjson", "ts", map[string]string{`"debug"`: "debug", `"info"`: "info", `"warn"`: "warn", `"error"`: "error", `"dpanic"`: "dpanic"}},
	{"logrus.ndjson", "time", map[string]string{`"trace"`: "trace", `"info"`: "info", `"warning"`: "warning", `"error"`: "error"}},
	{"slog.ndjson", "time", map[string]string{`"DEBUG"`: "DEBUG", `"INFO"`: "INFO", `"WARN+2"`: "WARN+2", `"ERROR"`: "ERROR"}},
}

// Each logger's real output, piped into the sidecar, reaches Axiom as the
// README's formats table says: _time from the logger's timestamp field
// (`time` renamed, the others kept beside it), the level named or kept as
// written, every other field unchanged.
func TestLoggerOutputsReachAxiomAsDocumented(t *testing.T) {
	for _, lf := range loggerFormats {
		t.Run(strings.TrimSuffix(lf.file, ".ndjson"), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata/loggers/recorded", lf.file))
			if err != nil {
				t.Fatal(err)
			}
			fake := axiomtest.NewForTest(t)
			s := StartSidecar(t, stdinConfig(fake.URL(), yamlMap{}, nil).yaml(), WithStdin())
			if _, err := s.Stdin.Write(data); err != nil {
				t.Fatal(err)
			}
			s.Stdin.Close()
			if code, err := s.Wait(60 * time.Second); err != nil || code != 0 {
				t.Fatalf("sidecar exit %d, %v", code, err)
			}
			byMsg := map[string]map[string]any{}
			for _, ev := range fake.Events("app-logs") {
				byMsg[messageOf(ev)] = ev
			}
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			if len(byMsg) != len(lines) {
				t.Fatalf("%d lines, %d distinct events", len(lines), len(byMsg))
			}
			for _, line := range lines {
				in := decodeNumbers(t, line)
				ev := byMsg[messageOf(in)]
				if ev == nil {
					t.Fatalf("no event for %s", line)
				}
				want := map[string]any{}
				for k, v := range in {
					want[k] = v
				}
				ts, ok := lineTime(in[lf.timeKey])
				if !ok {
					t.Fatalf("%s: %s does not parse", line, lf.timeKey)
				}
				if lf.timeKey == "time" {
					delete(want, "time")
				}
				// zap's float seconds hold the time to about 100 ns.
				got, err := time.Parse(time.RFC3339Nano, fmt.Sprint(ev["_time"]))
				if d := got.Sub(ts); err != nil || d < -time.Microsecond || d > time.Microsecond {
					t.Errorf("%s: _time %v, want %v", line, ev["_time"], ts.UTC())
				}
				want["_time"] = ev["_time"]
				if lf.levels != nil {
					raw, _ := json.Marshal(in["level"])
					name, ok := lf.levels[string(raw)]
					if !ok {
						t.Fatalf("%s: level %s not in the table", line, raw)
					}
					want["level"] = name
				}
				delete(ev, "_sysTime")
				if !reflect.DeepEqual(ev, want) {
					t.Errorf("line %s\n event %v\n  want %v", line, ev, want)
				}
			}
		})
	}
}

func messageOf(ev map[string]any) string {
	if m, ok := ev["msg"].(string); ok {
		return m
	}
	return fmt.Sprint(ev["message"])
}

func decodeNumbers(t *testing.T, line string) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader([]byte(line)))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// lineTime reads a logger's timestamp: RFC 3339, or epoch seconds (zap).
func lineTime(v any) (time.Time, bool) {
	switch v := v.(type) {
	case string:
		t, err := time.Parse(time.RFC3339Nano, v)
		return t, err == nil
	case json.Number:
		f, err := v.Float64()
		if err != nil {
			return time.Time{}, false
		}
		sec := int64(f)
		return time.Unix(sec, int64((f-float64(sec))*1e9)), true
	}
	return time.Time{}, false
}
