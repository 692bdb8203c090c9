package presample

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component"
)

type fakeFilter struct{ name string }

func (*fakeFilter) FilterTraces(_ context.Context, dst, req []byte) ([]byte, int, error) {
	return append(dst, req...), 0, nil
}

func (*fakeFilter) FilterTracesJSON(_ context.Context, dst, req []byte) ([]byte, int, error) {
	return append(dst, req...), 0, nil
}

func TestRegisterLookupUnregister(t *testing.T) {
	id := component.MustNewID("sampling")
	if _, ok := Lookup(id); ok {
		t.Fatal("found a filter before registering one")
	}
	f := &fakeFilter{name: "a"}
	unregister := Register(id, f)
	if got, ok := Lookup(id); !ok || got != f {
		t.Fatalf("Lookup = %v, %v; want the registered filter", got, ok)
	}
	if _, ok := Lookup(component.MustNewIDWithName("sampling", "other")); ok {
		t.Fatal("another id found the filter")
	}
	// A later registration under the same id is not removed by the older one's unregister.
	g := &fakeFilter{name: "b"}
	unregisterG := Register(id, g)
	unregister()
	if got, _ := Lookup(id); got != g {
		t.Fatalf("older unregister removed the newer filter: got %v", got)
	}
	unregisterG()
	if _, ok := Lookup(id); ok {
		t.Fatal("filter still registered after unregister")
	}
}

func TestDecidedContext(t *testing.T) {
	ctx := context.Background()
	if Decided(ctx) != nil {
		t.Fatal("a plain context reports a deciding filter")
	}
	f := &fakeFilter{}
	if got := Decided(WithDecided(ctx, f)); got != f {
		t.Fatalf("Decided = %v, want the marking filter", got)
	}
}
