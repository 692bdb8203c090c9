// Package stdoutreceiver is the `stdout` receiver: it turns an
// application's stdout stream into log records, and OTLP/JSON span lines in
// that stream into spans, whichever way the stream reaches the sidecar.
// Every transport hands its lines to one decoder (internal/decode) through a
// stream.Sink that blocks while the pipeline refuses data, so each
// transport slows its source instead of dropping: stdin stops being read,
// a Fluent Forward connection stops being read (TCP backpressure reaches
// the docker driver), a tailed file pauses.
//
// # Configuration
//
//	receivers:
//	  stdout:
//	    max_line_bytes: 262144   # longer lines keep this many bytes, marked log.truncated
//	    storage: file_storage    # storage extension for file offsets (files only)
//	    stdin:                   # `app | sidecar`
//	      exit_on_eof: true      # default: at end of input, drain and exit 0
//	    files:                   # container log files (see internal/tail)
//	      include: [/var/log/pods/*/*/*.log]
//	      exclude: []
//	      format: auto           # auto | cri | docker | raw
//	      start_at: end          # end | beginning
//	    forward:                 # Fluent Forward (ECS FireLens, docker fluentd driver)
//	      endpoint: 127.0.0.1:24224
//	      unix_socket: /var/run/fluent.sock
//
// A transport is on when its section is present (`stdin: {}` takes the
// defaults); at least one is required. Use the receiver in a logs and a
// traces pipeline: one instance serves both. In ECS (when
// ECS_CONTAINER_METADATA_URI_V4 is set) the task metadata is read once at
// start and ecs_cluster, ecs_task_arn and ecs_task_definition
// (family:revision) become resource attributes of every record and span.
//
// Refused data is retried with backoff (10 ms doubling to 1 s) until the
// pipeline takes it; only shutdown ends the wait. A batch (up to 2,048 stdin
// lines) larger than the exporter's whole sending_queue.queue_size would be
// refused forever, so keep that queue well above it (the axiom exporter's
// default is 50,000).
//
// At the end of stdin the receiver has handed every line to the pipeline;
// it then sends the process SIGTERM, so the collector shuts down the usual
// way (the exporters flush their queues) and exits 0.
//
// # Line formats, for app authors
//
// Print one JSON object per line. It reaches Axiom as that object with two
// normalisations, and nothing else changed:
//
//   - `_time`: taken from `time` (pino, bunyan, logrus, slog; value kept
//     verbatim, exactly as @axiomhq/pino does), else the first parseable of
//     `timestamp` (winston), `ts` (zap; epoch seconds are written as an
//     RFC 3339 string), `@timestamp` (ECS). A line with its own `_time`
//     keeps it (and loses `time`, as with @axiomhq/pino). A line with none
//     gets the time the line was read.
//   - `level`: pino/bunyan numbers become names exactly as @axiomhq/pino
//     maps them (<=10 trace, <=20 debug, <=30 info, <=40 warn, <=50 error,
//     <=60 fatal, above silent); string levels (or ECS `log.level`) are
//     lowercased ("INFO" -> "info").
//
// So for pino the event is field for field what the @axiomhq/pino transport
// would have sent. `trace_id`/`span_id` (or `traceId`/`spanId`), as
// OpenTelemetry log correlation injects them, also set the record's trace
// context. Lines that are not JSON objects (stack traces, panics, plain
// text) are kept as events with the line as `message`; invalid UTF-8 is
// replaced by U+FFFD; blank lines are skipped. Where the transport knows the
// stream, records carry the attribute log.iostream (stdout/stderr).
//
// # Spans on stdout
//
// An app can hand spans to the sidecar without a network call: print one
// line holding an OTLP/JSON ExportTraceServiceRequest, the standard OTLP
// JSON encoding (what OTLP/HTTP with Content-Type application/json sends):
//
//	{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"shop"}}]},
//	  "scopeSpans":[{"scope":{"name":"shop"},"spans":[{"traceId":"5b8efff798038103d269b633813fc60c",
//	  "spanId":"eee19b7ec3c1b174","name":"GET /orders","kind":2,
//	  "startTimeUnixNano":"1764504000000000000","endTimeUnixNano":"1764504000100000000"}]}]}]}
//
// (on one line). Any top-level object with `resourceSpans` goes to the
// traces pipeline; if it is not a valid request it is kept as a log event.
// Ids are hex, times are nanosecond strings, enums are numbers, as the
// OTLP/JSON spec requires; keep each line under max_line_bytes.
//
// # Self-metrics
//
// Besides otelcol_receiver_accepted/refused_log_records and _spans:
// sidecar.stdout.lines, .json_records, .text_records, .span_lines,
// .truncated_lines, .refused (pushes the pipeline refused, each retried)
// and .dropped_records (permanent pipeline errors, or no logs pipeline).
package stdoutreceiver
