// Command sidecarprof is the sidecar (the same components) with a CPU
// profile written for the whole run, for profiling the benchmark
// scenarios: pass it to benchrun as -sidecar with SIDECAR_CPUPROFILE_DIR
// set; each process writes <dir>/<pid>.pprof when it exits. With
// SIDECAR_TRACE_DIR set it also writes a runtime trace, <dir>/<pid>.trace
// (`go tool trace`: what each goroutine waited on, and when).
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.opentelemetry.io/collector/otelcol"

	"github.com/sidecarhq/sidecar/internal/distribution"
)

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
	if dir := os.Getenv("SIDECAR_TRACE_DIR"); dir != "" {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%d.trace", os.Getpid())))
		if err != nil {
			fmt.Fprintln(os.Stderr, "sidecarprof:", err)
			os.Exit(2)
		}
		if err := trace.Start(f); err != nil {
			fmt.Fprintln(os.Stderr, "sidecarprof:", err)
			os.Exit(2)
		}
		defer f.Close()
		defer trace.Stop()
	}
	cmd := otelcol.NewCommand(otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{Command: "sidecarprof", Description: "sidecar data path with CPU profiling", Version: "dev"},
		Factories: distribution.Components,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{ResolverSettings: confmap.ResolverSettings{
			ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory(), envprovider.NewFactory(), yamlprovider.NewFactory()},
		}},
	})
	if err := cmd.Execute(); err != nil {
		pprof.StopCPUProfile()
		trace.Stop()
		os.Exit(1)
	}
}
