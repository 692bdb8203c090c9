package loadgen

import (
	"bytes"
	"testing"
	"time"

	"github.com/tinylib/msgp/msgp"
)

// TestForwardFramesHoldPinoLinesInTheirMode decodes the frames with msgp's
// generic reader: docker-style frames are [tag, time, record] with one line,
// FireLens-style ones [tag, [[time, record] x16]], and each record's log is
// the line NewPino of the same seed writes, without its newline.
func TestForwardFramesHoldPinoLinesInTheirMode(t *testing.T) {
	now := time.Unix(1_764_504_000, 123_000_000)
	for _, tc := range []struct {
		mode  ForwardMode
		tag   string
		attrs int
	}{{ForwardMessage, "docker.api", 3}, {ForwardBatch, "api-firelens-4f3a2b9c1d7e4b1f", 6}} {
		enc, lines := NewForward(tc.mode, 3), NewPino(3)
		frames, per := enc.PreEncoded(now, 40)
		if want := map[ForwardMode]int{ForwardMessage: 1, ForwardBatch: ForwardBatchLines}[tc.mode]; per != want {
			t.Fatalf("mode %d: %d lines per frame, want %d", tc.mode, per, want)
		}
		if len(frames)*per < 40 || (len(frames)-1)*per >= 40 {
			t.Fatalf("mode %d: %d frames of %d lines for 40 lines", tc.mode, len(frames), per)
		}
		var line []byte
		for _, f := range frames {
			v, rest, err := msgp.ReadIntfBytes(f)
			if err != nil || len(rest) != 0 {
				t.Fatalf("mode %d: frame does not decode whole: %v (%d bytes left)", tc.mode, err, len(rest))
			}
			frame := v.([]any)
			if frame[0] != tc.tag {
				t.Fatalf("mode %d: tag %v", tc.mode, frame[0])
			}
			var entries [][]any
			if tc.mode == ForwardMessage {
				if len(frame) != 3 {
					t.Fatalf("message frame of %d elements", len(frame))
				}
				entries = [][]any{frame[1:]}
			} else {
				for _, e := range frame[1].([]any) {
					entries = append(entries, e.([]any))
				}
			}
			for _, e := range entries {
				ext, ok := e[0].(*msgp.RawExtension)
				if !ok || ext.Type != 0 || len(ext.Data) != 8 {
					t.Fatalf("mode %d: time %#v is not an EventTime", tc.mode, e[0])
				}
				rec := e[1].(map[string]any)
				if len(rec) != tc.attrs+1 || rec["source"] != "stdout" {
					t.Fatalf("mode %d: record %v", tc.mode, rec)
				}
				line = lines.Append(line[:0], now)
				if rec["log"] != string(bytes.TrimSuffix(line, []byte("\n"))) {
					t.Fatalf("mode %d: log %q, want %q", tc.mode, rec["log"], line)
				}
			}
		}
	}
}
