/**
 * `trace-rl diagnose --policy tinker` and `trace-rl eval --policy tinker` through the real CLI against
 * the project's CPU Tinker engine (`trace-rl serve --tinker` on the tiny LM, in a child process),
 * behind a recording proxy that keeps the engine's answers: the diagnosis's text, JSON and page carry
 * the prefix-cache hits the engine reported for its samples; `--set policy.*` reaches the policy
 * (every sample asks at most policy.maxTokensPerTurn tokens); a policy setting is refused as train
 * refuses it, a flag's value under its flag.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { decodeSampleResponse, PROTOBUF } from '../../src/policy/tinker/proto-codec.ts';
import { runCli, startServe } from '../helpers/run-cli.ts';
import { startRecordingProxy, type RecordingProxy } from '../policy/tinker/recording-proxy.ts';
import { runCli as runInProcess } from '../reliability/cli-in-process.ts';
import { fixture, writeTemp } from '../tinylm/fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'tinker-commands-'));
const keyFile = join(dir, 'key');
writeFileSync(keyFile, 'tml-commands-test-key\n');
let child: ChildProcess | undefined;
let proxy: RecordingProxy;

before(async () => {
  // The fixture's world (300 questions, seed 7) is the one its vocabulary was made from.
  const served = await startServe(writeTemp(fixture().model, 'tiny.gguf'), ['--tinker', '--tinker-key-file', keyFile]);
  child = served.child;
  proxy = await startRecordingProxy(served.baseURL.replace(/\/v1$/, ''));
});
after(async () => {
  await proxy?.close();
  child?.kill('SIGTERM');
});

/** The flags both commands take for the fixture's world and a short-turn tinker policy on the engine. */
const tinker = () => [
  '--env',
  'world',
  '--set',
  'env.questions=300',
  '--set',
  'env.seed=7',
  '--policy',
  'tinker',
  '--base-url',
  proxy.url,
  '--api-key-file',
  keyFile,
  '--model',
  'tiny',
  '--set',
  'policy.prompt=question',
  '--set',
  'policy.maxTokensPerTurn=6',
  '--max-turns',
  '2',
  '--quiet',
];

/** The prefix-cache hits the engine reported in its sample results since answer `mark` (protobuf, else JSON). */
function reportedHits(mark: number): number {
  let hits = 0;
  for (const a of proxy.answers.slice(mark)) {
    if (a.path !== '/api/v1/retrieve_future' || a.status !== 200) continue;
    if (a.contentType.startsWith(PROTOBUF)) hits += decodeSampleResponse(new Uint8Array(a.body)).prompt_cache_hit_tokens ?? 0;
    else hits += (JSON.parse(a.body.toString()) as { prompt_cache_hit_tokens?: number }).prompt_cache_hit_tokens ?? 0;
  }
  return hits;
}

/** The prompt tokens of the samples asked since call `mark`, and the most tokens any of them asked to generate. */
function asked(mark: number): { samples: number; promptTokens: number; maxTokens: number } {
  const samples = proxy.calls.slice(mark).filter((c) => c.path === '/api/v1/asample');
  const tokens = (c: (typeof samples)[number]) => (c.body.prompt as { chunks: Array<{ tokens: number[] }> }).chunks.reduce((n, x) => n + x.tokens.length, 0);
  return {
    samples: samples.length,
    promptTokens: samples.reduce((n, c) => n + tokens(c), 0),
    maxTokens: Math.max(...samples.map((c) => (c.body.sampling_params as { max_tokens: number }).max_tokens)),
  };
}

test('diagnose --policy tinker: the JSON, the page and the table carry the prompt tokens sent and the prefix-cache hits the engine reported', async () => {
  const page = join(dir, 'diagnose.html');
  let calls = proxy.calls.length;
  let answers = proxy.answers.length;
  const r = await runCli(['diagnose', ...tinker(), '--prompts', '2', '--k', '3', '--seed', '3', '--json', '--html', page]);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { policy: string; spend: { turns: number }; engine?: Record<string, number> };
  assert.equal(out.policy, 'tinker tiny');
  const sent = asked(calls);
  assert.equal(sent.samples, out.spend.turns, 'one sample per policy call');
  assert.ok(sent.maxTokens <= 6, `--set policy.maxTokensPerTurn=6 reaches the policy: a sample asked ${sent.maxTokens} tokens`);
  const hits = reportedHits(answers);
  // Three rollouts of each prompt share its first-turn prompt: llama.cpp re-uses those tokens.
  assert.ok(hits > 0, 'the engine reported prefix-cache hits');
  assert.deepEqual(out.engine, {
    tinker_prompt_tokens: sent.promptTokens,
    tinker_prompt_shared_tokens: out.engine?.tinker_prompt_shared_tokens,
    tinker_prompt_cache_hit_tokens: hits,
  });
  assert.ok(out.engine!.tinker_prompt_shared_tokens! > 0 && out.engine!.tinker_prompt_shared_tokens! < sent.promptTokens);
  const note = /<li id="prompt-cache">([^<]*)<\/li>/.exec(readFileSync(page, 'utf8'))?.[1];
  assert.match(
    note ?? 'no prompt-cache note on the page',
    new RegExp(
      `^prompt tokens sent to the engine: ${sent.promptTokens}; in the trees' shared prefixes: ${out.engine!.tinker_prompt_shared_tokens} \\([\\d.]+%\\); taken from the engine's prefix cache, as it reports: ${hits} \\(`,
    ),
  );

  // The table ends with the same line, of this run's samples.
  calls = proxy.calls.length;
  answers = proxy.answers.length;
  const text = await runCli(['diagnose', ...tinker(), '--prompts', '2', '--k', '2', '--seed', '4']);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^diagnose: env world, policy tinker tiny: 2 prompts/);
  assert.match(
    text.stdout,
    new RegExp(
      `\\nprompt tokens sent to the engine: ${asked(calls).promptTokens}; in the trees' shared prefixes: [1-9]\\d* \\([\\d.]+%\\); taken from the engine's prefix cache, as it reports: ${reportedHits(answers)} \\(`,
    ),
  );
});

test('eval --policy tinker samples the engine’s base model (no step-size check: nothing is trained) and ends its session', async () => {
  const calls = proxy.calls.length;
  const out = join(dir, 'eval');
  const r = await runCli(['eval', ...tinker(), '--questions', '2', '--out', out, '--json']);
  assert.equal(r.code, 0, r.stderr);
  const result = JSON.parse(r.stdout) as { datasets: Record<string, { n: number; errors: number }> };
  const datasets = Object.values(result.datasets);
  assert.ok(datasets.length > 0 && datasets.every((d) => d.n === 2 && d.errors === 0), r.stdout);
  const sent = asked(calls);
  assert.ok(sent.samples >= 2 && sent.maxTokens <= 6, JSON.stringify(sent));
  // Greedy (eval's default --temperature 0), from the base model: no update ever made sampler weights.
  for (const c of proxy.calls.slice(calls).filter((x) => x.path === '/api/v1/asample'))
    assert.equal((c.body.sampling_params as { temperature: number }).temperature, 0);
  assert.equal(proxy.calls.slice(calls).filter((c) => c.path === '/api/v1/forward_backward' || c.path === '/api/v1/save_weights_for_sampler').length, 0);
  const finished = proxy.calls.slice(calls).filter((c) => /^\/api\/v1\/sessions\/[^/]+\/finish$/.test(c.path));
  assert.deepEqual(
    finished.map((c) => c.body.reason),
    [{ type: 'success' }],
  );
  assert.match(readFileSync(join(out, 'index.html'), 'utf8'), /tiny \(base weights\) sampled through the Tinker API at http:\/\/127\.0\.0\.1:\d+, greedy/);
});

test('policy settings from flags and --set are checked as train checks them, before anything is built; a flag’s value under its flag', async () => {
  const base = ['--env', 'world', '--policy', 'tinker', '--quiet'];
  const cases: Array<[string[], RegExp]> = [
    [[], /config\.policy\.baseUrl: policy\.kind tinker needs policy\.baseUrl \(--base-url\)/],
    [['--base-url', 'notaurl'], /: --base-url notaurl: not an http\(s\) URL/],
    [['--base-url', 'http://127.0.0.1:9', '--base-url', 'http://127.0.0.1:10'], /--base-url given 2 times: a tinker policy samples from one engine/],
    [['--base-url', 'http://127.0.0.1:9', '--mode', 'chat'], /--mode chat is for --policy openai/],
    [['--base-url', 'http://127.0.0.1:9', '--set', 'policy.loraRank=0'], /config\.policy\.loraRank: .*>=1/],
    [
      ['--base-url', 'http://127.0.0.1:9', '--set', 'policy.mode=chat'],
      /config\.policy\.mode: "mode" is not a setting of policy\.kind tinker \(openai takes it\)/,
    ],
    [['--base-url', 'http://127.0.0.1:9', '--set', 'policy.kind=openai'], /--set: policy\.kind openai is not --policy tinker/],
    // A pair replaces the flag's value: what is refused is the pair's, by its path.
    [['--base-url', 'http://127.0.0.1:9', '--set', 'policy.baseUrl=ftp://x'], /config\.policy\.baseUrl: not an http\(s\) URL/],
  ];
  for (const command of ['diagnose', 'eval'])
    for (const [extra, message] of cases) {
      const r = await runInProcess([command, ...base, ...extra]);
      assert.equal(r.code, 2, `${command} ${extra.join(' ')}: ${r.stderr}`);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, message, `${command} ${extra.join(' ')}`);
    }
  // The openai kind's flags still name theirs.
  const openai = await runInProcess(['eval', '--env', 'world', '--policy', 'openai', '--base-url', 'notaurl', '--quiet']);
  assert.match(openai.stderr, /--base-url notaurl: not an http\(s\) URL/);
});
