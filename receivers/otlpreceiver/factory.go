package otlpreceiver

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
)

// typeStr is the stock receiver's type, so existing configs keep working.
var typeStr = component.MustNewType("otlp")

// NewFactory returns the otlp receiver's factory.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(typeStr, createDefaultConfig,
		receiver.WithTraces(createTraces, component.StabilityLevelDevelopment),
		receiver.WithMetrics(createMetrics, component.StabilityLevelDevelopment),
		receiver.WithLogs(createLogs, component.StabilityLevelDevelopment),
	)
}

func createTraces(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Traces) (receiver.Traces, error) {
	r, err := shared(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	r.nextTraces = next
	return r, nil
}

func createMetrics(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
	r, err := shared(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	r.nextMetrics = next
	return r, nil
}

func createLogs(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Logs) (receiver.Logs, error) {
	r, err := shared(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	r.nextLogs = next
	return r, nil
}
