// Package distribution lists the components compiled into the sidecar, so
// that the sidecar command and the benchmark's profiling build run the same
// set.
package distribution

import (
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/healthcheckextension"
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/debugexporter"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/featuregate"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/memorylimiterprocessor"
	"go.opentelemetry.io/collector/receiver"

	"github.com/sidecarhq/sidecar/exporters/axiomexporter"
	"github.com/sidecarhq/sidecar/extensions/dirstorage"
	"github.com/sidecarhq/sidecar/extensions/watchdog"
	"github.com/sidecarhq/sidecar/internal/drain"
	"github.com/sidecarhq/sidecar/internal/selftelemetry"
	"github.com/sidecarhq/sidecar/receivers/otlpreceiver"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver"
	"github.com/sidecarhq/sidecar/sampling"
)

// healthFromComponentStatus is the health_check extension's feature gate
// for answering from component status (the shipped configs use its http
// settings): the axiom exporter reports a token Axiom refuses there.
const healthFromComponentStatus = "extension.healthcheck.useComponentStatus"

// drainBound is how long otlp_http's persistent queue may take to empty at
// shutdown: the axiom exporter's default shutdown_timeout.
const drainBound = 10 * time.Second

// Components lists every component compiled into the sidecar, and turns on
// the feature gates they are configured for.
func Components() (otelcol.Factories, error) {
	var err error
	if err = featuregate.GlobalRegistry().Set(healthFromComponentStatus, true); err != nil {
		return otelcol.Factories{}, err
	}
	f := otelcol.Factories{Telemetry: selftelemetry.NewFactory()}
	if f.Receivers, err = otelcol.MakeFactoryMap[receiver.Factory](
		otlpreceiver.NewFactory(),
		stdoutreceiver.NewFactory(),
	); err != nil {
		return f, err
	}
	if f.Processors, err = otelcol.MakeFactoryMap[processor.Factory](
		memorylimiterprocessor.NewFactory(),
		sampling.NewFactory(),
	); err != nil {
		return f, err
	}
	if f.Exporters, err = otelcol.MakeFactoryMap[exporter.Factory](
		debugexporter.NewFactory(),
		// Its persistent queue empties before it stops, as the axiom
		// exporter's does (internal/drain says why it would not).
		drain.Factory(otlphttpexporter.NewFactory(), drainBound),
		axiomexporter.NewFactory(),
	); err != nil {
		return f, err
	}
	if f.Extensions, err = otelcol.MakeFactoryMap[extension.Factory](
		healthcheckextension.NewFactory(),
		filestorage.NewFactory(),
		dirstorage.NewFactory(),
		watchdog.NewFactory(),
	); err != nil {
		return f, err
	}
	return f, nil
}
