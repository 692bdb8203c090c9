package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sidecarhq/sidecar/exporters/axiomexporter"
)

// Both collectors get the same memory limiter, queues and batches bounded
// in bytes alike (see sendingQueue) and no self-metrics, so the comparison
// is about the data path.
const (
	benchToken      = "xaat-bench-0000"
	memoryLimiter   = "  memory_limiter: {check_interval: 1s, limit_mib: 400, spike_limit_mib: 100}\n"
	serviceSettings = "  telemetry: {metrics: {level: none}, logs: {level: warn}}\n"
)

// baselineSpanPercentage keeps the same share of spans as the sidecar's Redis
// rule (all SERVER spans, 1% of Redis spans, plus errors ≈ 12.9%): stock
// components have no per-operation sampling here, so the baseline samples
// uniformly at the same volume and exports the same amount.
const baselineSpanPercentage = 13

// pipeline is one service pipeline of a config.
type pipeline struct{ name, receivers, processors, exporters string }

// service is the service section; extensions may be empty.
func service(extensions string, pipes ...pipeline) string {
	var b strings.Builder
	b.WriteString("service:\n" + serviceSettings)
	if extensions != "" {
		fmt.Fprintf(&b, "  extensions: [%s]\n", extensions)
	}
	b.WriteString("  pipelines:\n")
	for _, p := range pipes {
		fmt.Fprintf(&b, "    %s: {receivers: [%s], processors: [%s], exporters: [%s]}\n", p.name, p.receivers, p.processors, p.exporters)
	}
	return b.String()
}

// sidecarConfig is the sidecar's config for a scenario's inputs.
func sidecarConfig(env *runEnv, in inputs) string {
	var b strings.Builder
	extensions := ""
	if in.disk {
		// What SIDECAR_STATE_DIR is to the shipped configs.
		extensions = "dir_storage"
		fmt.Fprintf(&b, "extensions:\n  dir_storage: {directory: %q}\n", filepath.Join(env.dir, "state"))
	}
	b.WriteString("receivers:\n")
	// when_full: block, as the stock receivers wait for the pipeline (and
	// an OTLP client is refused and backs off): under the default
	// drop_oldest a max-rate phase keeps reading and measures what is
	// dropped, not what one core can ship. Against a slow or down Axiom
	// the shipped default is what is measured.
	whenFull := ", when_full: block"
	if in.shippedWhenFull {
		whenFull = ""
	}
	if in.stdinSpans {
		fmt.Fprintf(&b, "  stdout:\n    sampling_processor: sampling\n    stdin: {exit_on_eof: false%s}\n", whenFull)
	}
	if in.logs != "" {
		b.WriteString("  stdout:\n")
		switch in.logs {
		case inputStdin:
			fmt.Fprintf(&b, "    stdin: {exit_on_eof: false%s}\n", whenFull)
		case inputFileJSON, inputFileCRI:
			format := "cri"
			if in.logs == inputFileJSON {
				format = "raw"
			}
			fmt.Fprintf(&b, "    files: {include: [%q], format: %s, start_at: beginning, poll_interval: 200ms}\n", env.logFile, format)
			if in.disk {
				b.WriteString("    storage: dir_storage\n")
			}
		case inputForward, inputForwardBatch:
			fmt.Fprintf(&b, "    forward: {endpoint: \"127.0.0.1:%d\"%s}\n", env.forwardPort, whenFull)
		}
	}
	if in.spans && !in.stdinSpans {
		fmt.Fprintf(&b, "  otlp:\n    sampling_processor: sampling\n    protocols:\n      grpc: {endpoint: \"127.0.0.1:%d\"}\n      http: {endpoint: \"127.0.0.1:%d\"}\n", env.grpcPort, env.httpPort)
	}
	b.WriteString("processors:\n" + memoryLimiter)
	if in.spans {
		b.WriteString(`  sampling:
    always_keep: {errors: true}
    rules:
      - name: redis
        match: {kind: [client], attributes: {db.system: redis}}
        probability: 0.01
`)
		if in.noHold {
			b.WriteString("    hold: {max_bytes: 0}\n")
		}
	}
	fmt.Fprintf(&b, "exporters:\n  axiom:\n    url: %s\n    token: %s\n    logs_dataset: logs\n    traces_dataset: traces\n", env.sinkURL, benchToken)
	if in.disk {
		b.WriteString("    sending_queue: {storage: dir_storage}\n")
	}
	var pipes []pipeline
	if in.logs != "" {
		pipes = append(pipes, pipeline{"logs", "stdout", "memory_limiter", "axiom"})
	}
	if in.spans {
		receiver := "otlp"
		if in.stdinSpans {
			receiver = "stdout"
		}
		pipes = append(pipes, pipeline{"traces", receiver, "memory_limiter, sampling", "axiom"})
	}
	b.WriteString(service(extensions, pipes...))
	return b.String()
}

// jsonParser is what a user adds to file_log to turn pino lines into
// structured records: fields as attributes, pino's epoch-ms time as the
// timestamp, pino's numeric level as the severity.
const jsonParser = `      - type: json_parser
        parse_from: body
        timestamp: {parse_from: attributes.time, layout_type: epoch, layout: ms}
        severity:
          parse_from: attributes.level
          mapping: {trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60}
`

// sidecarMemory is the axiom exporter's default memory budget: what it may
// hold in memory for both signals, queue, batch and requests in flight.
var sidecarMemory = int64(axiomexporter.NewFactory().CreateDefaultConfig().(*axiomexporter.Config).Memory)

// sendingQueue bounds the stock exporter's queue in bytes, as the axiom
// exporter's is: the sidecar's whole memory budget for the queue alone
// (each stock exporter gets all of it, the sidecar splits it between
// signals and counts batches and requests in flight in it too), and the
// batches the axiom exporter builds at that budget (at most 2 MiB,
// uncompressed, flushed at 1 MiB or every second).
var sendingQueue = fmt.Sprintf(`    sending_queue:
      enabled: true
      sizer: bytes
      queue_size: %d
      num_consumers: 4
      batch: {flush_timeout: 1s, sizer: bytes, min_size: %d, max_size: %d}
`, sidecarMemory, 1<<20, 2<<20)

// baselineConfig is the stock collector's config for the same inputs.
func baselineConfig(env *runEnv, in inputs) string {
	var b strings.Builder
	b.WriteString("receivers:\n")
	switch in.logs {
	case inputStdin, inputFileJSON:
		// No stock receiver reads stdin: file_log reads the same lines from a file.
		fmt.Fprintf(&b, "  file_log:\n    include: [%q]\n    start_at: beginning\n    operators:\n%s", env.logFile, jsonParser)
	case inputFileCRI:
		// include_file_path: the container operator recombines partial CRI
		// lines per file and warns on every batch without it.
		fmt.Fprintf(&b, "  file_log:\n    include: [%q]\n    start_at: beginning\n    include_file_path: true\n    operators:\n      - type: container\n        format: containerd\n        add_metadata_from_filepath: false\n%s", env.logFile, jsonParser)
	case inputForward, inputForwardBatch:
		fmt.Fprintf(&b, "  fluent_forward:\n    endpoint: \"127.0.0.1:%d\"\n", env.forwardPort)
	}
	if in.spans {
		fmt.Fprintf(&b, "  otlp:\n    protocols:\n      grpc: {endpoint: \"127.0.0.1:%d\"}\n      http: {endpoint: \"127.0.0.1:%d\"}\n", env.grpcPort, env.httpPort)
	}
	b.WriteString("processors:\n" + memoryLimiter)
	if in.spans {
		fmt.Fprintf(&b, "  probabilistic_sampler: {sampling_percentage: %d}\n", baselineSpanPercentage)
	}
	b.WriteString("exporters:\n")
	auth := fmt.Sprintf("    headers: {Authorization: \"Bearer %s\", X-Axiom-Dataset: %%s}\n", benchToken)
	var pipes []pipeline
	if in.logs != "" {
		fmt.Fprintf(&b, "  otlp_http/logs:\n    logs_endpoint: %s/v1/logs\n", env.sinkURL)
		fmt.Fprintf(&b, auth, "logs")
		b.WriteString(sendingQueue)
		recv := "file_log"
		if in.logs == inputForward || in.logs == inputForwardBatch {
			recv = "fluent_forward"
		}
		pipes = append(pipes, pipeline{"logs", recv, "memory_limiter", "otlp_http/logs"})
	}
	if in.spans {
		fmt.Fprintf(&b, "  otlp_http/traces:\n    traces_endpoint: %s/v1/traces\n", env.sinkURL)
		fmt.Fprintf(&b, auth, "traces")
		b.WriteString(sendingQueue)
		pipes = append(pipes, pipeline{"traces", "otlp", "memory_limiter, probabilistic_sampler", "otlp_http/traces"})
	}
	b.WriteString(service("", pipes...))
	return b.String()
}
