// Package stdoutreceiver turns an application's stdout stream into log
// records (and OTLP/JSON span lines into spans), whichever way the stream
// reaches the sidecar: stdin, tailed container log files, or the Fluent
// Forward protocol. Every transport hands its lines to the same decoder
// (internal/decode) through a stream.Sink that blocks while the pipeline
// refuses data, so each transport slows its source instead of dropping.
package stdoutreceiver

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
)

// typeStr is the receiver's type in configs: receivers: {stdout: ...}.
var typeStr = component.MustNewType("stdout")

// NewFactory returns the stdout receiver's factory.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(typeStr, createDefaultConfig,
		receiver.WithLogs(createLogs, component.StabilityLevelDevelopment),
		receiver.WithTraces(createTraces, component.StabilityLevelDevelopment),
	)
}

func createLogs(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Logs) (receiver.Logs, error) {
	r, err := shared(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	r.logs = next
	return r, nil
}

func createTraces(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Traces) (receiver.Traces, error) {
	r, err := shared(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	r.traces = next
	return r, nil
}
