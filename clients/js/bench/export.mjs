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
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { StdoutSpanExporter } from '../index.mjs';
import { requestSpans } from './spans.mjs';

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
