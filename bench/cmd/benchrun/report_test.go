package main

import "testing"

func TestRepeatedMoreNamesTheScenariosThatRanMoreThanEveryPhase(t *testing.T) {
	var results []result
	add := func(sc string, runs int) {
		for run := range runs {
			for _, coll := range []string{collSidecar, collBaseline} {
				results = append(results, result{Scenario: sc, Collector: coll, Phase: phaseFixed, Run: run})
			}
		}
	}
	add("logs-stdin", 3)
	add("logs-file", 1)
	add("logs-forward", 3)
	add("mixed", 2)
	if got, want := repeatedMore(results, 1), "logs-stdin, logs-forward ran 3 times; mixed ran 2 times"; got != want {
		t.Errorf("repeatedMore(-repeat 1) = %q, want %q", got, want)
	}
	if got := repeatedMore(results, 3); got != "" {
		t.Errorf("repeatedMore(-repeat 3) = %q, want none", got)
	}
}

func TestMedianRunsTakesTheMiddleRunOfThoseWithoutError(t *testing.T) {
	run := func(n int, cpu float64, err string) result {
		return result{Scenario: "logs-forward", Collector: collSidecar, Phase: phaseFixed, Run: n, CPUPerMillion: cpu, Error: err}
	}
	for _, c := range []struct {
		name string
		runs []result
		want int
	}{
		{"three", []result{run(0, 2.6, ""), run(1, 2.1, ""), run(2, 3.0, "")}, 0},
		{"one failed", []result{run(0, 2.6, ""), run(1, 0.1, "sink down"), run(2, 2.2, "")}, 2}, // the lower middle of two
	} {
		got := medianRuns(c.runs)["logs-forward/"+collSidecar+"/"+phaseFixed]
		if got.Run != c.want {
			t.Errorf("%s: run %d (%.1f s/M), want run %d", c.name, got.Run, got.CPUPerMillion, c.want)
		}
	}
}
