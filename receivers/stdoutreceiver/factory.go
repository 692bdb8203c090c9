package stdoutreceiver

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/metadata"
)

// NewFactory returns the stdout receiver's factory.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(metadata.Type, createDefaultConfig,
		receiver.WithLogs(createLogs, metadata.LogsStability),
		receiver.WithTraces(createTraces, metadata.TracesStability),
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
