package rawevent

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
)

func TestScopeMarks(t *testing.T) {
	for _, c := range []struct {
		name         string
		mark         func(plog.ScopeLogs)
		raw, oneLine bool
	}{
		{"unmarked", func(plog.ScopeLogs) {}, false, false},
		{"raw", MarkRawScope, true, false},
		{"one-line", MarkOneLineScope, true, true},
	} {
		sl := plog.NewScopeLogs()
		c.mark(sl)
		if IsRawScope(sl) != c.raw || IsOneLineScope(sl) != c.oneLine {
			t.Errorf("%s scope: raw %v, one-line %v; want %v, %v", c.name, IsRawScope(sl), IsOneLineScope(sl), c.raw, c.oneLine)
		}
	}
}
