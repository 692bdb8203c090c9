// Package sharedinstance keeps one component instance per configuration,
// so that a receiver named in several pipelines (logs and traces, say) runs
// one listener or one reader, as the collector's internal sharedcomponent
// package does for core components; other modules cannot import that one.
// Instances are keyed by their *Config, which the collector creates once per
// component ID. Join connects each pipeline to an instance that embeds
// Member (a receiver), which leaves the Map when it shuts down. A Counted
// instance, in addition, starts with the first of its pipelines and shuts
// down with the last.
package sharedinstance

import "sync"

// Map holds the live instance of each config. The zero value is ready.
type Map[C any, T any] struct {
	mu sync.Mutex
	m  map[*C]T
}

// Get returns cfg's instance, creating it with create on first use. release
// forgets it, for the instance's Shutdown to call, so a config created again
// (a collector reload) gets a new instance.
func (s *Map[C, T]) Get(cfg *C, create func() (T, error)) (inst T, release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	release = func() { s.forget(cfg) }
	if inst, ok := s.m[cfg]; ok {
		return inst, release, nil
	}
	if inst, err = create(); err != nil {
		return inst, nil, err
	}
	if s.m == nil {
		s.m = map[*C]T{}
	}
	s.m[cfg] = inst
	return inst, release, nil
}

func (s *Map[C, T]) forget(cfg *C) {
	s.mu.Lock()
	delete(s.m, cfg)
	s.mu.Unlock()
}
