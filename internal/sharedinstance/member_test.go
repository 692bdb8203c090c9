package sharedinstance

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/collector/component"
)

// receiver serves the pipelines joined to it, as the receivers do.
type receiver struct {
	Member
	pipelines []string
}

func (*receiver) Start(context.Context, component.Host) error { return nil }
func (r *receiver) Shutdown(context.Context) error            { r.Release(); return nil }

func TestJoinServesEveryPipelineWithOneInstance(t *testing.T) {
	var m Map[config, *receiver]
	cfg := &config{}
	created := 0
	create := func() (*receiver, error) { created++; return &receiver{}, nil }
	join := func(name string) func(*receiver) {
		return func(r *receiver) { r.pipelines = append(r.pipelines, name) }
	}

	logs, err := Join(&m, cfg, create, join("logs"))
	if err != nil {
		t.Fatal(err)
	}
	traces, err := Join(&m, cfg, create, join("traces"))
	if err != nil {
		t.Fatal(err)
	}
	r := logs.(*receiver)
	if traces != logs || created != 1 || len(r.pipelines) != 2 {
		t.Fatalf("logs %p, traces %p after %d creations, pipelines %v; want one instance serving both", logs, traces, created, r.pipelines)
	}
	if err := r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	again, _ := Join(&m, cfg, create, join("logs"))
	if again == logs {
		t.Fatal("an instance shut down was joined again; Release did not forget it")
	}
}

func TestJoinErrorIsANilComponent(t *testing.T) {
	var m Map[config, *receiver]
	boom := errors.New("boom")
	got, err := Join(&m, &config{}, func() (*receiver, error) { return nil, boom }, func(*receiver) { t.Fatal("join called on a failed creation") })
	if !errors.Is(err, boom) || got != nil {
		t.Fatalf("Join = %v (%T), %v; want a nil component and the error", got, got, err)
	}
}

func TestReleaseOutsideJoinDoesNothing(t *testing.T) {
	(&receiver{}).Release()
}
