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
