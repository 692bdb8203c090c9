import test from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { promisify } from 'node:util';
import * as esm from '@sidecarhq/otel-stdout';

const run = promisify(execFile);
const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));

for (const [file, name] of [['require.cjs', 'from require'], ['import.mjs', 'from import']]) {
  test(`${file}: new StdoutSpanExporter() writes span lines to the process's stdout`, async () => {
    const { stdout } = await run(process.execPath, [path.join(fixtures, file)]);
    const lines = stdout.split('\n').filter(Boolean);
    assert.equal(lines.length, 1);
    const span = JSON.parse(lines[0]).resourceSpans[0].scopeSpans[0].spans[0];
    assert.equal(span.name, name);
  });
}

test('require and import give the same exports', () => {
  const cjs = createRequire(import.meta.url)('@sidecarhq/otel-stdout');
  assert.deepEqual(Object.keys(esm).sort(), Object.keys(cjs).sort());
  for (const k of Object.keys(cjs)) assert.equal(esm[k], cjs[k], k);
});

test('the TypeScript declarations type-check against the SDK and pino', { skip: !!process.versions.bun && 'tsc runs under node' }, async () => {
  const tsc = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url));
  await run(process.execPath, [tsc, '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--skipLibCheck', path.join(fixtures, 'types.ts')]);
});
