// Command sidecar ships an application's logs and spans to Axiom.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.opentelemetry.io/collector/otelcol"

	"github.com/sidecarhq/sidecar/configs"
	"github.com/sidecarhq/sidecar/internal/distribution"
	"github.com/sidecarhq/sidecar/internal/outcome"
	_ "github.com/sidecarhq/sidecar/internal/stdinpipe/atstart" // grows a pipe on stdin before the collector starts
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	stopHeapProfile()
	// SIGTERM (ECS, Kubernetes, docker stop) and SIGINT end the run
	// gracefully: receivers stop, exporters flush. The collector would only
	// catch them once every component has started, and a signal before that
	// would kill the process outright, so the sidecar catches them from the
	// first instant and the collector shuts down when this context ends.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	setMemoryLimit()
	targetGC()
	releaseStartPagesLater()
	cmd := otelcol.NewCommand(settings(defaultURI()))
	cmd.AddCommand(newHealthCommand(), newStatusCommand())
	cmd.SetArgs(withDefaultConfig(os.Args[1:], defaultURI()))
	if err := cmd.ExecuteContext(ctx); err != nil {
		stop()
		var code exitCode
		if errors.As(err, &code) {
			os.Exit(int(code))
		}
		os.Exit(1)
	}
	// `app | sidecar` ends with what became of the app's records, and a
	// status a script notices when some were dropped or left on disk.
	if line, complete, asked := outcome.Summary(); asked {
		fmt.Fprintln(os.Stderr, line)
		if !complete {
			stop()
			os.Exit(outcome.ExitIncomplete)
		}
	}
}

// defaultURI is the config the sidecar runs when given none: the embedded
// default, plus the stdin receiver when stdin is a pipe (`app | sidecar`).
// Under ECS, Kubernetes and compose stdin is /dev/null, not a pipe.
func defaultURI() string {
	if fi, err := os.Stdin.Stat(); err == nil && fi.Mode()&os.ModeNamedPipe != 0 {
		return configs.StdinURI
	}
	return configs.DefaultURI
}

// settings describes the distribution: its components, its config sources
// and the config it runs when given none.
func settings(defaultURI string) otelcol.CollectorSettings {
	return otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{Command: "sidecar", Description: "Ships an app's logs and spans to Axiom", Version: version},
		Factories: distribution.Components,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{ResolverSettings: confmap.ResolverSettings{
			URIs: []string{defaultURI},
			ProviderFactories: []confmap.ProviderFactory{
				configs.NewProviderFactory(),
				fileprovider.NewFactory(),
				envprovider.NewFactory(),
				yamlprovider.NewFactory(),
			},
			DefaultScheme: "env",
		}},
		// main turns SIGTERM and SIGINT into the end of the run's context.
		DisableGracefulShutdown: true,
	}
}

// withDefaultConfig keeps the default config when only --set is given: the
// collector would otherwise replace the default with the --set values alone,
// leaving an empty config. With an explicit --config the user is in charge.
func withDefaultConfig(args []string, defaultURI string) []string {
	hasSet := false
	for _, a := range args {
		if a == "--" {
			break
		}
		switch {
		case a == "--config" || strings.HasPrefix(a, "--config="):
			return args
		case a == "--set" || strings.HasPrefix(a, "--set="):
			hasSet = true
		}
	}
	if !hasSet {
		return args
	}
	// Appended, so that it also reaches subcommands such as validate; the
	// collector puts --config values before --set values whatever the order.
	return append(args, "--config="+defaultURI)
}
