import test from 'node:test';
import assert from 'node:assert/strict';
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

test('a congested destination makes it drop and count spans, holding nothing, until it drains', async () => {
  const hwm = 4096;
  const dest = stalledStream(hwm);
  const exp = new StdoutSpanExporter({ destination: dest, maxLineBytes: 2048 });
  const first = await exportAsync(exp, manySpans(20, 200));
  // The stream filled past its mark during the first export: the rest of
  // that export was dropped, and what was handed over stays bounded.
  const held = dest.writableLength;
  assert.ok(held >= hwm && held <= hwm + 2048, `destination holds ${held} bytes`);
  assert.equal(first.code, 0, 'a drop is not a failure: forceFlush must not reject');
  const droppedFirst = exp.droppedSpans;
  assert.ok(droppedFirst > 0 && droppedFirst < 20);
  for (let i = 0; i < 100; i++) {
    const r = await exportAsync(exp, manySpans(10, 200));
    assert.equal(r.code, 0);
  }
  assert.equal(exp.droppedSpans, droppedFirst + 1000);
  assert.equal(dest.writableLength, held, 'nothing more was buffered while congested');

  await dest.releaseAll();
  const after = await exportAsync(exp, manySpans(5, 200));
  assert.equal(after.code, 0);
  await dest.releaseAll();
  const written = dest.received.reduce((n, l) => n + JSON.parse(l).resourceSpans[0].scopeSpans[0].spans.length, 0);
  assert.equal(written + exp.droppedSpans, 20 + 1000 + 5, 'every span was either written or counted');
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
