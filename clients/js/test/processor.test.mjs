import test from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { AlwaysOffSampler, BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { StdoutSpanProcessor } from '../index.mjs';
import { sampleSpans, manySpans, oddSpans, oracleText } from './spans.mjs';

// A destination that keeps what is written to it; with stall(), it takes
// writes into its buffer and completes none until releaseAll(), like a
// pipe whose reader stalls.
function sink() {
  let stalled = false;
  const pending = [];
  const s = new Writable({
    decodeStrings: false,
    highWaterMark: 1 << 30,
    write(chunk, _enc, cb) {
      const done = () => {
        s.chunks.push(chunk);
        cb();
      };
      if (stalled) pending.push(done);
      else done();
    },
  });
  s.chunks = [];
  s.stall = () => {
    stalled = true;
  };
  s.releaseAll = async () => {
    stalled = false;
    while (pending.length || s.writableLength > 0) {
      while (pending.length) pending.shift()();
      await new Promise((r) => setImmediate(r));
    }
  };
  return s;
}

const linesOf = (chunks) => chunks.join('').split(/(?<=\n)/).filter(Boolean);
const spanNames = (line) => JSON.parse(line).resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans.map((s) => s.name)));

// spansOf returns the spans a line holds, in its order, by their ids.
function spansOf(line, spans) {
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  return JSON.parse(line).resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans.map((s) => byId.get(s.spanId))));
}

test('each line is otlp-transformer JSON encoding of the spans it holds, every span once', async () => {
  const spans = [...(await sampleSpans()), ...manySpans(300, 500), ...oddSpans(), ...(await sampleSpans())];
  const dest = sink();
  const p = new StdoutSpanProcessor({ destination: dest, lineBytes: 16 * 1024 });
  for (const s of spans) p.onEnd(s);
  await p.forceFlush();
  const lines = linesOf(dest.chunks);
  assert.ok(lines.length > 5);
  const seen = [];
  for (const line of lines) {
    assert.ok(line.length <= 16 * 1024, `a line of ${line.length} bytes`);
    assert.match(line, /^[\x00-\x7f]*\n$/);
    const its = spansOf(line, spans);
    assert.equal(line, oracleText(JsonTraceSerializer, its) + '\n');
    seen.push(...its);
  }
  // oddSpans has unsampled spans (trace flags 0 and 2): never written.
  const sampled = spans.filter((s) => s.spanContext().traceFlags & 1);
  assert.equal(sampled.length, spans.length - 2);
  assert.equal(seen.length, sampled.length);
  assert.equal(new Set(seen).size, sampled.length, 'every sampled span once');
  assert.equal(p.droppedSpans, 0);
  await p.shutdown();
});

test('a line is written whole, in one write, once it reaches lineBytes', () => {
  const dest = sink();
  const p = new StdoutSpanProcessor({ destination: dest, lineBytes: 8192 });
  const spans = manySpans(100, 500);
  let i = 0;
  while (dest.chunks.length === 0) p.onEnd(spans[i++]);
  assert.ok(i > 5 && i < 100);
  const first = dest.chunks[0];
  assert.ok(first.length > 8192 - 1000 && first.length <= 8192, `a first line of ${first.length} bytes`);
  assert.equal(linesOf([first]).length, 1);
  assert.equal(spanNames(first).length, i - 1, 'the span that did not fit starts the next line');
});

test('a span larger than lineBytes gets a line of its own; one larger than maxLineBytes is dropped and counted', async () => {
  const dest = sink();
  const p = new StdoutSpanProcessor({ destination: dest, lineBytes: 2048, maxLineBytes: 8192 });
  const small = manySpans(2, 10);
  p.onEnd(small[0]);
  p.onEnd(manySpans(1, 5000)[0]);
  p.onEnd(manySpans(1, 10000)[0]);
  p.onEnd(small[1]);
  await p.forceFlush();
  const lines = linesOf(dest.chunks);
  assert.deepEqual(lines.map(spanNames), [['op 0'], ['op 0'], ['op 1']]);
  assert.ok(lines[1].length > 5000 && lines[1].length <= 8192);
  assert.equal(p.droppedSpans, 1);
});

test('a line not full is written after delayMillis, on forceFlush, and on shutdown', async () => {
  const dest = sink();
  const p = new StdoutSpanProcessor({ destination: dest, delayMillis: 1 });
  const spans = manySpans(3, 10);
  p.onEnd(spans[0]);
  assert.equal(dest.chunks.length, 0, 'held until the delay');
  while (dest.chunks.length === 0) await new Promise((r) => setTimeout(r, 5));
  assert.deepEqual(linesOf(dest.chunks).map(spanNames), [['op 0']]);

  const q = new StdoutSpanProcessor({ destination: dest, delayMillis: 3_600_000 });
  q.onEnd(spans[1]);
  await q.forceFlush();
  q.onEnd(spans[2]);
  await q.shutdown();
  assert.deepEqual(linesOf(dest.chunks).map(spanNames), [['op 0'], ['op 1'], ['op 2']]);
  // After shutdown nothing is written; spans ended then are counted as dropped.
  q.onEnd(spans[0]);
  await q.forceFlush();
  await q.shutdown();
  assert.equal(linesOf(dest.chunks).length, 3);
  assert.equal(q.droppedSpans, 1);
});

test('a destination holding maxPendingBytes makes it drop and count spans, unencoded, adding nothing', async () => {
  const dest = sink();
  dest.stall();
  const max = 16 * 1024;
  const p = new StdoutSpanProcessor({ destination: dest, lineBytes: 4096, maxPendingBytes: max });
  const spans = manySpans(500, 200);
  for (const s of spans) p.onEnd(s);
  const held = dest.writableLength;
  assert.ok(held > max - 4096 && held <= max, `destination holds ${held} bytes`);
  assert.ok(p.droppedSpans > 400);
  await dest.releaseAll();
  const more = manySpans(5, 200);
  for (const s of more) p.onEnd(s);
  await p.forceFlush();
  await dest.releaseAll();
  const written = linesOf(dest.chunks).reduce((n, l) => n + spanNames(l).length, 0);
  assert.ok(written > 0);
  assert.equal(written + p.droppedSpans, 505, 'every span was either written or counted');
});

test('a destination that does not tell its pending bytes is skipped from write() === false until drain', async () => {
  const dest = new EventEmitter();
  dest.chunks = [];
  dest.write = (text) => dest.chunks.push(text) < 2;
  const p = new StdoutSpanProcessor({ destination: dest });
  for (const s of manySpans(2, 10)) {
    p.onEnd(s);
    await p.forceFlush(); // the second write says "full"
  }
  p.onEnd(manySpans(1, 10)[0]);
  await p.forceFlush();
  assert.equal(dest.chunks.length, 2, 'nothing written before drain');
  assert.equal(p.droppedSpans, 1);
  dest.emit('drain');
  p.onEnd(manySpans(1, 10)[0]);
  await p.forceFlush();
  assert.equal(dest.chunks.length, 3);
});

test('onEnd never throws: a span it cannot read and a destination that throws are counted', async () => {
  const p = new StdoutSpanProcessor({ destination: { write() { throw new Error('SonicBoom destroyed'); } } });
  p.onEnd({ ...manySpans(1)[0], spanContext() { return { traceFlags: 1 }; }, get attributes() { throw new Error('bad span'); } });
  assert.equal(p.droppedSpans, 1);
  for (const s of manySpans(3)) p.onEnd(s);
  await p.forceFlush();
  assert.equal(p.droppedSpans, 4);
});

test('as a provider\'s span processor: sampled spans are written, unsampled ones are not', async () => {
  const dest = sink();
  const mem = new InMemorySpanExporter();
  const p = new StdoutSpanProcessor({ destination: dest });
  const provider = new BasicTracerProvider({ spanProcessors: [p, new SimpleSpanProcessor(mem)] });
  const tracer = provider.getTracer('t', '1');
  for (let i = 0; i < 10; i++) tracer.startSpan(`s ${i}`).end();
  const off = new BasicTracerProvider({ sampler: new AlwaysOffSampler(), spanProcessors: [p] });
  off.getTracer('t').startSpan('not sampled').end();
  await provider.forceFlush();
  const lines = linesOf(dest.chunks);
  assert.equal(lines.length, 1);
  assert.equal(lines[0], oracleText(JsonTraceSerializer, mem.getFinishedSpans()) + '\n');
  await provider.shutdown();
  assert.equal(p.droppedSpans, 0);
});

test('spans whose resource has detected attributes still pending wait for them, as the batch processor does', async () => {
  const dest = sink();
  const p = new StdoutSpanProcessor({ destination: dest });
  let resolve;
  const hostId = new Promise((r) => { resolve = r; });
  const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': 'late', 'host.id': hostId }), spanProcessors: [p] });
  const tracer = provider.getTracer('t');
  tracer.startSpan('before').end();
  await new Promise((r) => setImmediate(r));
  assert.equal(dest.chunks.length, 0);
  const flushed = p.forceFlush();
  tracer.startSpan('while waiting').end();
  resolve('h-1');
  await flushed;
  const lines = linesOf(dest.chunks);
  assert.equal(lines.length, 1);
  const rs = JSON.parse(lines[0]).resourceSpans;
  assert.deepEqual(rs[0].resource.attributes.find((a) => a.key === 'host.id'), { key: 'host.id', value: { stringValue: 'h-1' } });
  assert.deepEqual(spanNames(lines[0]), ['before', 'while waiting']);
  await provider.shutdown();
});
