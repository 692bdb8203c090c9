package loglevel

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
)

func TestSeverity(t *testing.T) {
	for name, want := range map[string]plog.SeverityNumber{
		"trace": plog.SeverityNumberTrace, "silly": plog.SeverityNumberTrace,
		"debug": plog.SeverityNumberDebug, "verbose": plog.SeverityNumberDebug,
		"info": plog.SeverityNumberInfo, "notice": plog.SeverityNumberInfo, "http": plog.SeverityNumberInfo,
		"warn": plog.SeverityNumberWarn, "warning": plog.SeverityNumberWarn,
		"error": plog.SeverityNumberError, "err": plog.SeverityNumberError,
		"fatal": plog.SeverityNumberFatal, "dpanic": plog.SeverityNumberFatal, "emerg": plog.SeverityNumberFatal,
		"info+2": plog.SeverityNumberInfo, "error-4": plog.SeverityNumberError, // slog offsets
		"INFO": plog.SeverityNumberUnspecified, // callers lowercase first
		"":     plog.SeverityNumberUnspecified, "silent": plog.SeverityNumberUnspecified, "chatty": plog.SeverityNumberUnspecified,
	} {
		if got := Severity(name); got != want {
			t.Errorf("Severity(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestIsError(t *testing.T) {
	for name, want := range map[string]bool{
		"error": true, "ERROR": true, "Err": true, "fatal": true, "CRITICAL": true, "panic": true, "alert": true,
		"emerg": true, "emergency": true, "dpanic": true, "error+2": true,
		"warn": false, "WARNING": false, "info": false, "": false, "errors": false, "an error of some length": false,
	} {
		if got := IsError(name); got != want {
			t.Errorf("IsError(%q) = %v, want %v", name, got, want)
		}
	}
}

// Name and Range are inverse on the six names and cover every severity.
func TestNameAndRange(t *testing.T) {
	if Name(plog.SeverityNumberUnspecified) != "" || Name(-1) != "" {
		t.Errorf("Unspecified has a name")
	}
	if Name(30) != "fatal" {
		t.Errorf("Name(30) = %q, want fatal (the top range is open)", Name(30))
	}
	for sev := plog.SeverityNumberTrace; sev <= plog.SeverityNumberFatal4; sev++ {
		name := Name(sev)
		lo, hi, ok := Range(name)
		if !ok || sev < lo || sev > hi || hi-lo != 3 {
			t.Errorf("Name(%d) = %q, Range = %d..%d, %v", sev, name, lo, hi, ok)
		}
		if Severity(name) != lo {
			t.Errorf("Severity(Name(%d)) = %v, want %v", sev, Severity(name), lo)
		}
	}
	if _, _, ok := Range("warning"); ok {
		t.Errorf("Range accepts an alias")
	}
}

func TestPino(t *testing.T) {
	for _, c := range []struct {
		level float64
		name  string
		sev   plog.SeverityNumber
	}{
		{-5, "trace", plog.SeverityNumberTrace}, {10, "trace", plog.SeverityNumberTrace},
		{10.5, "debug", plog.SeverityNumberDebug}, {20, "debug", plog.SeverityNumberDebug},
		{30, "info", plog.SeverityNumberInfo}, {40, "warn", plog.SeverityNumberWarn},
		{50, "error", plog.SeverityNumberError}, {60, "fatal", plog.SeverityNumberFatal},
		{61, "silent", plog.SeverityNumberUnspecified}, {1e9, "silent", plog.SeverityNumberUnspecified},
	} {
		if name, sev := Pino(c.level); name != c.name || sev != c.sev {
			t.Errorf("Pino(%v) = %q, %v; want %q, %v", c.level, name, sev, c.name, c.sev)
		}
	}
}

func TestStaticAndIsErrorDoNotAllocate(t *testing.T) {
	b := []byte("warning")
	allocs := testing.AllocsPerRun(100, func() {
		if s, ok := Static(string(b)); !ok || s != "warning" {
			t.Fatal("not static")
		}
		if !IsError("Critical") {
			t.Fatal("not an error")
		}
	})
	if allocs != 0 {
		t.Errorf("allocations = %v, want 0", allocs)
	}
}
