package main

import (
	"slices"
	"testing"
	"time"
)

func TestPhaseDuration(t *testing.T) {
	o := options{duration: 6 * time.Second, fixedDuration: 20 * time.Second}
	if got := o.phaseDuration(phaseFixed); got != 20*time.Second {
		t.Errorf("fixed phase: %v, want the -fixed-duration 20s", got)
	}
	if got := o.phaseDuration(phaseMax); got != 6*time.Second {
		t.Errorf("max phase: %v, want the -duration 6s", got)
	}
	o.fixedDuration = 0
	if got := o.phaseDuration(phaseFixed); got != 6*time.Second {
		t.Errorf("fixed phase with -fixed-duration 0: %v, want -duration's 6s", got)
	}
}

func TestScenarioPhases(t *testing.T) {
	both, fixedOnly, maxOnly := scenario{}, scenario{fixedOnly: true}, scenario{maxOnly: true}
	for _, c := range []struct {
		sc   scenario
		only string
		want []string
	}{
		{both, "", []string{phaseFixed, phaseMax}},
		{both, phaseFixed, []string{phaseFixed}},
		{both, phaseMax, []string{phaseMax}},
		{fixedOnly, "", []string{phaseFixed}},
		{fixedOnly, phaseMax, nil},
		{maxOnly, "", []string{phaseMax}},
		{maxOnly, phaseFixed, nil},
	} {
		if got := c.sc.phases(c.only); !slices.Equal(got, c.want) {
			t.Errorf("fixedOnly %v maxOnly %v, -phase %q: %v, want %v", c.sc.fixedOnly, c.sc.maxOnly, c.only, got, c.want)
		}
	}
}

func TestSteadyCPUPerMillionLeavesOutTheStart(t *testing.T) {
	// 20,000 events/s at 0.06 CPU s a second, after 0.1 CPU s of start-up
	// in the first 250 ms; the load stops at 10 s and the drain after it
	// costs 0.05 CPU s more.
	var series []point
	for i := 0; i <= 48; i++ {
		at := float64(i) / 4
		sent := int64(20_000 * min(at, 10))
		p := point{T: at, Sent: sent, SinkLogs: max(sent-20_000, 0), CPUSeconds: 0.06 * min(at, 10)}
		if i > 0 {
			p.CPUSeconds += 0.1
		}
		if at > 10 {
			p.CPUSeconds += 0.05
		}
		series = append(series, p)
	}
	if got := steadyCPUPerMillion(series, 10, 20_000, true); got < 2.99 || got > 3.01 {
		t.Errorf("steady: %.3f CPU s per million, want 3 (0.06 s for 20,000 events a second)", got)
	}
	if got := steadyCPUPerMillion(series[:10], 2.5, 20_000, true); got != 0 {
		t.Errorf("a 2.5 s phase: %.3f, want 0 (under a second past steadyFrom)", got)
	}
	for i := range series {
		series[i].SinkLogs /= 2 // 100,000 lines behind when the load stops
	}
	if got := steadyCPUPerMillion(series, 10, 20_000, true); got != 0 {
		t.Errorf("logs 5 s behind at the sink: %.3f, want 0 (fell behind)", got)
	}
	if got := steadyCPUPerMillion(series, 10, 20_000, false); got < 2.99 || got > 3.01 {
		t.Errorf("spans (sink counts not compared): %.3f, want 3", got)
	}
}

func TestGCCycles(t *testing.T) {
	log := []byte(`2026-12-02T15:00:00Z info service started
gc 1 @0.012s 2%: 0.010+0.5+0.003 ms clock, 0.010+0/0.2/0+0.003 ms cpu, 3->3->1 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 1 P
gc 2 @7.100s 1%: 0.010+0.5+0.003 ms clock, 0.010+0/0.2/0+0.003 ms cpu, 30->31->11 MB, 32 MB goal, 0 MB stacks, 0 MB globals, 1 P
gc 3 @8.250s 1%: 0.010+0.5+0.003 ms clock, 0.010+0/0.2/0+0.003 ms cpu, 30->31->11 MB, 32 MB goal, 0 MB stacks, 0 MB globals, 1 P
gc 4 @20.000s 1%: 0.010+0.5+0.003 ms clock, 0.010+0/0.2/0+0.003 ms cpu, 30->31->11 MB, 32 MB goal, 0 MB stacks, 0 MB globals, 1 P
gc is a word here @8s too
`)
	if got := gcCycles(log, 7, 9); got != 2 {
		t.Fatalf("gcCycles in [7,9] = %d, want 2", got)
	}
	if got := gcCycles(log, 0, 30); got != 4 {
		t.Fatalf("gcCycles in [0,30] = %d, want 4", got)
	}
	if got := gcCycles([]byte("no trace\n"), 0, 30); got != 0 {
		t.Fatalf("gcCycles without gctrace = %d", got)
	}
}

// Only the scenarios the Forward goals compare run three times: a variant
// with a peak-RSS budget (Axiom slow or down, the disk buffer) must not
// inherit it, since the report keeps one run of three.
func TestOnlyTheForwardGoalsScenariosRunThreeTimes(t *testing.T) {
	var got []string
	for _, sc := range scenarios(options{}) {
		if sc.runs > 1 {
			got = append(got, sc.name)
		}
	}
	if want := []string{"logs-stdin", "logs-forward", "logs-forward-batch"}; !slices.Equal(got, want) {
		t.Errorf("scenarios run more than once: %v, want %v", got, want)
	}
}
