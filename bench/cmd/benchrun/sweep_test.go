package main

import (
	"slices"
	"testing"
)

func TestSweepTakesLogAndSpanScenariosButNotMixed(t *testing.T) {
	o := options{logRate: 20_000, spanRate: 20_000, mixedRPS: 10_000}
	want := map[string]bool{"logs-stdin": true, "logs-forward": true, "spans-http-json": true, "spans-stdout": true, "spans-grpc": true, "mixed": false}
	seen := map[string]bool{}
	for _, sc := range scenarios(o) {
		w, ok := want[sc.name]
		if !ok {
			continue
		}
		seen[sc.name] = true
		if got := sweepable(sc); got != w {
			t.Errorf("sweepable(%s) = %v, want %v", sc.name, got, w)
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("scenario %s not found", name)
		}
	}
}

func TestSweepBaselineTakesTheStockCollectorWhereAScenarioHasOne(t *testing.T) {
	o := options{logRate: 20_000, spanRate: 20_000, mixedRPS: 10_000}
	both := []string{collSidecar, collBaseline}
	want := map[string][]string{"logs-stdin": both, "spans-grpc": both, "spans-http-json": both, "spans-stdout": {collSidecar}}
	for _, sc := range scenarios(o) {
		w, ok := want[sc.name]
		if !ok {
			continue
		}
		if got := sweepCollectors(sc, true); !slices.Equal(got, w) {
			t.Errorf("sweepCollectors(%s, true) = %v, want %v", sc.name, got, w)
		}
		if got := sweepCollectors(sc, false); !slices.Equal(got, []string{collSidecar}) {
			t.Errorf("sweepCollectors(%s, false) = %v, want the sidecar only", sc.name, got)
		}
	}
}
