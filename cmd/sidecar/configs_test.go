package main

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/otelcol"

	"github.com/sidecarhq/sidecar/configs"
)

// TestEmbeddedConfigsAreValid resolves every config in configs/ against the
// components compiled into this binary, with and without an Axiom token.
func TestEmbeddedConfigsAreValid(t *testing.T) {
	for _, token := range []string{"", "xaat-0123456789"} {
		t.Setenv("AXIOM_TOKEN", token)
		for _, name := range configs.Names() {
			set := settings(configs.DefaultURI)
			set.ConfigProviderSettings.ResolverSettings.URIs = []string{configs.Scheme + ":" + name}
			col, err := otelcol.NewCollector(set)
			if err != nil {
				t.Fatal(err)
			}
			if err := col.DryRun(context.Background()); err != nil {
				t.Errorf("embedded:%s (token %q) is invalid: %v", name, token, err)
			}
		}
	}
}
