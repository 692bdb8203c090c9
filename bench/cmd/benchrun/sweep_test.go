package main

import "testing"

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
