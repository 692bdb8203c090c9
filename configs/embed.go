// Package configs holds the sidecar's ready-made configurations and serves
// them to the collector under the "embedded:" scheme, so that
// `--config embedded:default` (or any other file here, by its name without
// ".yaml") works without a file on disk.
package configs

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"strings"

	"go.opentelemetry.io/collector/confmap"
)

//go:embed *.yaml
var files embed.FS

// Scheme is the config URI scheme of the embedded configurations.
const Scheme = "embedded"

// DefaultURI names the configuration the sidecar runs when given none.
const DefaultURI = Scheme + ":default"

// Names lists the embedded configurations.
func Names() []string {
	entries, _ := fs.ReadDir(files, ".")
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	return names
}

// Read returns the YAML of the embedded configuration called name.
func Read(name string) ([]byte, error) {
	b, err := files.ReadFile(name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("no embedded config %q (have: %s)", name, strings.Join(Names(), ", "))
	}
	return b, nil
}

// NewProviderFactory returns the confmap provider for the "embedded:" scheme.
func NewProviderFactory() confmap.ProviderFactory {
	return confmap.NewProviderFactory(func(confmap.ProviderSettings) confmap.Provider { return provider{} })
}

type provider struct{}

func (provider) Retrieve(_ context.Context, uri string, _ confmap.WatcherFunc) (*confmap.Retrieved, error) {
	name, ok := strings.CutPrefix(uri, Scheme+":")
	if !ok {
		return nil, fmt.Errorf("%q is not an %s: URI", uri, Scheme)
	}
	b, err := Read(name)
	if err != nil {
		return nil, err
	}
	return confmap.NewRetrievedFromYAML(b)
}

func (provider) Scheme() string                 { return Scheme }
func (provider) Shutdown(context.Context) error { return nil }
