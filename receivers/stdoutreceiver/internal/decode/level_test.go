package decode

import (
	"strconv"
	"testing"

	"github.com/sidecarhq/sidecar/internal/loglevel"
)

// TestJSLevelSmallNumbers holds jsLevel's table of one- and two-digit
// levels to the general path, loglevel.Pino of the number, and the values
// around it to the general path too.
func TestJSLevelSmallNumbers(t *testing.T) {
	var values []string
	for i := range 100 {
		values = append(values, strconv.Itoa(i))
	}
	values = append(values, "00", "05", "100", "-1", "-10", "1.5", "30.0", "7e1", "null", "true", "[30]", "{}")
	for _, v := range values {
		name, sev := jsLevel([]byte(v))
		wantName, wantSev := loglevel.Pino(jsNumber([]byte(v)))
		if name != wantName || sev != wantSev {
			t.Errorf("jsLevel(%s) = %q %v, want %q %v", v, name, sev, wantName, wantSev)
		}
	}
	if name, _ := jsLevel([]byte("30")); name != "info" {
		t.Errorf("30 is %q, want info", name)
	}
	if name, _ := jsLevel([]byte("61")); name != "silent" {
		t.Errorf("61 is %q, want silent", name)
	}
}
