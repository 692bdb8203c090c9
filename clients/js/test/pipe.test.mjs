import test from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const fixture = (f) => fileURLToPath(new URL(`./fixtures/${f}`, import.meta.url));

// writer | reader through a real pipe (the shell's), under this runtime.
async function pipeline(mode, nLogs, nSpans) {
  const { stdout, stderr } = await run('/bin/sh', ['-c', '"$0" "$1" "$3" "$4" "$5" | "$0" "$2"', process.execPath, fixture('pipe-writer.mjs'), fixture('pipe-reader.mjs'), mode, String(nLogs), String(nSpans)], { maxBuffer: 1 << 20 });
  return { ...JSON.parse(stdout), ...JSON.parse(stderr.trim().split('\n').pop()) };
}

for (const mode of ['shared-sync', 'shared-async', 'processor-sync', 'processor-async']) {
  test(`${mode}: heavy logging and span lines share pino's destination on a pipe without a torn line`, async () => {
    const nLogs = 4000;
    const nSpans = 3000;
    const r = await pipeline(mode, nLogs, nSpans);
    assert.equal(r.bad, 0, `torn lines, e.g. ${r.badSample}`);
    assert.equal(r.logs, nLogs);
    assert.equal(r.dupLogs, 0);
    assert.equal(r.dupSpans, 0);
    assert.equal(r.spans + r.droppedSpans, nSpans, 'every span arrived or was counted as dropped');
    if (mode.endsWith('-sync')) assert.equal(r.droppedSpans, 0, 'a synchronous destination never congests');
  });
}
