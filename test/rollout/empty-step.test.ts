/**
 * A budget too small for one trajectory: `train` and `rollout` used to run every step with nothing in
 * it (empty batches marked complete, exit 0). Now the step refuses before it starts, naming the budget
 * and the smallest budget that admits one trajectory; that smallest budget does run one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/run-cli.ts';
import { startFlakyServer } from '../service/flaky-server.ts';

const root = mkdtempSync(join(tmpdir(), 'trace-empty-step-'));

test('train --budget-unit tokens --budget 600: exit 2 naming 600 and the smallest budget (896); 896 runs trajectories', async () => {
  const [small, enough] = await Promise.all([
    runCli(['train', '--budget-unit', 'tokens', '--budget', '600', '--steps', '2', '--pool', '4', '--out', join(root, 'small'), '--quiet']),
    runCli(['train', '--budget-unit', 'tokens', '--budget', '896', '--steps', '1', '--pool', '4', '--out', join(root, 'enough'), '--quiet']),
  ]);
  assert.equal(small.code, 2, small.stderr);
  const line = small.stderr.trim().split('\n').at(-1)!;
  assert.match(
    line,
    /^trace-rl: a budget of 600 tokens admits no trajectory \(.*192 tokens each.*512 \(engine\.maxTokensPerTurn\).*\); the smallest budget that admits one is 896 tokens$/,
  );
  assert.doesNotMatch(small.stdout + small.stderr, /finished/);
  assert.equal(enough.code, 0, enough.stderr);
  const metrics = JSON.parse(readFileSync(join(root, 'enough', 'metrics.jsonl'), 'utf8').split('\n')[0]!) as Record<string, number>;
  assert.ok(metrics.cost_trajectories! >= 1, `${metrics.cost_trajectories} trajectories at the smallest budget`);
});

test('rollout --budget-unit turns --budget 1 against a real server: exit 2 naming the budget and the smallest, no batch written', async () => {
  const server = await startFlakyServer({ behaviour: () => 'ok' });
  const out = join(root, 'svc');
  try {
    const r = await runCli([
      'rollout',
      '--policy',
      'openai',
      '--base-url',
      server.url,
      '--extras',
      'vllm',
      '--tokenizer',
      'codepoints',
      '--out',
      out,
      '--quiet',
      '--steps',
      '2',
      '--pool',
      '4',
      '--budget-unit',
      'turns',
      '--budget',
      '1',
    ]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr.trim().split('\n').at(-1)!, /a budget of 1 turns admits no trajectory .*; the smallest budget that admits one is \d+ turns$/);
    assert.equal(server.completions, 0);
    const batches = existsSync(out) ? readdirSync(out).filter((f) => /batch|\.parquet$|\.jsonl$/.test(f) && !f.startsWith('metrics')) : [];
    assert.deepEqual(batches, []);
  } finally {
    await server.close();
  }
});

test('rollout into an existing run folder is refused, pointing to --resume (which names the command that made the run)', async () => {
  const out = join(root, 'existing');
  const made = await runCli(['train', '--steps', '1', '--pool', '4', '--budget', '8', '--out', out, '--quiet']);
  assert.equal(made.code, 0, made.stderr);
  const r = await runCli(['rollout', '--policy', 'openai', '--base-url', 'http://127.0.0.1:9/v1', '--out', out, '--quiet', '--steps', '1']);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /already exists: resume it with --resume .*, or choose another --out/);
  const resumed = await runCli(['rollout', '--resume', out, '--quiet']);
  assert.equal(resumed.code, 2, resumed.stderr);
  assert.match(resumed.stderr, /that run was made by trace-rl train; continue it with trace-rl train --resume/);
});
