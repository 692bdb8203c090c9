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

test('writes each export as lines to the given destination', async () => {
  const dest = stalledStream(1 << 20);
  const exp = new StdoutSpanExporter({ destination: dest, maxLineBytes: 8192 });
  const res = await exportAsync(exp, manySpans(50, 400));
  assert.equal(res.code, 0);
  await dest.releaseAll();
  assert.ok(dest.received.length > 1);
  let spans = 0;
  for (const line of dest.received) {
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
  const written = dest.received.reduce((n, l) => n + JSON.parse(l).resourceSpans[0].scopeSpans[0].spans.length, 0);
  assert.equal(written + exp.droppedSpans, 20 + 1000 + 5, 'every span was either written or counted');
});

test('a destination that does not tell its pending bytes is skipped from write() === false until drain', async () => {
  const dest = new EventEmitter();
  dest.lines = [];
  dest.write = (line) => dest.lines.push(line) < 2;
  const exp = new StdoutSpanExporter({ destination: dest, maxLineBytes: 1024 });
  await exportAsync(exp, manySpans(10, 200)); // several lines: the second write says "full"
  assert.equal(dest.lines.length, 2);
  const spansIn = (lines) => lines.reduce((n, l) => n + JSON.parse(l).resourceSpans[0].scopeSpans[0].spans.length, 0);
  assert.equal(spansIn(dest.lines) + exp.droppedSpans, 10);
  await exportAsync(exp, manySpans(3, 10));
  assert.equal(dest.lines.length, 2, 'nothing written before drain');
  dest.lines.length = 0;
  dest.emit('drain');
  await exportAsync(exp, manySpans(3, 10));
  assert.equal(spansIn(dest.lines), 3);
});

test('after shutdown, exports fail and write nothing', async () => {
  const dest = stalledStream(1 << 20);
  const exp = new StdoutSpanExporter({ destination: dest });
  await exp.shutdown();
  const r = await exportAsync(exp, manySpans(1));
  assert.equal(r.code, 1);
  assert.equal(dest.writableLength, 0);
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
