// Package otlpreceiver is the sidecar's `otlp` receiver: OTLP traces, logs
// and metrics over gRPC and HTTP (protobuf and JSON), configured like the
// collector's stock otlp receiver, which it replaces in the distribution.
//
// It exists for one reason: it keeps each request's raw bytes (protobuf or
// JSON), so
// that with `sampling_processor` set a trace request goes through that
// processor's presample.Filter before it is turned into pdata. Building
// pdata is most of what receiving a span costs, and most spans are dropped
// by sampling. README.md documents the configuration.
package otlpreceiver
