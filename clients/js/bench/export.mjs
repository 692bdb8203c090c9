// What an export of the example app's spans costs the app, in CPU time per
// span: StdoutSpanExporter's export of a batch into pino's destination (a
// synchronous SonicBoom on /dev/null or a pipe: encoding, handing the text to
// the destination and its write(2)), against otlp-transformer's
// ProtobufTraceSerializer.serializeRequest of the same batch, the least the
// OTLP exporter does before its HTTP request. Runs under Node and Bun:
//
//   node bench/export.mjs [--rounds 15] [--batches 20] [--dest /dev/null|pipe] [--baseline DIR]
//   bun bench/export.mjs ...
//
// The variants alternate within each round (their order rotating), so a
// loaded machine slows them alike; each sample is the CPU time
// (process.cpuUsage: user + system, all threads) of `batches` exports of 512
// spans. --baseline DIR adds the StdoutSpanExporter of another checkout of
// this package (DIR holds its index.cjs), for a before/after in one run.
import { createRequire } from 'node:module';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { context, trace, SpanKind } from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { StdoutSpanExporter } from '../index.mjs';

const { values: opts } = parseArgs({
  options: {
    rounds: { type: 'string', default: '15' },
    batches: { type: 'string', default: '20' },
    dest: { type: 'string', default: '/dev/null' },
    baseline: { type: 'string' },
  },
});
const rounds = Number(opts.rounds);
const batches = Number(opts.batches);
const BATCH = 512; // the batch span processor's maxExportBatchSize

// requestSpans makes n requests' spans as the example app's instrumentations
// (instrumentation-http 0.223, instrumentation-ioredis 0.71, their current
// semantic conventions) record them for GET /orders/:id: a server span and
// 5 GETs and a SET as its children, in the order they end.
function requestSpans(n) {
  const mem = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'node-app' }),
    spanProcessors: [new SimpleSpanProcessor(mem)],
  });
  const http = provider.getTracer('@opentelemetry/instrumentation-http', '0.223.0');
  const redis = provider.getTracer('@opentelemetry/instrumentation-ioredis', '0.71.0');
  for (let i = 0; i < n; i++) {
    const id = 1000 + i;
    const server = http.startSpan('GET', {
      kind: SpanKind.SERVER,
      attributes: {
        'http.request.method': 'GET', 'url.scheme': 'http', 'server.address': '127.0.0.1',
        'network.peer.address': '127.0.0.1', 'network.peer.port': 40000 + (i % 64),
        'network.protocol.version': '1.1', 'url.path': `/orders/${id}`, 'user_agent.original': 'Go-http-client/1.1',
        'client.address': '127.0.0.1', 'server.port': 3000,
      },
    });
    const parent = trace.setSpan(context.active(), server);
    const get = (key) => ({ op: 'get', text: `get ${key}:${id}` });
    for (const c of [get('order'), get('customer'), get('cart'), get('stock'), get('price'), { op: 'set', text: `set seen:${id} [1 other arguments]` }]) {
      redis.startSpan(c.op, {
        kind: SpanKind.CLIENT,
        attributes: {
          'db.operation.name': c.op, 'db.system.name': 'redis', 'db.query.text': c.text,
          'server.address': '127.0.0.1', 'server.port': 6379,
        },
      }, parent).end();
    }
    server.setAttribute('http.response.status_code', 200);
    server.end();
  }
  return mem.getFinishedSpans();
}

// destination opens pino's destination on /dev/null, or on a pipe whose
// other end a child process reads and discards.
function destination() {
  if (opts.dest !== 'pipe') return { dest: pino.destination({ dest: opts.dest, sync: true }), close() {} };
  const reader = spawn('cat', [], { stdio: ['pipe', 'ignore', 'inherit'] });
  const fd = reader.stdin._handle.fd;
  return { dest: pino.destination({ dest: fd, sync: true }), close: () => reader.kill() };
}

const spans = requestSpans(Math.ceil(BATCH / 7)).slice(0, BATCH);
const { dest, close } = destination();
const exportWith = (exporter) => () => exporter.export(spans, (r) => {
  if (r.code !== 0) throw r.error;
});
const variants = [['stdout exporter', exportWith(new StdoutSpanExporter({ destination: dest }))]];
if (opts.baseline) {
  const base = createRequire(path.resolve(opts.baseline, 'index.cjs'))('./index.cjs');
  variants.push([`stdout exporter (${opts.baseline})`, exportWith(new base.StdoutSpanExporter({ destination: dest }))]);
}
variants.push(['protobuf serializer', () => {
  if (!ProtobufTraceSerializer.serializeRequest(spans)) throw new Error('no request');
}]);

function cpuMicros(fn) {
  const t0 = process.cpuUsage();
  for (let i = 0; i < batches; i++) fn();
  const t = process.cpuUsage(t0);
  return t.user + t.system;
}

for (const [, fn] of variants) cpuMicros(fn); // warm-up: the JITs settle
const samples = variants.map(() => []);
for (let r = 0; r < rounds; r++) {
  for (let k = 0; k < variants.length; k++) {
    const v = (r + k) % variants.length;
    samples[v].push(cpuMicros(variants[v][1]) / (batches * BATCH));
  }
}
close();

const runtime = typeof Bun !== 'undefined' ? `bun ${Bun.version}` : `node ${process.versions.node}`;
const q = (xs, p) => [...xs].sort((a, b) => a - b)[Math.round(p * (xs.length - 1))];
console.log(`${runtime}: CPU µs per span, ${rounds} rounds of ${batches} exports of ${BATCH} spans (to ${opts.dest})`);
console.log('| variant | median | min | max | / protobuf (median) |');
console.log('|---|---:|---:|---:|---:|');
const proto = q(samples[samples.length - 1], 0.5);
variants.forEach(([name], v) => {
  const xs = samples[v];
  console.log(`| ${name} | ${q(xs, 0.5).toFixed(3)} | ${q(xs, 0).toFixed(3)} | ${q(xs, 1).toFixed(3)} | ${(q(xs, 0.5) / proto).toFixed(2)} |`);
});
