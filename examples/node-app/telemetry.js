// How telemetry leaves the process, by TELEMETRY:
//   stdout (default)  pino lines and OTLP/JSON span lines both on stdout,
//                     through one destination, for the sidecar to read: no
//                     telemetry network call at all
//   otlp              pino lines on stdout; spans as OTLP/protobuf to the
//                     sidecar on localhost (OTEL_EXPORTER_OTLP_ENDPOINT)
//   direct            no sidecar, as before migrating: logs through the
//                     @axiomhq/pino transport and spans as OTLP/protobuf to
//                     Axiom (AXIOM_URL, AXIOM_TOKEN, AXIOM_DATASET,
//                     AXIOM_TRACES_DATASET)
// Load this before anything the instrumentations patch (http, ioredis).
const pino = require('pino');
const { diag, DiagConsoleLogger, DiagLogLevel } = require('@opentelemetry/api');
const { NodeTracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-node');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const { registerInstrumentations } = require('@opentelemetry/instrumentation');
const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http');
const { IORedisInstrumentation } = require('@opentelemetry/instrumentation-ioredis');
const { StdoutSpanExporter, pinoTraceMixin } = require('@sidecarhq/otel-stdout');

// The SDK's warnings (spans dropped by a full queue, by the exporter) on stderr.
diag.setLogger(new DiagConsoleLogger(), DiagLogLevel.WARN);

const mode = process.env.TELEMETRY || 'stdout';
let logger;
let exporter;
let stdout; // pino's destination, when telemetry leaves through stdout
if (mode === 'direct') {
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto');
  const url = process.env.AXIOM_URL || 'https://api.axiom.co';
  const token = process.env.AXIOM_TOKEN;
  logger = pino({ mixin: pinoTraceMixin }, pino.transport({
    target: '@axiomhq/pino',
    options: { dataset: process.env.AXIOM_DATASET || 'logs', token, url },
  }));
  exporter = new OTLPTraceExporter({
    url: `${url}/v1/traces`,
    headers: { Authorization: `Bearer ${token}`, 'X-Axiom-Dataset': process.env.AXIOM_TRACES_DATASET || 'traces' },
  });
} else {
  // The one writer of fd 1: pino's destination, shared with the span
  // exporter so that their lines never interleave.
  stdout = pino.destination(1);
  logger = pino({ mixin: pinoTraceMixin }, stdout);
  if (mode === 'otlp') {
    const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto');
    exporter = new OTLPTraceExporter();
  } else {
    // As much slack as the OTLP modes' 16,384-span queue (below) gives: that
    // many of this app's spans take about 12 MiB as JSON lines. It decides
    // how long a stall of the sidecar the app rides out before it drops
    // spans (the library's default, 4 MiB, is about 5,800 of them).
    exporter = new StdoutSpanExporter({ destination: stdout, maxPendingBytes: 16 * 1024 * 1024 });
  }
}

// The stdout exporter writes an export before it returns, so the batch
// processor's defaults hold: it exports as soon as 512 spans are queued and
// its queue (2,048) never fills. The OTLP exporters post in the background,
// so spans keep queueing while a post is in flight: at 7 spans a request and
// a few thousand requests a second the default queue overflows behind a
// slow receiver, hence a larger one for them.
const queue = mode === 'stdout' ? {} : { maxQueueSize: 16384 };
const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': process.env.SERVICE_NAME || 'node-app' }),
  spanProcessors: [new BatchSpanProcessor(exporter, queue)],
});
provider.register();
registerInstrumentations({
  tracerProvider: provider,
  instrumentations: [new HttpInstrumentation(), new IORedisInstrumentation()],
});

// flushAndExit exits once every line is written. process.exit() alone is not
// enough with pino's asynchronous destination: its exit hook (flushSync)
// writes the queued lines while a long line's write is still in flight, in
// the middle of that line.
function flushAndExit(code) {
  if (!stdout) {
    logger.flush(() => process.exit(code)); // the transport's worker flushes
    return;
  }
  stdout.once('close', () => process.exit(code));
  stdout.end();
}

module.exports = { logger, provider, exporter, flushAndExit };
