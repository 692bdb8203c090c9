// Prints a corpus of pino lines on stdout, one per line, the same on every
// run: real pino 10 under many options (child loggers, duplicate keys,
// serializers, formatters, custom keys and levels, every time function,
// unicode and control characters, values near Axiom's limits). The parity
// test (e2e/pino_parity_test.go) sends these lines through @axiomhq/pino and
// through the sidecar and compares what the fake Axiom stores.
//
//	node pino-corpus.mjs > corpus.ndjson

// Every time function reads Date.now (isoTimeNano also process.hrtime,
// from when pino is loaded): clocks that tick on each call make the corpus
// deterministic.
let clock = 1764504000000;
Date.now = () => clock++;
let hr = 0n;
process.hrtime.bigint = () => (hr += 1_234_567n);
const { default: pino } = await import('pino');

const lines = [];
const sink = { write: (s) => { for (const l of s.split('\n')) if (l) lines.push(l); } };
const base = { pid: 4242, hostname: 'web-1' };
const make = (opts = {}) => pino({ base, ...opts }, sink);

// A fixed stack so the corpus does not depend on where it runs.
const error = (message, extra = {}) => {
  const e = Object.assign(new Error(message), extra);
  e.stack = `Error: ${message}\n    at handler (/app/src/server.js:42:11)\n    at process (node:internal/process:1:1)`;
  return e;
};

const messages = [
  'server listening',
  'request completed',
  '',
  'quote " backslash \\ slash / tab \t newline \n cr \r',
  'control \u0000 \u0001 \u0007 \u001b[31mred\u001b[0m \u001f \u007f',
  'unicode é ü 日本語 العربية 😀 👩‍👩‍👧 \u2028 \u2029 \ufeff',
  'lone surrogates \ud800 \udc00 end',
  '<script>alert("x")</script> & \'',
];

// 1. The default logger at every level, with the usual messages.
{
  const log = make({ level: 'trace' });
  for (const m of messages) {
    for (const lv of ['trace', 'debug', 'info', 'warn', 'error', 'fatal']) log[lv](m);
  }
}

// 2. Objects, errors and serializers.
{
  const log = make({ serializers: { req: (r) => ({ method: r.method, url: r.url, id: r.id }), err: pino.stdSerializers.err } });
  log.info({ req: { method: 'GET', url: '/orders?id=1', id: 'r-1', headers: { secret: 'x' } } }, 'incoming');
  log.error(error('connect ECONNREFUSED', { code: 'ECONNREFUSED' }));
  log.error({ err: error('nested cause', { cause: error('root') }) }, 'failed with cause');
  log.warn({ n: 0, neg: -1.5, big: Number.MAX_SAFE_INTEGER, tiny: 5e-324, huge: 1.7976931348623157e308, t: true, f: false, nil: null }, 'numbers');
  log.info({ arr: [1, 'two', [3, [4]], { five: 5 }], empty: {}, emptyArr: [] }, 'shapes');
  log.info({ deep: JSON.parse('{"a":'.repeat(60) + '1' + '}'.repeat(60)) }, 'deep');
  log.info('interpolated %s %d %o %j', 'str', 42, { o: 1 }, { j: 2 });
  log.info({ date: new Date(0), undef: undefined, fn: () => 1 }, 'dropped and converted values');
  log.info({ '': 'empty key', 'dotted.key': 1, 'sp ace': 2, 'é': 3, '0': 'numeric key', '10': 'ten', __proto__x: 4 }, 'odd keys');
}

// 3. Child loggers and duplicate keys.
{
  const log = make();
  const child = log.child({ module: 'db', requestId: 'r-1' });
  child.info('child line');
  child.info({ module: 'cache' }, 'binding and call key');
  child.child({ module: 'redis', depth: 2 }).warn({ module: 'call' }, 'grandchild');
  log.info({ msg: 'in the object' }, 'as the argument');
  log.info({ msg: 'only in the object' });
  log.info({ level: 'user level' }, 'user level key');
  log.info({ level: 99 }, 'user numeric level key');
  log.info({ time: 'not a date' }, 'user time key');
  log.info({ time: '2026-01-02T03:04:05.678Z' }, 'user time key, a date');
  log.info({ time: 1700000000000 }, 'user time key, epoch ms');
  log.info({ _time: '2026-01-02T03:04:05Z' }, 'user _time key');
  log.info({ pid: 1, hostname: 'other' }, 'base keys again');
  const dup = log.child({ a: 1 }).child({ a: 2 });
  dup.info({ a: 3 }, 'three a');
  for (let i = 0; i < 20; i++) child.child({ iter: i }).info({ iter: i * 10, module: `m${i}` }, `iteration ${i}`);
}

// 4. Formatters: level labels, a GCP-style severity with no level, bindings, log.
{
  make({ formatters: { level: (label) => ({ level: label.toUpperCase() }) } }).error('formatters.level ERROR');
  make({ formatters: { level: (label) => ({ level: label }) } }).warn('formatters.level label');
  const severity = { trace: 'DEBUG', debug: 'DEBUG', info: 'INFO', warn: 'WARNING', error: 'ERROR', fatal: 'CRITICAL' };
  const gcp = make({ messageKey: 'message', formatters: { level: (label) => ({ severity: severity[label] }) } });
  for (const lv of ['debug', 'info', 'warn', 'error', 'fatal']) gcp[lv]({ httpRequest: { status: 500 } }, `gcp ${lv}`);
  make({ formatters: { bindings: () => ({}) } }).info('no bindings');
  make({ formatters: { log: (o) => ({ ...o, wrapped: true }) } }).info({ x: 1 }, 'log formatter');
}

// 5. Keys: messageKey, errorKey, nestedKey; base null; timestamp false.
{
  make({ messageKey: 'message' }).info('message key');
  make({ errorKey: 'error' }).error(error('error key'));
  make({ nestedKey: 'payload' }).info({ a: 1, msg: 'nested msg' }, 'nested key');
  pino({ base: null }, sink).info('base null');
  make({ timestamp: false }).info('timestamp false');
  pino({ base: null, timestamp: false }, sink).info('bare');
  pino({ base: null, formatters: { level: () => ({}) } }, sink).info('no level, base null');
  make({ formatters: { level: () => ({}) } }).info('no level');
}

// 6. Every time function and a custom timestamp key.
{
  for (const [name, fn] of Object.entries(pino.stdTimeFunctions)) {
    make({ timestamp: fn }).info(`time function ${name}`);
  }
  make({ timestamp: () => `,"timestamp":${Date.now()}` }).info('custom timestamp key, epoch ms');
  make({ timestamp: () => `,"timestamp":"${new Date(Date.now()).toISOString()}"` }).info('custom timestamp key, ISO');
  make({ timestamp: () => `,"ts":${Date.now() / 1000}` }).info('zap-style ts key');
  make({ timestamp: () => `,"@timestamp":"${new Date(Date.now()).toISOString()}"` }).info('ECS-style key');
}

// 7. Custom levels.
{
  const log = make({ customLevels: { audit: 35, notice: 33, critical: 65, verbose: 5 }, level: 'verbose' });
  log.audit('custom 35');
  log.notice('custom 33');
  log.critical('custom 65');
  log.verbose('custom 5');
  const only = make({ customLevels: { low: 1, high: 100 }, useOnlyCustomLevels: true, level: 'low' });
  only.low('only custom low');
  only.high('only custom high');
  make({ customLevels: { shout: 45 }, formatters: { level: (label) => ({ level: label }) } }).shout('custom label');
}

// 8. Values near the limits: a 300 KB line, a value just under 1 MB (Axiom's
// field limit), many keys, a long key.
{
  const log = make();
  log.info({ blob: 'x'.repeat(300 * 1024) }, '300 KB value');
  log.info({ blob: 'é'.repeat(150 * 1024) }, '300 KB of two-byte characters');
  log.info({ blob: '\u0001'.repeat(40 * 1024) }, 'escapes six times longer');
  log.info({ blob: 'y'.repeat(1000000 - 1024) }, 'near 1 MB');
  const many = {};
  for (let i = 0; i < 2000; i++) many[`k${i}`] = i;
  log.info(many, '2000 keys');
  log.info({ ['long'.repeat(1000)]: 1 }, 'long key');
}

// 9. A service's traffic: request logs from child loggers, varied by a
// fixed pseudo-random sequence.
{
  let seed = 7;
  const rand = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
  const log = make({ serializers: { err: pino.stdSerializers.err } });
  const methods = ['GET', 'POST', 'PUT', 'DELETE'];
  const routes = ['/api/orders', '/api/users/42', '/health', '/api/search?q=caf%C3%A9&limit=10', '/ünïcødé/路径'];
  for (let i = 0; i < 100; i++) {
    const req = log.child({ reqId: `req-${i}`, route: routes[rand(routes.length)] });
    const status = [200, 200, 201, 204, 301, 400, 404, 500, 503][rand(9)];
    const fields = { method: methods[rand(4)], status, responseTime: rand(5000) / 10, bytes: rand(100000) };
    if (status >= 500) req.error({ ...fields, err: error(`upstream ${status}`, { status }) }, 'request failed');
    else if (status >= 400) req.warn(fields, 'client error');
    else if (rand(3) === 0) req.debug({ ...fields, cache: { hit: rand(2) === 1, key: `k:${rand(1000)}` } }, 'served from cache');
    else req.info(fields, 'request completed');
  }
}

process.stdout.write(lines.join('\n') + '\n');
