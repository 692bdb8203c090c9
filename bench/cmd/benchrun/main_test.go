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
