import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { encodeLines } from '../src/encode.cjs';
import { StdoutSpanProcessor } from '../index.mjs';
import { sampleSpans, oracleText } from './spans.mjs';

// SDK 3.x lives in its own fixture package (test/sdk3), installed by
// scripts/setup.sh: its @opentelemetry/api peer conflicts with 2.x's. Under
// CI=true a missing install fails the test instead of skipping it.
const fixture = new URL('./sdk3/package.json', import.meta.url);
const installed = existsSync(fileURLToPath(new URL('./sdk3/node_modules/@opentelemetry/sdk-trace', import.meta.url)));

test('spans of @opentelemetry/sdk-trace 3.x encode as otlp-transformer 0.3xx encodes them', { skip: !installed && process.env.CI !== 'true' && 'run scripts/setup.sh (npm ci in test/sdk3)' }, async () => {
  const require = createRequire(fixture);
  const trace = require('@opentelemetry/sdk-trace');
  const sdk3 = {
    api: require('@opentelemetry/api'),
    TracerProvider: trace.TracerProvider,
    InMemorySpanExporter: trace.InMemorySpanExporter,
    simpleProcessor: (exporter) => new trace.SimpleSpanProcessor({ exporter }), // 3.x takes options
    resourceFromAttributes: require('@opentelemetry/resources').resourceFromAttributes,
    TraceState: require('@opentelemetry/core').TraceState,
  };
  const { JsonTraceSerializer } = require('@opentelemetry/otlp-transformer');
  const spans = await sampleSpans(sdk3);
  const { lines, tooLarge } = encodeLines(spans, 256 * 1024);
  assert.equal(tooLarge, 0);
  assert.equal(lines.length, 1);
  assert.equal(lines[0].text, oracleText(JsonTraceSerializer, spans) + '\n');
});

test('the StdoutSpanProcessor is a span processor of @opentelemetry/sdk-trace 3.x', { skip: !installed && process.env.CI !== 'true' && 'run scripts/setup.sh (npm ci in test/sdk3)' }, async () => {
  const require = createRequire(fixture);
  const trace = require('@opentelemetry/sdk-trace');
  const { JsonTraceSerializer } = require('@opentelemetry/otlp-transformer');
  const chunks = [];
  const mem = new trace.InMemorySpanExporter();
  const provider = new trace.TracerProvider({
    spanProcessors: [new StdoutSpanProcessor({ destination: { write: (t) => chunks.push(t) } }), new trace.SimpleSpanProcessor({ exporter: mem })],
  });
  const tracer = provider.getTracer('sdk3', '3');
  for (let i = 0; i < 5; i++) tracer.startSpan(`span ${i}`, { attributes: { i } }).end();
  await provider.forceFlush();
  assert.equal(chunks.length, 1);
  assert.equal(chunks[0], oracleText(JsonTraceSerializer, mem.getFinishedSpans()) + '\n');
  await provider.shutdown();
});
