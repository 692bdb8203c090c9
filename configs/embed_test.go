package configs

import (
	"context"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"strings"
	"testing"
)

func TestOverlaysMergeOverTheDefault(t *testing.T) {
	p := NewProviderFactory().Create(confmaptest.NewNopProviderSettings())
	for _, name := range Names() {
		r, err := p.Retrieve(context.Background(), Scheme+":"+name, nil)
		if err != nil {
			t.Fatalf("embedded:%s: %v", name, err)
		}
		conf, err := r.AsConf()
		if err != nil {
			t.Fatal(err)
		}
		// Every overlay keeps the default's exporter and health check.
		for _, key := range []string{"exporters::axiom::token", "extensions::health_check::http::endpoint"} {
			if !conf.IsSet(key) {
				t.Errorf("embedded:%s lacks %s", name, key)
			}
		}
	}
}

func TestUnknownNameListsTheKnownOnes(t *testing.T) {
	p := NewProviderFactory().Create(confmaptest.NewNopProviderSettings())
	_, err := p.Retrieve(context.Background(), "embedded:nope", nil)
	if err == nil || !strings.Contains(err.Error(), "default") {
		t.Fatalf("error %v does not list the embedded configs", err)
	}
}
