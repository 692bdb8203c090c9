package sharedinstance

import (
	"errors"
	"testing"
)

type config struct{ name string }

func TestOneInstancePerConfig(t *testing.T) {
	var m Map[config, *int]
	created := 0
	create := func() (*int, error) { created++; n := created; return &n, nil }
	a, b := &config{"a"}, &config{"a"} // equal contents, different configs

	first, release, err := m.Get(a, create)
	if err != nil {
		t.Fatal(err)
	}
	again, _, _ := m.Get(a, create)
	other, _, _ := m.Get(b, create)
	if again != first || other == first || created != 2 {
		t.Fatalf("instances a=%v a again=%v b=%v after %d creations; want a shared, b its own", first, again, other, created)
	}
	release()
	if fresh, _, _ := m.Get(a, create); fresh == first {
		t.Fatal("a released config got its old instance back")
	}
}

func TestCreateErrorIsNotKept(t *testing.T) {
	var m Map[config, *int]
	cfg := &config{}
	boom := errors.New("boom")
	if _, _, err := m.Get(cfg, func() (*int, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	n := 7
	if got, _, err := m.Get(cfg, func() (*int, error) { return &n, nil }); err != nil || got != &n {
		t.Fatalf("after a failed creation: %v, %v", got, err)
	}
}
