import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parquetReadObjects } from 'hyparquet';
import { createEstimator } from '../../src/advantage/index.ts';
import { buildBatch } from '../../src/export/index.ts';
import { startStandIn } from '../policy/openai-stand-in.ts';
import { smallRun } from './fixtures.ts';

const BIN = fileURLToPath(new URL('../../bin/trace-rl.js', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], onLine?: (line: string) => void): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    createInterface({ input: child.stdout }).on('line', (l) => {
      stdout += l + '\n';
      onLine?.(l);
    });
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('trace-rl export writes the step as Parquet equal to the library’s rows; bad input is one stderr line, exit 2', async () => {
  const run = await smallRun();
  const out = join(mkdtempSync(join(tmpdir(), 'trace-cli-')), 'step0.parquet');
  const [ok, badStep, badFormat] = await Promise.all([
    cli(['export', run.dir, '--step', '0', '--format', 'verl', '--out', out, '--estimator', 'tree-grpo']),
    cli(['export', run.dir, '--step', '5', '--format', 'verl', '--out', out + '.x']),
    cli(['export', run.dir, '--format', 'csv', '--out', out + '.y']),
  ]);
  assert.equal(ok.code, 0, ok.stderr);
  // The embedded policy samples no tokens: its rows are said to carry no log-probabilities.
  assert.match(ok.stderr, /^trace-rl export: none of the \d+ rows has rollout log-probabilities matched to its token ids/);
  const summary = JSON.parse(ok.stdout) as { rows: number; estimator: string; container: string; warning?: string };
  assert.ok(summary.warning?.startsWith('none of the'));
  assert.equal(summary.estimator, 'tree-grpo');
  assert.equal(summary.container, 'parquet');
  const rows = await parquetReadObjects({ file: new Uint8Array(readFileSync(out)).buffer });
  const expected = buildBatch(run.trees, { step: 0, estimator: createEstimator('tree-grpo'), render: run.render }).rows;
  assert.equal(rows.length, summary.rows);
  assert.deepEqual(
    rows.map((r) => r.leaf_id),
    expected.map((r) => r.leaf_id),
  );
  assert.deepEqual(
    rows.map((r) => r.response_ids),
    expected.map((r) => r.response_ids),
  );
  assert.deepEqual(
    rows.map((r) => r.prompt_ids),
    expected.map((r) => r.prompt_ids),
  );
  assert.deepEqual(
    rows.map((r) => r.advantages),
    expected.map((r) => r.advantages),
  );
  for (const [bad, pattern] of [
    [badStep, /--step 5: .* has steps 0–0/],
    [badFormat, /--format csv: choose one of verl, trl, jsonl, trl-jsonl, trie/],
  ] as const) {
    assert.equal(bad.code, 2);
    assert.equal(bad.stdout, '');
    assert.match(bad.stderr, pattern);
    assert.equal(bad.stderr.trim().split('\n').length, 1);
  }
  assert.ok(!existsSync(out + '.x'));
});

test('trace-rl export --tokenizer qwen3 --chat-template: Qwen3 ids of the chat-framed prompt; bad tokenizer options are one stderr line, exit 2', async () => {
  const run = await smallRun();
  const dir = mkdtempSync(join(tmpdir(), 'trace-cli-'));
  const [ok, unknown, noChat] = await Promise.all([
    cli(['export', run.dir, '--format', 'jsonl', '--out', join(dir, 'q.jsonl'), '--tokenizer', 'qwen3', '--chat-template', '--thinking', 'off']),
    cli(['export', run.dir, '--format', 'jsonl', '--out', join(dir, 'x.jsonl'), '--tokenizer', 'gpt2']),
    cli(['export', run.dir, '--format', 'jsonl', '--out', join(dir, 'y.jsonl'), '--thinking', 'off']),
  ]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal((JSON.parse(ok.stdout) as { tokenizer: string }).tokenizer, 'qwen3+chat-template');
  const { loadQwen3Tokenizer } = await import('../../src/tokens/index.ts');
  const qwen = loadQwen3Tokenizer().tokenizer;
  const row = JSON.parse(readFileSync(join(dir, 'q.jsonl'), 'utf8').split('\n')[0]!) as {
    prompt_ids: number[];
    prompt_text: string;
    response_ids: number[];
    response_text: string;
  };
  assert.ok(row.prompt_text.startsWith('<|im_start|>user\n') && row.prompt_text.endsWith('<|im_start|>assistant\n<think>\n\n</think>\n\n'), row.prompt_text);
  assert.deepEqual(row.prompt_ids, qwen.encode(row.prompt_text));
  assert.equal(qwen.decode(row.response_ids), row.response_text);
  for (const [bad, pattern] of [
    [unknown, /unknown tokenizer "gpt2"; choose one of: bytes, codepoints, hf:DIR, qwen3, server/],
    [noChat, /add --chat-template/],
  ] as const) {
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, pattern);
    assert.equal(bad.stderr.trim().split('\n').length, 1);
  }
});

const TOKEN = 'rollout-control-token-0123456789';

test('trace-rl rollout against a real HTTP server: batch, waiting (file and URL), POST /weights releases it, done', async () => {
  const server = await startStandIn();
  const out = join(mkdtempSync(join(tmpdir(), 'trace-cli-')), 'svc');
  const tokenFile = join(mkdtempSync(join(tmpdir(), 'trace-token-')), 'control-token');
  writeFileSync(tokenFile, `${TOKEN}\n`);
  try {
    const events: Array<Record<string, unknown>> = [];
    const posted: number[] = [];
    const run = await cli(
      [
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
        '--listen',
        '0',
        '--control-token-file',
        tokenFile,
        '--format',
        'trl',
        '--steps',
        '2',
        '--pool',
        '4',
        '--budget',
        '8',
        '--set',
        'env.questions=300',
      ],
      (line) => {
        const e = JSON.parse(line) as Record<string, unknown>;
        events.push(e);
        if (e.event === 'waiting') {
          assert.equal(e.file, join(out, `weights-step-${e.step}.ready`));
          posted.push(e.step as number);
          void fetch(String(e.url), {
            method: 'POST',
            body: JSON.stringify({ step: e.step }),
            headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
          });
        }
      },
    );
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(
      events.map((e) => e.event),
      ['batch', 'waiting', 'weights', 'batch', 'done'],
    );
    assert.deepEqual(posted, [0]);
    for (const e of events.filter((x) => x.event === 'batch')) {
      const rows = await parquetReadObjects({ file: new Uint8Array(readFileSync(String(e.file))).buffer });
      assert.equal(rows.length, e.rows);
      assert.ok('completion_ids' in rows[0] && 'tool_mask' in rows[0], 'TRL-shaped rows');
    }
  } finally {
    await server.close();
  }
});
