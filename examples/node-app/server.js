// An HTTP service on Redis for the sidecar's examples and end-to-end tests:
//   GET /orders/:id   5 Redis GETs and 1 SET; every 10th id fails (a Redis
//                     WRONGTYPE error, answered 500), every 20th is slow
//                     (a 50 ms BLPOP)
//   GET /healthz
// Environment: HOST (127.0.0.1; 0.0.0.0 in its image), PORT (3000),
// REDIS_URL (redis://127.0.0.1:6379), SERVICE_NAME, TELEMETRY (see
// telemetry.js).
// Runs under Node (`node server.js`) and Bun (`bun server.js`).
const { logger, provider, exporter, flushAndExit } = require('./telemetry');
const http = require('node:http');
const Redis = require('ioredis');

const redisURL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const redis = new Redis(redisURL);
const blocking = new Redis(redisURL); // BLPOP holds its connection

async function order(id) {
  const keys = ['order', 'customer', 'cart', 'stock', 'price'].map((k) => `${k}:${id}`);
  const values = [];
  for (const k of keys) values.push(await redis.get(k));
  await redis.set(`seen:${id}`, String(Date.now()));
  if (id % 20 === 3) await blocking.blpop(`queue:${id}`, 0.05);
  if (id % 10 === 7) {
    await redis.set(`str:${id}`, 'x');
    await redis.hget(`str:${id}`, 'field'); // WRONGTYPE: rejects
  }
  return { id, values };
}

const server = http.createServer(async (req, res) => {
  const start = process.hrtime.bigint();
  let status = 200;
  let body;
  try {
    const m = /^\/orders\/(\d+)$/.exec(req.url);
    if (req.url === '/healthz') body = { ok: true };
    else if (m) body = await order(Number(m[1]));
    else [status, body] = [404, { error: 'not found' }];
  } catch (err) {
    status = 500;
    body = { error: err.message };
    logger.error({ err, url: req.url }, 'request failed');
  }
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
  const responseTime = Number(process.hrtime.bigint() - start) / 1e6;
  logger.info({ req: { method: req.method, url: req.url }, res: { statusCode: status }, responseTime }, 'request completed');
});

// Bench only (bench/appcost): with APPCOST_MEMORY_FILE set, SIGUSR2 runs a
// full garbage collection and appends to that file, as a JSON line, the
// process's RSS and the bytes its objects still hold (the JavaScript heap
// and the memory outside it, such as Buffers' contents): the app's memory
// apart from where the collector's sawtooth happens to stand. Under Node it
// needs `node --expose-gc`. Installed before the server listens, so that it
// is in place once the app answers.
if (process.env.APPCOST_MEMORY_FILE) {
  const fs = require('node:fs');
  const bun = typeof Bun !== 'undefined';
  const gc = bun ? () => Bun.gc(true) : global.gc;
  if (typeof gc !== 'function') throw new Error('APPCOST_MEMORY_FILE: run node with --expose-gc');
  process.on('SIGUSR2', () => {
    gc();
    gc(); // what finalizers of the first collection let go
    const m = process.memoryUsage();
    // Bun's heapUsed (JSC's heap size) counts the external memory already.
    const heap = bun ? m.heapUsed : m.heapUsed + m.external;
    fs.appendFileSync(process.env.APPCOST_MEMORY_FILE, JSON.stringify({ rss: m.rss, heap }) + '\n');
  });
}

server.listen(Number(process.env.PORT || 3000), process.env.HOST || '127.0.0.1', () => {
  logger.info({ port: server.address().port }, 'listening');
});

async function stop() {
  server.close();
  // Exports the spans still batched; an exporter that fails (OTLP's
  // "Concurrent export limit reached" behind a slow receiver) must not keep
  // the app from exiting.
  await provider.shutdown().catch((err) => logger.error({ err }, 'exporting the last spans failed'));
  redis.disconnect();
  blocking.disconnect();
  logger.info({ droppedSpans: exporter.droppedSpans }, 'stopped');
  flushAndExit(0);

}
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
