// Records what real Node loggers print, the same on every run (a clock that
// ticks 1 ms per call), into the directory given as its argument:
// bunyan.ndjson, winston.ndjson (winston's json format with timestamps) and
// ecs.ndjson (winston with @elastic/ecs-winston-format, ECS logging). The
// stdout receiver's formats table and e2e/loggers_test.go are built on them.
//
//	cd e2e/testdata/loggers/node && node record-loggers.mjs ../recorded
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';

let clock = 1764504000000;
Date.now = () => clock++;
const RealDate = Date;
globalThis.Date = class extends RealDate {
  constructor(...args) { super(...(args.length ? args : [RealDate.now()])); }
};
const { default: bunyan } = await import('bunyan');
const { default: winston } = await import('winston');
const { default: ecsFormat } = await import('@elastic/ecs-winston-format');

const dir = process.argv[2];
const collect = () => {
  const lines = [];
  const stream = new Writable({ write(chunk, _enc, cb) { lines.push(chunk.toString()); cb(); } });
  return { lines, stream };
};
const error = (message) => {
  const e = new Error(message);
  e.stack = `Error: ${message}\n    at handler (/app/src/server.js:42:11)`;
  return e;
};

// bunyan
{
  const { lines, stream } = collect();
  const log = bunyan.createLogger({ name: 'shop', hostname: 'web-1', streams: [{ stream, level: 'trace' }] });
  log.fields.pid = 4242;
  log.trace('tick');
  log.info({ method: 'GET', status: 200 }, 'request completed');
  log.warn('disk low');
  log.error(error('connect ECONNREFUSED'), 'connect failed');
  log.fatal('exiting');
  log.child({ module: 'db', pid: 4242 }).info({ module: 'call' }, 'child logger');
  await new Promise((r) => createWriteStream(join(dir, 'bunyan.ndjson')).end(lines.join(''), r));
}

// winston: json with timestamps, the common production setup
{
  const { lines, stream } = collect();
  const log = winston.createLogger({
    level: 'silly',
    format: winston.format.combine(winston.format.timestamp(), winston.format.errors({ stack: true }), winston.format.json()),
    defaultMeta: { service: 'shop' },
    transports: [new winston.transports.Stream({ stream })],
  });
  log.silly('tick');
  log.debug('cache miss', { key: 'user:42' });
  log.http('request', { method: 'GET', status: 200 });
  log.info('request completed', { method: 'GET', status: 200 });
  log.warn('disk low');
  log.error(error('connect ECONNREFUSED'));
  log.child({ module: 'db' }).info('child logger', { module: 'call' });
  await new Promise((r) => log.end(r));
  await new Promise((r) => createWriteStream(join(dir, 'winston.ndjson')).end(lines.join(''), r));
}

// ECS logging: winston with @elastic/ecs-winston-format
{
  const { lines, stream } = collect();
  const log = winston.createLogger({ level: 'debug', format: ecsFormat(), transports: [new winston.transports.Stream({ stream })] });
  log.debug('cache miss', { key: 'user:42' });
  log.info('request completed', { http: { request: { method: 'GET' }, response: { status_code: 200 } } });
  log.warn('disk low');
  log.error('connect failed', { err: error('connect ECONNREFUSED') });
  await new Promise((r) => log.end(r));
  await new Promise((r) => createWriteStream(join(dir, 'ecs.ndjson')).end(lines.join(''), r));
}
