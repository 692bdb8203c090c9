package main

import (
	"strings"
	"testing"
)

func TestRotateRunsEveryModeInEveryPositionAlike(t *testing.T) {
	modes := []string{"direct", "otlp", "stdout"}
	at := map[string][]int{}
	for round := range 2 * len(modes) {
		order := rotate(modes, round)
		if len(order) != len(modes) {
			t.Fatalf("round %d: %v", round, order)
		}
		for i, m := range order {
			at[m] = append(at[m], i)
		}
	}
	for _, m := range modes {
		count := map[int]int{}
		for _, i := range at[m] {
			count[i]++
		}
		for i := range modes {
			if count[i] != 2 {
				t.Errorf("%s ran %d times at position %d in %d rounds, want 2", m, count[i], i, 2*len(modes))
			}
		}
	}
	if strings.Join(modes, ",") != "direct,otlp,stdout" {
		t.Errorf("rotate changed its input: %v", modes)
	}
}

func TestReportGivesMediansAndPairedRatiosPerRound(t *testing.T) {
	o := options{requests: 1000, warmup: 0, rounds: 3, conc: 1}
	var results []result
	// stdout is 10% cheaper than otlp in each round while the machine's
	// speed drifts 2x across rounds; one round's peak RSS is an outlier.
	peaks := []int64{100 * 1024, 140 * 1024, 95 * 1024}
	means := []int64{80 * 1024, 90 * 1024, 70 * 1024}
	for round, scale := range []float64{1, 2, 1.5} {
		results = append(results,
			result{runtime: "node", mode: "otlp", round: round, seconds: 1, appCPU: 0.30 * scale, spans: 7000, appPeak: peaks[round], rssMean: means[round] + 10*1024},
			result{runtime: "node", mode: "stdout", round: round, seconds: 1, appCPU: 0.27 * scale, spans: 7000, appPeak: peaks[round], rssMean: means[round]})
	}
	var b strings.Builder
	report(&b, o, results)
	out := b.String()
	for _, want := range []string{
		"| node | otlp | 1000 | 0.450 | 0.300-0.600 | 67% | 0.300 / 0.600 / 0.450 | 0 / 0 / 0 | 90 | 100 (140) |",
		"| node | stdout | 1000 | 0.405 | 0.270-0.540 | 67% | 0.270 / 0.540 / 0.405 | 0 / 0 / 0 | 80 | 100 (140) |",
		"| node | stdout / otlp | 0.900 | 0.90-0.90 | 0.90 / 0.90 / 0.90 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
