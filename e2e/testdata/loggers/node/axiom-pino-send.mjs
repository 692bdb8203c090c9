// Sends the lines of a file through the real @axiomhq/pino transport, as
// pino's worker thread would hand them over, to an Axiom at AXIOM_URL
// (the parity test's fake Axiom), then flushes and exits.
//
//	AXIOM_URL=http://127.0.0.1:8080 AXIOM_DATASET=pino node axiom-pino-send.mjs corpus.ndjson
import { readFileSync } from 'node:fs';
import axiomTransport from '@axiomhq/pino';

const stream = await axiomTransport({
  url: process.env.AXIOM_URL,
  dataset: process.env.AXIOM_DATASET,
  token: process.env.AXIOM_TOKEN ?? 'xaat-parity-test',
  onError: (err) => { console.error('ingest failed:', err); process.exitCode = 1; },
});
stream.on('unknown', (line, err) => console.error(`transport dropped a line (${err}): ${line.slice(0, 80)}`));
const closed = new Promise((resolve, reject) => { stream.on('close', resolve); stream.on('error', reject); });
stream.end(readFileSync(process.argv[2]));
await closed;
