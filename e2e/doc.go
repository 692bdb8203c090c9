// Package e2e holds the end-to-end tests: they build the real sidecar binary,
// start it with a config, speak the real protocols to it and check what
// arrives at the fake Axiom (internal/axiomtest).
//
// # Harness
//
// TestMain builds ./cmd/sidecar once into a temp dir. StartSidecar writes a
// config to a fresh working directory and runs the binary on it (WithArgs
// instead runs an embedded config, WithStdin pipes its stdin, WithEnv sets
// variables; AXIOM_*, SIDECAR_* and ECS_* are cleared first), and kills it
// when the test ends, printing its output if the test failed. Sidecar waits
// for a listener or an output line, and Stop sends SIGTERM as ECS and
// Kubernetes do and returns the exit code. FreeAddr gives the ports a
// started process binds, held for the test (internal/freeport) so that
// test binaries running at once never share one. Every config comes from
// sidecarConfig.yaml: the test names its receivers, processors, extensions
// and exporters (usually axiomExporter, to the test's fake Axiom with logs in
// app-logs and spans in app-traces), and each signal gets a pipeline through
// all of them. Tests then read what the fake stored, event by event and span
// by span.
//
// # Files
//
//   - harness_test.go: building and running the binary (above).
//   - config_test.go: sidecarConfig, the one place test configs are written.
//   - cli_test.go: the commands beside the collector: --version, components,
//     health.
//   - token_test.go: a token Axiom refuses and an Axiom outage: data held,
//     the liveness check passing, the reason in `sidecar status`.
//   - otlp_test.go: spans (OTLP/HTTP and gRPC) and logs (OTLP/HTTP) from the
//     OpenTelemetry Go SDK arrive once and intact; the span fixtures and the
//     span comparison the other files use.
//   - stdout_stdin_test.go: the stdout receiver reading stdin: pino lines as
//     @axiomhq/pino sends them, end of input, backpressure, huge lines, stop.
//   - stdout_files_test.go: the stdout receiver tailing CRI log files across
//     rotation and a restart, offsets in file_storage.
//   - stdout_forward_test.go: the stdout receiver's Fluent Forward transport
//     (TCP and unix socket, acks, split lines, ECS task metadata,
//     backpressure).
//   - embedded_configs_test.go: the embedded configs: `app | sidecar` with no
//     flags, embedded:ecs, embedded:kubernetes, and the default config writing
//     local NDJSON when no token is set.
//   - sampling_test.go: the sampling processor on spans (decided on pdata and
//     presampled in the receiver over gRPC and HTTP) and on stdin logs.
//   - axiom_answers_test.go: Axiom's answers read by status (a 2xx in any
//     Content-Type, 429 and 430 resets, errors with empty bodies).
//   - self_metrics_test.go: the Prometheus endpoint serves our self-metrics
//     under README.md's names, labelled with the component's ID.
//   - shutdown_test.go: SIGTERM flushes queued data, gives up within the
//     grace when Axiom is down, and is handled during startup.
package e2e
