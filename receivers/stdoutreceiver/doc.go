// Package stdoutreceiver is the `stdout` receiver: it turns an
// application's stdout stream into log records, and OTLP/JSON span lines in
// that stream into spans, whichever way the stream reaches the sidecar.
// This package is only the component (factory, config, receiver, the Sink
// that decodes and pushes); the transports are siblings under internal/
// (stdin, tail, forward). Every transport hands its lines to one decoder
// (internal/decode) through a stream.Sink that blocks while the pipeline refuses data, so each
// transport slows its source instead of dropping: stdin stops being read,
// a Fluent Forward connection stops being read (TCP backpressure reaches
// the docker driver), a tailed file pauses.
//
// README.md documents the configuration, the line formats for app authors,
// span lines and the self-metrics.
package stdoutreceiver
