/**
 * examples/library/rollout-steps.ts, the library example of docs/export.md, runs against a real
 * local OpenAI-compatible server and writes one readable verl batch per step; and the functions that
 * page documents are exported from the package's entry point.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parquetReadObjects } from 'hyparquet';
import { exporting, service, tokens } from '../../src/index.ts';
import { startFlakyServer } from '../service/flaky-server.ts';
import { outputOf } from '../helpers/run-cli.ts';

const EXAMPLE = fileURLToPath(new URL('../../examples/library/rollout-steps.ts', import.meta.url));

test('the entry point exports what docs/export.md documents', () => {
  for (const name of ['exportRun', 'buildBatch', 'writeBatch', 'serializeBatch', 'trieRecords', 'prepareExport'])
    assert.equal(typeof (exporting as Record<string, unknown>)[name], 'function', name);
  for (const name of ['runRolloutService', 'WeightsGate', 'RolloutStepFailed', 'batchFile', 'batchMetaFile'])
    assert.equal(typeof (service as Record<string, unknown>)[name], 'function', name);
  assert.equal(typeof tokens.loadTranscript, 'function');
});

test('examples/library/rollout-steps.ts: two TRACE steps against a local server, a verl batch each', async () => {
  const server = await startFlakyServer();
  const out = join(mkdtempSync(join(tmpdir(), 'trace-lib-example-')), 'run');
  try {
    const r = await outputOf(
      spawn(process.execPath, ['--import', 'tsx', EXAMPLE, server.url, out], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, TRACE_RL_API_KEY: '', OPENAI_API_KEY: '' },
      }),
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^step 0: \d+ rows \(complete\) in .*step-0\.parquet\nstep 1: \d+ rows \(complete\) in .*step-1\.parquet\nfinished: 2 batches/);
    for (const step of [0, 1]) {
      const file = service.batchFile(out, step, 'verl');
      assert.ok(existsSync(file));
      const rows = await parquetReadObjects({ file: new Uint8Array(readFileSync(file)).buffer });
      assert.ok(rows.length > 0);
      assert.ok('prompt_ids' in rows[0]! && 'response_mask' in rows[0]!, 'verl-shaped rows');
    }
    assert.equal(readFileSync(join(out, 'metrics.jsonl'), 'utf8').trim().split('\n').length, 2);
  } finally {
    await server.close();
  }
});
