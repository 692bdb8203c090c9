// Command sidecarprof is the sidecar's data path (stdout and otlp
// receivers, memory_limiter and sampling processors, axiom exporter) with a
// CPU profile written for the whole run, for profiling the benchmark
// scenarios: pass it to benchrun as -sidecar with SIDECAR_CPUPROFILE_DIR
// set; each process writes <dir>/<pid>.pprof when it exits.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/memorylimiterprocessor"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"

	"github.com/sidecarhq/sidecar/exporters/axiomexporter"
	"github.com/sidecarhq/sidecar/processors/samplingprocessor"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver"
)

func components() (otelcol.Factories, error) {
	var err error
	f := otelcol.Factories{Telemetry: otelconftelemetry.NewFactory()}
	if f.Receivers, err = otelcol.MakeFactoryMap[receiver.Factory](otlpreceiver.NewFactory(), stdoutreceiver.NewFactory()); err != nil {
		return f, err
	}
	if f.Processors, err = otelcol.MakeFactoryMap[processor.Factory](memorylimiterprocessor.NewFactory(), samplingprocessor.NewFactory()); err != nil {
		return f, err
	}
	if f.Exporters, err = otelcol.MakeFactoryMap[exporter.Factory](axiomexporter.NewFactory()); err != nil {
		return f, err
	}
	return f, nil
}

func main() {
	if dir := os.Getenv("SIDECAR_CPUPROFILE_DIR"); dir != "" {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%d.pprof", os.Getpid())))
		if err != nil {
			fmt.Fprintln(os.Stderr, "sidecarprof:", err)
			os.Exit(2)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "sidecarprof:", err)
			os.Exit(2)
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	cmd := otelcol.NewCommand(otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{Command: "sidecarprof", Description: "sidecar data path with CPU profiling", Version: "dev"},
		Factories: components,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{ResolverSettings: confmap.ResolverSettings{
			ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory(), envprovider.NewFactory(), yamlprovider.NewFactory()},
		}},
	})
	if err := cmd.Execute(); err != nil {
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}
