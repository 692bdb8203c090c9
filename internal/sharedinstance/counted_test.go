package sharedinstance

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
)

// lifecycle counts the Start and Shutdown calls that reach the instance.
type lifecycle struct {
	starts, shutdowns int
	startErr          error
}

func (l *lifecycle) Start(context.Context, component.Host) error {
	l.starts++
	return l.startErr
}

func (l *lifecycle) Shutdown(context.Context) error {
	l.shutdowns++
	return nil
}

func TestCountedRunsFromFirstStartToLastShutdown(t *testing.T) {
	var m Map[config, *Counted[*lifecycle]]
	cfg := &config{}
	create := func() (*lifecycle, error) { return &lifecycle{}, nil }
	ctx, host := context.Background(), componenttest.NewNopHost()

	traces, err := GetCounted(&m, cfg, create)
	if err != nil {
		t.Fatal(err)
	}
	logs, _ := GetCounted(&m, cfg, create)
	if logs != traces {
		t.Fatal("two pipelines of one config got two instances")
	}
	inst := traces.Instance
	for _, c := range []*Counted[*lifecycle]{traces, logs} {
		if err := c.Start(ctx, host); err != nil {
			t.Fatal(err)
		}
	}
	if inst.starts != 1 {
		t.Fatalf("started %d times by two pipelines, want once", inst.starts)
	}
	if err := traces.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if inst.shutdowns != 0 {
		t.Fatal("shut down while the logs pipeline still runs")
	}
	if again, _ := GetCounted(&m, cfg, create); again != traces {
		t.Fatal("forgotten while the logs pipeline still runs")
	}
	if err := logs.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if inst.shutdowns != 1 {
		t.Fatalf("shut down %d times after the last pipeline, want once", inst.shutdowns)
	}
	if fresh, _ := GetCounted(&m, cfg, create); fresh == traces {
		t.Fatal("a shut down instance is handed out again")
	}
}

func TestCountedShutdownWithoutStartDoesNothing(t *testing.T) {
	var m Map[config, *Counted[*lifecycle]]
	c, err := GetCounted(&m, &config{}, func() (*lifecycle, error) { return &lifecycle{}, nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Shutdown(context.Background()); err != nil || c.Instance.shutdowns != 0 {
		t.Fatalf("Shutdown before Start: err %v, %d shutdowns reached the instance", err, c.Instance.shutdowns)
	}
}

func TestCountedStartErrorAndCreateError(t *testing.T) {
	var m Map[config, *Counted[*lifecycle]]
	boom := errors.New("boom")
	if _, err := GetCounted(&m, &config{}, func() (*lifecycle, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("create error: %v", err)
	}
	c, _ := GetCounted(&m, &config{}, func() (*lifecycle, error) { return &lifecycle{startErr: boom}, nil })
	if err := c.Start(context.Background(), componenttest.NewNopHost()); !errors.Is(err, boom) {
		t.Fatalf("start error: %v", err)
	}
	// The collector shuts down what it started when a Start fails.
	if err := c.Shutdown(context.Background()); err != nil || c.Instance.shutdowns != 1 {
		t.Fatalf("Shutdown after a failed Start: err %v, %d shutdowns", err, c.Instance.shutdowns)
	}
}
