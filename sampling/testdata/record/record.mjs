// Records spans from the real OpenTelemetry JS instrumentations into
// ../<client>.json as OTLP/JSON export requests, encoded by the SDK's own
// serializer (what an OTLP/HTTP JSON exporter sends). Run by record.sh,
// which starts the local redis-server and PostgreSQL it talks to.
//
// Every scenario is a small request handler of the kind the sidecar sits
// beside: GETs (found and missing), writes, scripts, transactions,
// pipelines, a failing command and a slow one, under a SERVER span.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';

import { context, trace, SpanKind } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { RedisInstrumentation } from '@opentelemetry/instrumentation-redis';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';

const redisURL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const pgURL = process.env.PG_URL; // unset: pg is skipped
const out = new URL('../', import.meta.url);

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'fixture-app' }),
  spanProcessors: [new SimpleSpanProcessor({ exporter })],
});
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
trace.setGlobalTracerProvider(provider);
// Created before the clients are required, so that their patches apply.
for (const inst of [
  new HttpInstrumentation(),
  new UndiciInstrumentation(),
  new IORedisInstrumentation(),
  new RedisInstrumentation(),
  new PgInstrumentation(),
]) {
  inst.setTracerProvider(provider);
  inst.enable();
}
const require = createRequire(import.meta.url);
const http = require('node:http');
const tracer = trace.getTracer('fixture-app');

// request runs fn under a SERVER span, as an HTTP framework would.
async function request(name, fn) {
  await tracer.startActiveSpan(name, { kind: SpanKind.SERVER }, async (span) => {
    try {
      await fn();
    } finally {
      span.end();
    }
  });
}

// record writes the spans ended since the last call to ../<name>.json.
function record(name) {
  const spans = exporter.getFinishedSpans();
  exporter.reset();
  writeFileSync(new URL(`${name}.json`, out), JsonTraceSerializer.serializeRequest(spans));
  const names = {};
  for (const s of spans) names[s.name] = (names[s.name] || 0) + 1;
  console.log(`${name}.json: ${spans.length} spans`, names);
}

async function ioredis() {
  const Redis = require('ioredis');
  const r = new Redis(redisURL);
  await r.flushdb();
  const sha = await r.script('LOAD', "return redis.call('GET', KEYS[1])");
  for (let i = 0; i < 20; i++) {
    await request('GET /product/:id', async () => {
      await r.get(`product:${i}`); // missing
      await r.set(`product:${i}`, JSON.stringify({ id: i }), 'EX', 60);
      await r.get(`product:${i}`);
      await r.mget(`product:${i}`, `stock:${i}`);
      await r.hgetall(`cart:${i}`);
      await r.evalsha(sha, 1, `product:${i}`);
      await r.multi().incr(`views:${i}`).expire(`views:${i}`, 60).exec();
      await r.pipeline().get(`product:${i}`).get(`stock:${i}`).exec();
    });
  }
  await request('GET /broken', async () => {
    await r.hset('a-hash', 'f', 'v');
    await r.get('a-hash').catch(() => {}); // WRONGTYPE
  });
  const pauser = new Redis(redisURL); // its own connection: not traced under a request
  await request('GET /slow', async () => {
    await r.call('DEBUG', 'SLEEP', '0.05'); // a slow command
    await pauser.client('PAUSE', '50', 'ALL');
    await r.get('product:1'); // a slow GET: the server answers after the pause
  });
  pauser.disconnect();
  r.disconnect();
  record('ioredis');
}

async function nodeRedis() {
  const { createClient } = require('redis');
  const r = createClient({ url: redisURL });
  await r.connect();
  await r.flushDb();
  for (let i = 0; i < 20; i++) {
    await request('GET /product/:id', async () => {
      await r.get(`product:${i}`);
      await r.set(`product:${i}`, JSON.stringify({ id: i }), { EX: 60 });
      await r.get(`product:${i}`);
      await r.mGet([`product:${i}`, `stock:${i}`]);
      await r.hGetAll(`cart:${i}`);
      await r.multi().incr(`views:${i}`).expire(`views:${i}`, 60).exec();
      await r.multi().get(`product:${i}`).get(`stock:${i}`).execAsPipeline();
    });
  }
  await request('GET /broken', async () => {
    await r.hSet('a-hash', 'f', 'v');
    await r.get('a-hash').catch(() => {}); // WRONGTYPE
  });
  await request('GET /slow', async () => {
    await r.sendCommand(['CLIENT', 'PAUSE', '50', 'ALL']);
    await r.get('product:1');
  });
  await r.quit();
  record('redis');
}

async function pg() {
  if (!pgURL) {
    console.log('pg: PG_URL unset, skipped');
    return;
  }
  const { Client } = require('pg');
  const c = new Client({ connectionString: pgURL });
  await c.connect();
  await c.query('CREATE TABLE IF NOT EXISTS products (id int PRIMARY KEY, name text)');
  for (let i = 0; i < 20; i++) {
    await request('GET /product/:id', async () => {
      await c.query('INSERT INTO products (id, name) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING', [i, `p${i}`]);
      await c.query('SELECT id, name FROM products WHERE id = $1', [i]);
      await c.query('select count(*) from products');
    });
  }
  await request('GET /broken', async () => {
    await c.query('SELECT * FROM missing_table').catch(() => {});
  });
  await c.query('DROP TABLE products');
  await c.end();
  record('pg');
}

async function httpClients() {
  const server = http.createServer((req, res) => {
    res.statusCode = req.url.startsWith('/missing') ? 404 : req.url.startsWith('/fail') ? 500 : 200;
    res.end('ok');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  const get = (path) =>
    new Promise((resolve, reject) => http.get(base + path, (res) => res.resume().on('end', resolve)).on('error', reject));
  for (let i = 0; i < 10; i++) {
    await request('GET /checkout', async () => {
      await get(`/health?probe=${i}`); // node:http client
      await (await fetch(`${base}/api/items/${i}`)).text(); // undici, Node's fetch
      await (await fetch(`${base}/api/items/${i}`, { method: 'POST', body: '{}' })).text();
    });
  }
  await get('/missing');
  await (await fetch(`${base}/fail`)).text();
  await sleep(50); // the server spans end after the responses
  server.close();
  record('http');
}

await ioredis();
await nodeRedis();
await pg();
await httpClients();
await provider.shutdown();
