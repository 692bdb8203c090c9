import test from 'node:test';
import assert from 'node:assert/strict';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { encodeLines } from '../src/encode.cjs';
import { sampleSpans, manySpans, oddSpans, oracleText, sdk2Provider } from './spans.mjs';

// The oracle: what @opentelemetry/otlp-transformer's JSON serializer (the
// encoding of @opentelemetry/exporter-trace-otlp-http) makes of the spans.
function oracle(spans) {
  return JSON.parse(oracleText(JsonTraceSerializer, spans));
}

// spansOf returns the spans a line holds, in its order, by their ids.
function spansOf(text, spans) {
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  return flatten(JSON.parse(text)).map((f) => byId.get(f.span.spanId));
}

// flatten lists (resource, scope, span) of a request, in order, so requests
// split differently can be compared.
function flatten(req) {
  const out = [];
  for (const rs of req.resourceSpans) {
    for (const ss of rs.scopeSpans) {
      for (const span of ss.spans) out.push({ resource: rs.resource, rsSchema: rs.schemaUrl, scope: ss.scope, ssSchema: ss.schemaUrl, span });
    }
  }
  return out;
}

test('one export is one line equal to otlp-transformer JSON encoding', async () => {
  const spans = await sampleSpans();
  const { lines, tooLarge } = encodeLines(spans, 256 * 1024);
  assert.equal(tooLarge, 0);
  assert.equal(lines.length, 1);
  assert.equal(lines[0].spans, spans.length);
  assert.ok(lines[0].text.endsWith('}\n'));
  assert.equal(lines[0].text.indexOf('\n'), lines[0].text.length - 1, 'one line');
  assert.equal(lines[0].text, oracleText(JsonTraceSerializer, spans) + '\n');
});

test('values the SDK does not make encode as otlp-transformer encodes them too', () => {
  const spans = oddSpans();
  const { lines } = encodeLines(spans, 256 * 1024);
  assert.equal(lines.length, 1);
  assert.equal(lines[0].text, oracleText(JsonTraceSerializer, spans) + '\n');
});

test('a large export is split into lines under the limit holding the same spans in order', async () => {
  const spans = [...(await sampleSpans()), ...manySpans(300, 500), ...(await sampleSpans())];
  for (const max of [2048, 8192, 65536]) {
    const { lines, tooLarge } = encodeLines(spans, max);
    assert.equal(tooLarge, 0);
    assert.ok(lines.length > 1, `split at ${max}`);
    let count = 0;
    const got = [];
    for (const { text, spans: n } of lines) {
      assert.ok(Buffer.byteLength(text) <= max, `line of ${Buffer.byteLength(text)} bytes > ${max}`);
      assert.equal(text, oracleText(JsonTraceSerializer, spansOf(text, spans)) + '\n', 'each line is the request of its spans');
      const req = JSON.parse(text);
      const flat = flatten(req);
      assert.equal(flat.length, n);
      got.push(...flat);
      count += n;
    }
    assert.equal(count, spans.length);
    assert.deepEqual(got, flatten(oracle(spans)));
  }
});

test('lines are filled up to the limit, not just under it', () => {
  const spans = manySpans(200, 1000);
  const max = 16 * 1024;
  const { lines } = encodeLines(spans, max);
  const oneSpan = Buffer.byteLength(encodeLines(spans.slice(0, 1), max).lines[0].text);
  for (const { text } of lines.slice(0, -1)) {
    assert.ok(Buffer.byteLength(text) > max - oneSpan, `a line of ${Buffer.byteLength(text)} bytes had room for another span`);
  }
});

test('a span larger than a line is left out and counted; the others are kept', () => {
  const spans = [...manySpans(3, 10), ...manySpans(1, 10000), ...manySpans(2, 10)];
  const { lines, tooLarge } = encodeLines(spans, 4096);
  assert.equal(tooLarge, 1);
  const got = lines.flatMap(({ text }) => flatten(JSON.parse(text)).map((f) => f.span.name));
  assert.deepEqual(got, ['op 0', 'op 1', 'op 2', 'op 0', 'op 1']);
});

test('lines are ASCII, so a byte-level cut never splits a character', async () => {
  const spans = await sampleSpans(); // non-ASCII text, including a character outside the BMP
  const { lines } = encodeLines(spans, 256 * 1024);
  for (const { text, bytes } of lines) {
    assert.match(text, /^[\x00-\x7f]*$/);
    assert.equal(Buffer.byteLength(text), bytes);
  }
});

test('a span over lineBytes gets a line of its own up to maxBytes, and the lines are the oracle\'s', () => {
  const spans = [...manySpans(20, 300), ...manySpans(1, 6000), ...manySpans(20, 300)];
  const { lines, tooLarge } = encodeLines(spans, 16384, 4096);
  assert.equal(tooLarge, 0);
  const sizes = lines.map((l) => l.bytes);
  assert.ok(sizes.some((n) => n > 4096 && n <= 16384), `one line over lineBytes: ${sizes}`);
  assert.equal(sizes.filter((n) => n > 4096).length, 1, 'only the big span\'s line is over lineBytes');
  let count = 0;
  for (const { text, spans: n } of lines) {
    assert.equal(text, oracleText(JsonTraceSerializer, spansOf(text, spans)) + '\n');
    count += n;
  }
  assert.equal(count, spans.length);
});

test('a span larger than the encoder\'s buffer, and the spans after it, encode as the oracle\'s', () => {
  for (const spans of [manySpans(1, 300 * 1024), manySpans(3, 100)]) {
    const { lines } = encodeLines(spans, 1 << 20);
    assert.equal(lines.length, 1);
    assert.equal(lines[0].text, oracleText(JsonTraceSerializer, spans) + '\n');
  }
});

test('attribute keys past the encoder\'s cache of keys encode as the oracle\'s', () => {
  const { p, mem } = sdk2Provider();
  const t = p.getTracer('keys');
  for (let i = 0; i < 3; i++) {
    const attributes = {};
    for (let k = 0; k < 1500; k++) attributes[`key.${i}.${k}`] = k % 2 ? k : `v${k}`;
    t.startSpan(`keys ${i}`, { attributes }).end();
  }
  const spans = mem.getFinishedSpans();
  const { lines } = encodeLines(spans, 1 << 20);
  assert.equal(lines[0].text, oracleText(JsonTraceSerializer, spans) + '\n');
});

test('no spans, no lines', () => {
  assert.deepEqual(encodeLines([], 4096), { lines: [], tooLarge: 0 });
});
