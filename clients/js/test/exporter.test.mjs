import test from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { StdoutSpanExporter } from '../index.mjs';
import { manySpans } from './spans.mjs';

function exportAsync(exp, spans) {
  return new Promise((resolve) => exp.export(spans, resolve));
}

// A destination that takes writes into its buffer and completes none until
// release() is called, like a pipe whose reader stalls.
function stalledStream(highWaterMark) {
  const pending = [];
  const s = new Writable({
    highWaterMark,
    decodeStrings: false,
    write(chunk, _enc, cb) {
      pending.push(() => {
        s.received.push(chunk);
        cb();
      });
    },
  });
  s.received = [];
  s.release = () => {
    while (pending.length) pending.shift()();
  };
  // Writable calls _write for one chunk at a time: keep releasing until drained.
  s.releaseAll = async () => {
    while (s.writableLength > 0) {
      s.release();
      await new Promise((r) => setImmediate(r));
    }
  };
  return s;
}

// linesOf splits what a destination received into lines.
const linesOf = (chunks) => chunks.join('').split(/(?<=\n)/);

test('writes each export as lines to the given destination, a line a write', async () => {
  const dest = stalledStream(1 << 20);
  const exp = new StdoutSpanExporter({ destination: dest, maxLineBytes: 8192 });
  const res = await exportAsync(exp, manySpans(50, 400));
  assert.equal(res.code, 0);
  await dest.releaseAll();
  assert.ok(dest.received.length > 1);
  assert.deepEqual(linesOf(dest.received), dest.received.map(String), 'each write is one whole line');
  let spans = 0;
  for (const line of linesOf(dest.received)) {
    assert.ok(line.endsWith('\n') && line.indexOf('\n') === line.length - 1);
    assert.ok(Buffer.byteLength(line) <= 8192);
    spans += JSON.parse(line).resourceSpans[0].scopeSpans[0].spans.length;
  }
  assert.equal(spans, 50);
  assert.equal(exp.droppedSpans, 0);
});

test('a destination holding maxPendingBytes unwritten makes it drop and count spans, adding nothing', async () => {
  const max = 4096;
  const dest = stalledStream(1 << 20);
  const exp = new StdoutSpanExporter({ destination: dest, maxLineBytes: 2048, maxPendingBytes: max });
  const first = await exportAsync(exp, manySpans(20, 200));
  // The stream stalled during the first export: the lines that fit were
  // handed over, the rest dropped.
  const held = dest.writableLength;
  assert.ok(held > max - 2048 && held <= max, `destination holds ${held} bytes`);
  assert.equal(first.code, 0, 'a drop is not a failure: forceFlush must not reject');
  const droppedFirst = exp.droppedSpans;
  assert.ok(droppedFirst > 0 && droppedFirst < 20);
  for (let i = 0; i < 100; i++) {
    const r = await exportAsync(exp, manySpans(10, 200));
    assert.equal(r.code, 0);
  }
  assert.equal(exp.droppedSpans, droppedFirst + 1000);
  assert.equal(dest.writableLength, held, 'nothing more was handed over while it stalled');

  await dest.releaseAll();
  const after = await exportAsync(exp, manySpans(5, 200));
  assert.equal(after.code, 0);
  await dest.releaseAll();
  const written = linesOf(dest.received).reduce((n, l) => n + JSON.parse(l).resourceSpans[0].scopeSpans[0].spans.length, 0);
  assert.equal(written + exp.droppedSpans, 20 + 1000 + 5, 'every span was either written or counted');
});

test('a destination that does not tell its pending bytes is skipped from write() === false until drain', async () => {
  const dest = new EventEmitter();
  dest.chunks = [];
  dest.full = false;
  dest.write = (text) => {
    dest.chunks.push(text);
    return !dest.full;
  };
  const exp = new StdoutSpanExporter({ destination: dest, maxLineBytes: 1024 });
  const spansIn = (chunks) => linesOf(chunks).reduce((n, l) => n + JSON.parse(l).resourceSpans[0].scopeSpans[0].spans.length, 0);
  await exportAsync(exp, manySpans(10, 200)); // several lines
  assert.ok(dest.chunks.length > 1);
  assert.equal(spansIn(dest.chunks), 10);
  dest.full = true;
  await exportAsync(exp, manySpans(1, 10)); // one line: this write says "full"
  assert.equal(spansIn(dest.chunks), 11);
  const written = dest.chunks.length;
  const r = await exportAsync(exp, manySpans(3, 10));
  assert.equal(r.code, 0);
  assert.equal(dest.chunks.length, written, 'nothing written before drain');
  assert.equal(exp.droppedSpans, 3);
  dest.chunks.length = 0;
  dest.full = false;
  dest.emit('drain');
  await exportAsync(exp, manySpans(3, 10));
  assert.equal(spansIn(dest.chunks), 3);
  // "Full" in the middle of an export: its later lines are dropped.
  dest.chunks.length = 0;
  dest.full = true;
  await exportAsync(exp, manySpans(10, 200));
  assert.equal(dest.chunks.length, 1);
  assert.equal(exp.droppedSpans, 3 + 10 - spansIn(dest.chunks));
});

test('after shutdown, exports fail and write nothing', async () => {
  const dest = stalledStream(1 << 20);
  const exp = new StdoutSpanExporter({ destination: dest });
  await exp.shutdown();
  const r = await exportAsync(exp, manySpans(1));
  assert.equal(r.code, 1);
  assert.equal(dest.writableLength, 0);
});

test('resultCallback is called exactly once, synchronously, on every path', async () => {
  const paths = {
    written: { destination: stalledStream(1 << 20) },
    congested: { destination: stalledStream(1 << 20), maxPendingBytes: 10 },
    tooLarge: { destination: stalledStream(1 << 20), maxLineBytes: 100 },
    throws: { destination: { write() { throw new Error('EPIPE'); } } },
    falseThenSkipped: { destination: Object.assign(new EventEmitter(), { write: () => false }) },
  };
  for (const [name, options] of Object.entries(paths)) {
    const exp = new StdoutSpanExporter(options);
    for (let i = 0; i < 3; i++) {
      const calls = [];
      exp.export(manySpans(5, 100), (r) => calls.push(r));
      assert.equal(calls.length, 1, `${name}: export ${i} called back ${calls.length} times`);
    }
  }
  // A span the encoder cannot read fails its export, counted.
  const exp = new StdoutSpanExporter({ destination: stalledStream(1 << 20) });
  const calls = [];
  exp.export([{ ...manySpans(1)[0], spanContext() { throw new Error('bad span'); } }], (r) => calls.push(r));
  assert.equal(calls.length, 1);
  assert.equal(calls[0].code, 1);
  assert.equal(exp.droppedSpans, 1);
  await exp.shutdown();
  exp.export(manySpans(1), (r) => calls.push(r));
  assert.equal(calls.length, 2);
});

test('a destination that throws fails the export and counts its spans', async () => {
  const exp = new StdoutSpanExporter({
    destination: { write() { throw new Error('SonicBoom destroyed'); } },
  });
  const r = await exportAsync(exp, manySpans(3));
  assert.equal(r.code, 1);
  assert.equal(r.error.message, 'SonicBoom destroyed');
  assert.equal(exp.droppedSpans, 3);
});
