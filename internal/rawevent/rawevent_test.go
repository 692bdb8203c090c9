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

// Only a raw scope's attributes are its records'.
func TestSharedAttributes(t *testing.T) {
	for _, c := range []struct {
		name   string
		mark   func(plog.ScopeLogs)
		shared bool
	}{{"unmarked", func(plog.ScopeLogs) {}, false}, {"raw", MarkRawScope, true}, {"one-line", MarkOneLineScope, true}} {
		sl := plog.NewScopeLogs()
		c.mark(sl)
		sl.Scope().Attributes().PutStr("log.iostream", "stderr")
		if _, ok := Shared(sl); ok != c.shared {
			t.Errorf("%s scope: shared %v, want %v", c.name, ok, c.shared)
		}
		if shared, ok := Shared(sl); ok {
			if v, _ := shared.Get("log.iostream"); v.Str() != "stderr" {
				t.Errorf("%s scope: log.iostream %q", c.name, v.Str())
			}
		}
	}
	sl := plog.NewScopeLogs()
	MarkRawScope(sl)
	if _, ok := Shared(sl); ok {
		t.Error("a raw scope without attributes shares none")
	}
}
