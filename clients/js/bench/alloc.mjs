// What an export of the example app's spans allocates and holds in the app,
// in bytes per span: StdoutSpanExporter's export into pino's asynchronous
// destination (as the example app uses it; writes to /dev/null), against
// @opentelemetry/exporter-trace-otlp-proto's OTLPTraceExporter (as the
// example app's otlp mode uses it; posting to a receiver in a child
// process), and its ProtobufTraceSerializer alone. Each sample is one export
// of 512 spans (the batch span processor's batch), run to completion (the
// destination has written everything; the OTLP post was answered), between
// full garbage collections:
//
//   node --expose-gc bench/alloc.mjs [--samples 15] [--baseline DIR]
//   bun bench/alloc.mjs ...
//
// allocated  Node: the growth of the heap used plus external memory
//            (Buffers' contents) over the export, with a young generation
//            large enough that no collection runs during it (a sample
//            during which one ran is discarded). Bun: the bytes JSC
//            allocated in its garbage-collected heap, from its own GC log
//            (BUN_JSC_logGC: heap size at the collection after the export
//            minus what the sweep of the one before left). Of the memory
//            outside its cells JSC counts there only some (a Buffer made
//            from a string, yes; a string's characters, no), so Bun's
//            figure leaves out the lines' text, about 700 bytes a span.
// in flight  what a full collection right after export() returns leaves
//            beyond the one before: the lines the destination holds until
//            written, the request until posted.
// retained   the growth of what full collections leave over 20 exports
//            run to completion, per export: what an export keeps.
//
// --baseline DIR adds the StdoutSpanExporter of another checkout of this
// package (DIR holds its index.cjs), for a before/after in one run.
import { createRequire } from 'node:module';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { StdoutSpanExporter } from '../index.mjs';
import { requestSpans } from './spans.mjs';

const { values: opts } = parseArgs({
  options: {
    samples: { type: 'string', default: '15' },
    baseline: { type: 'string' },
    app: { type: 'string', default: fileURLToPath(new URL('../../../examples/node-app', import.meta.url)) },
    child: { type: 'boolean' }, // Bun: the measuring process, under BUN_JSC_logGC
  },
});
const BATCH = 512; // the batch span processor's maxExportBatchSize
// Exports whose retained bytes are added up: what a collection leaves varies
// by a few hundred KB from one to the next, what an export would keep
// grows with their number.
const RETAINED_EXPORTS = 20;
const isBun = typeof Bun !== 'undefined';
const runtime = isBun ? `bun ${Bun.version}` : `node ${process.versions.node}`;

if (isBun && !opts.child) {
  // JSC logs every collection on stderr; the child says on stdout what it
  // measured and how many collections it forced.
  const self = fileURLToPath(import.meta.url);
  const logFile = path.join(mkdtempSync(path.join(tmpdir(), 'alloc-')), 'gc.log'); // a file: the log is large
  const log = openSync(logFile, 'w');
  const r = spawnSync(process.execPath, [self, '--child', ...process.argv.slice(2)], {
    env: { ...process.env, BUN_JSC_logGC: '1' }, encoding: 'utf8', stdio: ['ignore', 'pipe', log],
  });
  closeSync(log);
  const gcLog = readFileSync(logFile, 'utf8');
  rmSync(path.dirname(logFile), { recursive: true });
  if (r.status !== 0) throw new Error(`child: ${r.status} ${gcLog.slice(-2000)}`);
  report(JSON.parse(r.stdout), allocations(gcLog));
} else if (!isBun && typeof globalThis.gc !== 'function') {
  // A young generation that holds a whole export, so that no collection
  // runs during one.
  const r = spawnSync(process.execPath, ['--expose-gc', '--min-semi-space-size=64', '--max-semi-space-size=64', fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(r.status);
} else if (opts.child) {
  console.log(JSON.stringify(await measure()));
} else {
  report(await measure(), null);
}

// allocations reads, from JSC's GC log with the child's marks in it, each
// sample's GC-heap allocation: the heap size at the collection after its
// end mark minus the size the forced collection's sweep left before its
// begin mark; NaN for a sample during which JSC collected on its own.
function allocations(log) {
  const out = [];
  let swept = NaN;
  let open = false;
  let clean = false;
  let closed = false;
  for (const m of log.matchAll(/START \w (\d+)kb => \w+Collection|Full sweep: \d+kb => (\d+)kb|@@(begin|end)/g)) {
    if (m[3] === 'begin') [open, clean] = [true, true];
    else if (m[3] === 'end') [open, closed] = [false, true];
    else if (m[2]) swept = 1024 * Number(m[2]);
    else if (open) clean = false;
    else if (closed) {
      out.push(clean ? 1024 * Number(m[1]) - swept : NaN);
      closed = false;
    }
  }
  return out;
}

async function measure() {
  const spans = requestSpans(Math.ceil(BATCH / 7)).slice(0, BATCH);
  const gc = isBun ? () => Bun.gc(true) : globalThis.gc;
  const full = () => {
    gc();
    gc();
    const m = process.memoryUsage();
    return isBun ? m.heapUsed : m.heapUsed + m.external; // Bun's heapUsed counts external memory
  };
  const heapNow = () => {
    const m = process.memoryUsage();
    return m.heapUsed + m.external;
  };
  let gcs = 0; // Node: collections seen, to discard a sample during which one ran
  if (!isBun) {
    const { PerformanceObserver } = await import('node:perf_hooks');
    new PerformanceObserver((list) => { gcs += list.getEntries().length; }).observe({ entryTypes: ['gc'] });
  }
  const settle = () => new Promise((r) => setTimeout(r, 0)); // delivers the GC entries

  const dest = pino.destination({ dest: '/dev/null', sync: false });
  await once(dest, 'ready');
  const written = async () => {
    if (dest._writing || dest._len > 0) await once(dest, 'drain');
  };
  const stdoutVariant = (Exporter) => {
    const e = new Exporter({ destination: dest });
    return {
      start: () => e.export(spans, (r) => { if (r.code !== 0) throw r.error; }),
      done: written,
    };
  };
  const variants = [['stdout exporter', stdoutVariant(StdoutSpanExporter)]];
  if (opts.baseline) {
    const base = createRequire(path.resolve(opts.baseline, 'index.cjs'))('./index.cjs');
    variants.push([`stdout exporter (${opts.baseline})`, stdoutVariant(base.StdoutSpanExporter)]);
  }
  // The exporter's own part: encoding and handing over the lines, to a
  // destination that keeps nothing (no SonicBoom).
  const own = new StdoutSpanExporter({ destination: { write: () => true, writableLength: 0 } });
  variants.push(['stdout exporter, into nothing', {
    start: () => own.export(spans, (r) => { if (r.code !== 0) throw r.error; }),
    done: () => {},
  }]);
  const { BUN_JSC_logGC, ...env } = process.env; // JSC's log is this process's
  const receiver = spawn(process.execPath, ['-e', `
    require('node:http').createServer((q, s) => {
      q.resume();
      q.on('end', () => { s.writeHead(200, { 'content-type': 'application/x-protobuf' }); s.end(); });
    }).listen(0, '127.0.0.1', function () { console.log(this.address().port); });`], { stdio: ['ignore', 'pipe', 'inherit'], env });
  const [port] = await once(receiver.stdout, 'data');
  const appRequire = createRequire(path.join(opts.app, 'package.json'));
  const { OTLPTraceExporter } = appRequire('@opentelemetry/exporter-trace-otlp-proto');
  const otlp = new OTLPTraceExporter({ url: `http://127.0.0.1:${String(port).trim()}/v1/traces` });
  let posted;
  variants.push(['OTLP/protobuf exporter', {
    start: () => {
      posted = new Promise((resolve, reject) => otlp.export(spans, (r) => (r.code === 0 ? resolve() : reject(r.error))));
    },
    done: () => posted,
  }]);
  variants.push(['protobuf serializer', {
    start: () => { if (!ProtobufTraceSerializer.serializeRequest(spans)) throw new Error('no request'); },
    done: () => {},
  }]);

  // sample runs one export of a variant three times: for what it allocates
  // (no collection during it), what it holds when export() returns, and
  // what it holds once done.
  let seq = 0; // the samples' order, which is the order of their marks in JSC's log
  async function sample(v, marked = true) {
    const h0 = full();
    await settle();
    const g0 = gcs;
    const mark = isBun && marked; // warm-up samples are not marked
    if (mark) writeSync(2, '@@begin\n'); // JSC writes its log there, line by line
    const t0 = heapNow();
    v.start();
    await v.done();
    const t1 = heapNow();
    if (mark) writeSync(2, '@@end\n');
    await settle();
    const allocated = isBun || gcs === g0 ? t1 - t0 : NaN;
    const h1 = full();
    v.start();
    const inFlight = full() - h1;
    await v.done();
    for (let i = 1; i < RETAINED_EXPORTS; i++) {
      v.start();
      await v.done();
    }
    const retained = (full() - h0) / RETAINED_EXPORTS;
    return { seq: seq++, allocated, inFlight, retained };
  }

  for (const [, v] of variants) for (let i = 0; i < 3; i++) await sample(v, false); // the JITs settle
  const samples = variants.map(() => []);
  const rounds = Number(opts.samples);
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < variants.length; k++) {
      const v = (r + k) % variants.length;
      samples[v].push(await sample(variants[v][1]));
    }
  }
  receiver.kill();
  dest.end();
  return { names: variants.map(([name]) => name), samples };
}

// report prints the medians per span; for Bun, the GC-heap allocations
// read from JSC's log, in the order of the samples.
function report({ names, samples }, allocated) {
  let note = '';
  if (allocated) {
    const all = samples.flat().sort((a, b) => a.seq - b.seq);
    if (allocated.length !== all.length) throw new Error(`${allocated.length} samples in JSC's log, ${all.length} taken`);
    all.forEach((s, i) => { s.allocated = allocated[i]; });
    const left = allocated.filter(Number.isNaN).length;
    if (left) note = ` (allocation: ${left} samples left out, JSC collected during them)`;
  }
  const med = (xs) => {
    const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
    return s.length ? s[s.length >> 1] / BATCH : NaN;
  };
  const f = (x) => (Number.isNaN(x) ? '—' : x.toFixed(0));
  console.log(`${runtime}: bytes per span, medians of ${samples[0].length} exports of ${BATCH} spans${note}`);
  console.log(`| variant | allocated${allocated ? ' (GC heap only)' : ''} | in flight at return | retained once done |`);
  console.log('|---|---:|---:|---:|');
  names.forEach((name, v) => {
    const xs = samples[v];
    console.log(`| ${name} | ${f(med(xs.map((s) => s.allocated)))} | ${f(med(xs.map((s) => s.inFlight)))} | ${f(med(xs.map((s) => s.retained)))} |`);
  });
}
