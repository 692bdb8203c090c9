import test from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import pino from 'pino';
import { pinoTraceMixin } from '../index.mjs';

test('pinoTraceMixin puts the active span ids on each pino line', async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const lines = [];
  const sink = new Writable({ write(chunk, _e, cb) { lines.push(...chunk.toString().split('\n').filter(Boolean).map((l) => JSON.parse(l))); cb(); } });
  const logger = pino({ mixin: pinoTraceMixin }, sink);
  const tracer = new BasicTracerProvider().getTracer('t');

  logger.info('outside');
  const span = tracer.startSpan('request');
  await context.with(trace.setSpan(context.active(), span), async () => {
    await new Promise((r) => setTimeout(r, 1)); // the context survives an await
    logger.info('inside');
  });
  span.end();
  await new Promise((r) => setImmediate(r));

  assert.equal(lines.length, 2);
  assert.equal(lines[0].trace_id, undefined);
  const sc = span.spanContext();
  assert.equal(lines[1].trace_id, sc.traceId);
  assert.equal(lines[1].span_id, sc.spanId);
  assert.equal(lines[1].trace_flags, '01');
  context.disable();
});
