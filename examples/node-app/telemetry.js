// Telemetry with no network call: pino lines and OTLP/JSON span lines, both
// on stdout through one destination, for the sidecar to read. Load this
// before anything that the instrumentations patch (http, ioredis).
const pino = require('pino');
const { NodeTracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-node');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const { registerInstrumentations } = require('@opentelemetry/instrumentation');
const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http');
const { IORedisInstrumentation } = require('@opentelemetry/instrumentation-ioredis');
const { StdoutSpanExporter, pinoTraceMixin } = require('@sidecarhq/otel-stdout');

// The one writer of fd 1: pino's synchronous destination, shared with the
// span exporter so that their lines never interleave.
const stdout = pino.destination(1);
const logger = pino({ mixin: pinoTraceMixin }, stdout);

const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': process.env.SERVICE_NAME || 'node-app' }),
  spanProcessors: [new BatchSpanProcessor(new StdoutSpanExporter({ destination: stdout }))],
});
provider.register();
registerInstrumentations({
  tracerProvider: provider,
  instrumentations: [new HttpInstrumentation(), new IORedisInstrumentation()],
});

module.exports = { logger, provider };
