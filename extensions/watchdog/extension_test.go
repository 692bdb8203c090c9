package watchdog

import (
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/extensiontest"

	"github.com/sidecarhq/sidecar/extensions/watchdog/internal/metadata"
	"github.com/sidecarhq/sidecar/internal/watchdog"
)

// statusHost records the status events the extension reports.
type statusHost struct {
	component.Host
	mu     sync.Mutex
	events []*componentstatus.Event
}

func (h *statusHost) Report(ev *componentstatus.Event) {
	h.mu.Lock()
	h.events = append(h.events, ev)
	h.mu.Unlock()
}

// A stage stuck past wedged_after is reported once, as a fatal error that
// names it (which fails `sidecar health`); before that, nothing is.
func TestAWedgeIsReportedOnceAsFatal(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	watch := watchdog.New(func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	cfg := createDefaultConfig().(*Config)
	ext := newExtension(cfg, extensiontest.NewNopSettings(metadata.Type), watch)
	host := &statusHost{Host: componenttest.NewNopHost()}
	ext.host = host // as Start sets it; the test calls check itself instead of waiting for the ticker

	step := watch.Begin("receiver/stdout handing records to the pipeline", 0)
	defer step.End()
	advance(cfg.WedgedAfter)
	ext.check()
	if len(host.events) != 0 {
		t.Fatalf("reported %v at exactly wedged_after", host.events[0].Err())
	}
	advance(time.Second)
	ext.check()
	ext.check()
	if len(host.events) != 1 {
		t.Fatalf("%d status events, want one", len(host.events))
	}
	ev := host.events[0]
	if ev.Status() != componentstatus.StatusFatalError || !strings.Contains(ev.Err().Error(), "receiver/stdout handing records to the pipeline") {
		t.Fatalf("reported %v: %v", ev.Status(), ev.Err())
	}
}

func TestWedgedAfterMustBePositive(t *testing.T) {
	if err := (&Config{}).Validate(); err == nil {
		t.Fatal("wedged_after 0 accepted")
	}
	if err := createDefaultConfig().(*Config).Validate(); err != nil {
		t.Fatal(err)
	}
}
