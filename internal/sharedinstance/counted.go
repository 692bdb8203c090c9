package sharedinstance

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
)

// Counted is an instance that several pipelines start and shut down, for a
// component whose work (timers, a flush on shutdown) must run while any of
// its pipelines runs: it starts with the first Start and shuts down, and
// leaves its Map, with the Shutdown that balances the last Start. A Shutdown
// with no Start before it (a collector that failed to start) does nothing.
type Counted[T component.Component] struct {
	Instance T

	mu      sync.Mutex
	running int // Starts not yet balanced by a Shutdown
	forget  func()
}

// GetCounted returns cfg's counted instance in m, creating it with create on
// first use.
func GetCounted[C any, T component.Component](m *Map[C, *Counted[T]], cfg *C, create func() (T, error)) (*Counted[T], error) {
	c, _, err := m.Get(cfg, func() (*Counted[T], error) {
		inst, err := create()
		if err != nil {
			return nil, err
		}
		return &Counted[T]{Instance: inst, forget: func() { m.forget(cfg) }}, nil
	})
	return c, err
}

// Start starts the instance if no other pipeline has.
func (c *Counted[T]) Start(ctx context.Context, host component.Host) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.running++
	if c.running > 1 {
		return nil
	}
	return c.Instance.Start(ctx, host)
}

// Shutdown shuts the instance down when no other pipeline still runs it.
func (c *Counted[T]) Shutdown(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running == 0 {
		return nil
	}
	c.running--
	if c.running > 0 {
		return nil
	}
	c.forget()
	return c.Instance.Shutdown(ctx)
}
