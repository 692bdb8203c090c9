// Package configs holds the sidecar's ready-made configurations and serves
// them to the collector under the "embedded:" scheme, so that they work
// without a file on disk. default.yaml is complete; every other file is an
// overlay for one way of running (ECS, Kubernetes, compose, a pipe) that
// `embedded:<name>` serves merged over the default, the way the collector
// merges several --config sources: maps key by key, lists replaced.
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

const defaultName = "default"

// DefaultURI names the configuration the sidecar runs when given none.
const DefaultURI = Scheme + ":" + defaultName

// StdinURI names the configuration it runs when given none and its stdin is
// a pipe.
const StdinURI = Scheme + ":stdin"

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
	conf, err := load(defaultName)
	if err != nil {
		return nil, err
	}
	if name == defaultName {
		return confmap.NewRetrieved(conf.ToStringMap())
	}
	overlay, err := load(name)
	if err != nil {
		return nil, err
	}
	if err := conf.Merge(overlay); err != nil {
		return nil, fmt.Errorf("merging embedded:%s over the default: %w", name, err)
	}
	return confmap.NewRetrieved(conf.ToStringMap())
}

func load(name string) (*confmap.Conf, error) {
	b, err := Read(name)
	if err != nil {
		return nil, err
	}
	r, err := confmap.NewRetrievedFromYAML(b)
	if err != nil {
		return nil, fmt.Errorf("embedded:%s: %w", name, err)
	}
	return r.AsConf()
}

func (provider) Scheme() string                 { return Scheme }
func (provider) Shutdown(context.Context) error { return nil }
