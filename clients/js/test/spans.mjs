// Real SDK spans for the tests: every field the encoding has a rule for.
import * as api from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { TraceState } from '@opentelemetry/core';

// sdk2 is the SDK the spans come from by default: sdk-trace-base 2.x.
export const sdk2 = {
  api, TracerProvider: BasicTracerProvider, InMemorySpanExporter, resourceFromAttributes, TraceState,
  simpleProcessor: (exporter) => new SimpleSpanProcessor(exporter),
};

function provider(sdk, attrs) {
  const mem = new sdk.InMemorySpanExporter();
  const p = new sdk.TracerProvider({
    resource: sdk.resourceFromAttributes(attrs),
    spanProcessors: [sdk.simpleProcessor(mem)],
  });
  return { p, mem };
}

// sdk2Provider is an SDK 2.x provider whose spans end in mem.
export function sdk2Provider(attrs = { 'service.name': 'test' }) {
  return provider(sdk2, attrs);
}

// sampleSpans returns finished ReadableSpans from two resources and several
// scopes, with every attribute type, events, links, statuses, remote and
// local parents, trace state, and non-ASCII text.
export async function sampleSpans(sdk = sdk2) {
  const { context, trace, SpanKind, SpanStatusCode, TraceFlags } = sdk.api;
  const a = provider(sdk, { 'service.name': 'shop', 'service.version': '1.2.3', 'host.cores': 8 });
  const b = provider(sdk, { 'service.name': 'worker' });
  const http = a.p.getTracer('@opentelemetry/instrumentation-http', '0.223.0');
  const redis = a.p.getTracer('@opentelemetry/instrumentation-ioredis', '0.71.0', { schemaUrl: 'https://opentelemetry.io/schemas/1.27.0' });
  const bare = a.p.getTracer('bare');
  const other = b.p.getTracer('worker-scope', '1');

  const remote = trace.setSpanContext(context.active(), {
    traceId: '5b8efff798038103d269b633813fc60c',
    spanId: 'eee19b7ec3c1b174',
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
    traceState: new sdk.TraceState('ot=th:fd,vendor=x'),
  });
  const server = http.startSpan('GET /orders/:id', {
    kind: SpanKind.SERVER,
    attributes: {
      'http.request.method': 'GET', 'http.response.status_code': 200, 'ratio': 0.25,
      'ok': true, 'tags': ['a', 'b'], 'codes': [1, 2, 3], 'mixed': [1.5, 2], 'bytes': new Uint8Array([0, 1, 254, 255]),
      'text': 'héllo 中文 😀 "quoted" \\ \n', 'big': 2 ** 53 - 1, 'neg': -7,
    },
  }, remote);
  server.addEvent('cache miss', { key: 'orders:1' });
  server.addEvent('no attributes');
  const child = trace.setSpan(context.active(), server);
  for (let i = 0; i < 5; i++) {
    const s = redis.startSpan(i === 3 ? 'set' : 'get', {
      kind: SpanKind.CLIENT,
      attributes: { 'db.system.name': 'redis', 'db.operation.name': i === 3 ? 'SET' : 'GET', 'db.query.text': `get orders:${i}` },
      links: i === 0 ? [{ context: server.spanContext(), attributes: { 'link.kind': 'cause' } }, { context: server.spanContext() }] : [],
    }, child);
    if (i === 4) {
      s.recordException(new Error('ECONNRESET'));
      s.setStatus({ code: SpanStatusCode.ERROR, message: 'connection reset' });
    }
    s.end();
  }
  bare.startSpan('internal work', { kind: SpanKind.INTERNAL }, child).end();
  const ok = other.startSpan('job', { kind: SpanKind.CONSUMER });
  ok.setStatus({ code: SpanStatusCode.OK });
  ok.end();
  other.startSpan('publish', { kind: SpanKind.PRODUCER }).end();
  server.end();
  await a.p.forceFlush(); // SimpleSpanProcessor exports asynchronously in 3.x
  await b.p.forceFlush();
  const spans = [...a.mem.getFinishedSpans(), ...b.mem.getFinishedSpans()];
  // Interleave the resources, as a shared batch may.
  return [spans[7], ...spans.slice(0, 4), spans[8], ...spans.slice(4, 7)];
}

// manySpans returns n spans of one resource and scope, each with an
// attribute of attrBytes characters.
export function manySpans(n, attrBytes = 100) {
  const { p, mem } = provider(sdk2, { 'service.name': 'bulk' });
  const t = p.getTracer('bulk');
  for (let i = 0; i < n; i++) t.startSpan(`op ${i}`, { attributes: { i, pad: 'x'.repeat(attrBytes) } }).end();
  return mem.getFinishedSpans();
}

// oracleText is what an otlp-transformer JsonTraceSerializer makes of the
// spans, as text with its non-ASCII characters written as \u escapes (the
// encoder writes ASCII only).
export function oracleText(serializer, spans) {
  const text = new TextDecoder().decode(serializer.serializeRequest(spans));
  return text.replace(/[\u0080-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

// oddSpans returns ReadableSpan-shaped objects with values an SDK does not
// make but a hand-made span or another SDK version might: every edge of
// JSON.stringify's output (non-finite and large numbers, -0, null and
// undefined in arrays, nested maps, control characters, a lone surrogate,
// DEL), and every optional member set or left out.
export function oddSpans() {
  const resource = { attributes: { 'service.name': 'odd\u0001', empty: '' }, schemaUrl: 'https://example.com/r' };
  const scopes = [
    { name: 'with-attrs', version: '2', schemaUrl: '', attributes: { 'scope.k': 'v' }, droppedAttributesCount: 3 },
    { name: 'bare' },
  ];
  const span = (i, extra) => ({
    name: `odd ${i} \u007f \ud800 \t\b\f\r`,
    kind: i % 2 ? undefined : 4,
    spanContext: () => ({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: `b7ad6b71692033${String(i).padStart(2, '0')}`, traceFlags: i, traceState: i ? { serialize: () => '' } : undefined }),
    parentSpanContext: i === 1 ? { spanId: '', isRemote: true } : i === 2 ? { spanId: '00f067aa0ba902b7', isRemote: false } : undefined,
    startTime: [0, 5], endTime: [1700000000, 1],
    status: i === 3 ? { code: 2 } : { code: 1, message: 'ok "quoted"' },
    attributes: {
      nan: NaN, inf: -Infinity, negZero: -0, huge: 1e21, tiny: 5e-7, float: 0.1,
      arr: [null, undefined, 'x', [1, [true]], { k: 'v' }], map: { a: { b: [2.5] } },
      bytes: new Uint8Array(0), big: 10n, fn: () => 1, none: null, '\u00e9 key"': 'v\u0000',
    },
    droppedAttributesCount: 0,
    events: [{ name: 'e', time: [2, 999999999] }, { name: 'f', time: [3, 0], attributes: { n: 1 }, droppedAttributesCount: 2 }],
    droppedEventsCount: 1,
    links: i === 0 ? [{ context: { traceId: 'a', spanId: 'b', traceFlags: 1, isRemote: true, traceState: { serialize: () => 'k=v' } } }] : [],
    droppedLinksCount: 0,
    resource,
    instrumentationScope: scopes[i % 2],
    ...extra,
  });
  return [span(0), span(1), span(2), span(3, { droppedAttributesCount: undefined })];
}
