package sharedinstance

import "go.opentelemetry.io/collector/component"

// Member is embedded in an instance that serves several pipelines through
// Join. Its Release takes the instance out of its Map, for the instance's
// Shutdown to call, so a config created again (a collector reload) gets a
// new instance.
type Member struct {
	release func()
}

// Release forgets the instance; it does nothing for one made outside Join.
func (m *Member) Release() {
	if m.release != nil {
		m.release()
	}
}

func (m *Member) member() *Member { return m }

// Joinable is an instance that embeds Member.
type Joinable interface {
	component.Component
	member() *Member
}

// Join returns cfg's instance in m, creating it with create on first use,
// after join has connected one more pipeline to it. On error the component
// is nil (not a nil T), as the collector expects of a failed creation.
func Join[C any, T Joinable](m *Map[C, T], cfg *C, create func() (T, error), join func(T)) (component.Component, error) {
	inst, release, err := m.Get(cfg, create)
	if err != nil {
		return nil, err
	}
	inst.member().release = release
	join(inst)
	return inst, nil
}
