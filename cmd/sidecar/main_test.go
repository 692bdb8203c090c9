package main

import (
	"slices"
	"testing"
)

func TestWithDefaultConfig(t *testing.T) {
	cases := []struct {
		args, want []string
	}{
		{nil, nil},
		{[]string{"validate"}, []string{"validate"}},
		{[]string{"validate", "--set=a=b"}, []string{"validate", "--set=a=b", "--config=embedded:default"}},
		{[]string{"--set=exporters::axiom::logs_dataset=x"}, []string{"--set=exporters::axiom::logs_dataset=x", "--config=embedded:default"}},
		{[]string{"--set", "a=b"}, []string{"--set", "a=b", "--config=embedded:default"}},
		{[]string{"--config=file:x.yaml", "--set=a=b"}, []string{"--config=file:x.yaml", "--set=a=b"}},
		{[]string{"--set=a=b", "--config", "file:x.yaml"}, []string{"--set=a=b", "--config", "file:x.yaml"}},
	}
	for _, c := range cases {
		if got := withDefaultConfig(c.args, "embedded:default"); !slices.Equal(got, c.want) {
			t.Errorf("withDefaultConfig(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}
