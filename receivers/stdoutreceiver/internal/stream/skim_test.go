package stream

import (
	"encoding/json"
	"strings"
	"testing"
)

// skim cuts line at limit the way a transport does, the overflow handed
// over in chunks of chunk bytes.
func skim(line string, limit, chunk int) string {
	var s Skimmer
	head := []byte(line[:limit])
	out := append([]byte(nil), head[:s.Start(head)]...)
	for rest := line[limit:]; rest != ""; {
		n := min(chunk, len(rest))
		out = s.Overflow(out, []byte(rest[:n]))
		rest = rest[n:]
	}
	return string(out)
}

func TestSkimmerKeepsStructure(t *testing.T) {
	long := strings.Repeat("x", 5000)
	later := strings.Repeat("é", 2000)
	line := `{"level":30,"time":1764504000000,"blob":"` + long + `","tags":["a","` + later + `"],"n":12345,"msg":"boom \"q\""}`
	for _, c := range []struct {
		name  string
		limit int
		want  string
	}{
		{"cut in the long value", 100, line[:100] + `","tags":["a","` + strings.Repeat("é", SkimStringBytes/2) + `"],"n":12345,"msg":"boom \"q\""}`},
		{"cut in a number: the line goes on whole", strings.Index(line, "12345") + 2, line},
		{"cut in an escape", strings.Index(line, `\"q`) + 1, line[:strings.Index(line, `\"q`)] + `"}`},
		{"cut in a two-byte character", strings.Index(line, "é") + 1, line[:strings.Index(line, "é")] + `"],"n":12345,"msg":"boom \"q\""}`},
	} {
		for _, chunk := range []int{1, 7, 1 << 20} {
			got := skim(line, c.limit, chunk)
			if got != c.want {
				t.Errorf("%s (chunks of %d):\n got %.300s…\nwant %.300s…", c.name, chunk, got, c.want)
			}
			if !json.Valid([]byte(got)) {
				t.Errorf("%s: not JSON", c.name)
			}
		}
	}
}

func TestSkimmerBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"a":"` + strings.Repeat("x", 100) + `"`)
	for i := 0; i < 50000; i++ {
		b.WriteString(`,"k":1`)
	}
	b.WriteString("}")
	if got := skim(b.String(), 50, 4096); len(got) > 50+SkimOverflowBytes {
		t.Errorf("kept %d bytes past a 50-byte head, cap %d", len(got)-50, SkimOverflowBytes)
	}
	text := "plain text " + strings.Repeat("{\"x\":1}", 100)
	if got := skim(text, 30, 8); got != text[:30] {
		t.Errorf("a line that is not a JSON object keeps only its head: %q", got)
	}
}
