/**
 * `trace-rl rollout --atropos URL` against the local Atropos trajectory API (test/servers/atropos-api.ts,
 * held to vectors recorded from the real one), with this test playing the trainer over HTTP the way
 * verl-recipe's atropos trainer does (POST /register, then GET /batch in a loop), and the scripted
 * OpenAI-compatible stand-in as the inference server in token mode (ids = code points).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createServer } from 'node:http';
import { spawn, type ChildProcess } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import type { LeafRow } from '../../src/export/index.ts';
import { AtroposClient, AtroposError, atroposGroups, powerOfTwoParts } from '../../src/service/index.ts';
import { RunStore } from '../../src/store/index.ts';
import { codepointTokenizer } from '../../src/tokens/index.ts';
import { BIN } from '../helpers/run-cli.ts';
// The CLI runs in this process (a spawned one costs ~1.5 s of CPU to load); Ctrl-C below needs its own process.
import { runCli as runCliInProcess } from '../reliability/cli-in-process.ts';
import { defaultScript, startStandIn } from '../policy/openai-stand-in.ts';
import { startAtroposApi, type AtroposApi } from '../servers/atropos-api.ts';

const nulls = {
  ref_logprobs: null,
  messages: null,
  generation_params: null,
  inference_logprobs: null,
  overrides: null,
  images: null,
  env_id: null,
  distill_token_ids: null,
  distill_logprobs: null,
};

type Group = { tokens: number[][]; masks: number[][]; scores: number[]; advantages: number[][]; inference_logprobs: number[][] | null; env_id: number | null };

/**
 * Comparative questions ("…, A or B?") are answered A and B in turn, per question, so every tree of two
 * or more leaves holds both rewards whatever order the engine makes its calls in.
 */
function mixedScript() {
  const answers = new Map<string, number>();
  return (conversation: string) => {
    const dialogue = conversation.slice(conversation.lastIndexOf('Question:'));
    const options = /, (.+) or (.+)\?/.exec(dialogue);
    if (!options || !dialogue.includes('<information>')) return defaultScript(conversation);
    const n = answers.get(options[0]) ?? 0;
    answers.set(options[0], n + 1);
    return `<answer>${options[1 + (n % 2)]}</answer>`;
  };
}

/** The trainer's side: register, then ask for a batch every 20 ms until stopped; what it was served. */
function trainer(api: AtroposApi, batchSize: number, registerAfterMs = 0) {
  const served: Group[][] = [];
  let stop = false;
  const done = (async () => {
    await sleep(registerAfterMs);
    const reg = {
      wandb_group: 'g',
      wandb_project: 'p',
      batch_size: batchSize,
      max_token_len: 4096,
      checkpoint_dir: 'ckpt',
      save_checkpoint_interval: 0,
      starting_step: 0,
      num_steps: 10,
    };
    await fetch(`${api.url}/register`, { method: 'POST', body: JSON.stringify(reg), headers: { 'content-type': 'application/json' } });
    while (!stop) {
      const { batch } = (await (await fetch(`${api.url}/batch`)).json()) as { batch: Group[] | null };
      if (batch) served.push(batch);
      await sleep(20);
    }
  })();
  return {
    served,
    stop: async () => {
      stop = true;
      await done;
    },
  };
}

/** `trace-rl …args` through the real CLI in this process, with `env` over the environment for the call. */
async function runCli(args: readonly string[], stdin = '', env: Record<string, string> = {}) {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    return await runCliInProcess(args, stdin);
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

const ROLLOUT = ['--policy', 'openai', '--mode', 'tokens', '--tokenizer', 'codepoints', '--format', 'jsonl', '--steps', '2', '--pool', '4', '--budget', '8'];
const SETTINGS = ['--set', 'env.questions=300', '--set', 'engine.retry.baseDelayMs=1', '--set', 'advantageScale=none'];

function rowsOf(out: string, step: number): LeafRow[] {
  return readFileSync(join(out, 'batches', `step-${step}.jsonl`), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as LeafRow);
}

function events(stdout: string): Array<Record<string, unknown>> {
  return stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

test('rollout --atropos (turns): every model turn is a group of one whose ids decode, whose mask is that turn and whose score and advantages are the stored ones', async () => {
  const server = await startStandIn({ script: mixedScript() });
  const api = await startAtroposApi();
  // The trainer registers late: nothing may be pushed before it has registered and asked for a batch.
  const t = trainer(api, 4, 700);
  const out = join(mkdtempSync(join(tmpdir(), 'trace-atropos-')), 'run');
  try {
    const run = await runCli(['rollout', ...ROLLOUT, '--base-url', server.url, '--out', out, '--atropos', api.url, ...SETTINGS]);
    assert.equal(run.code, 0, run.stderr);
    const ev = events(run.stdout);
    assert.deepEqual(
      ev.map((e) => e.event),
      ['batch', 'atropos', 'taken', 'batch', 'atropos', 'done'],
    );
    const paths = api.requests.map((r) => `${r.method} ${r.path}`);
    const firstPush = paths.indexOf('POST /scored_data_list');
    assert.ok(paths.indexOf('POST /register') >= 0 && paths.indexOf('POST /register') < firstPush, 'the trainer registered before any data');
    assert.ok(paths.indexOf('GET /batch') < firstPush);
    assert.ok(paths.lastIndexOf('POST /disconnect-env') > paths.lastIndexOf('POST /scored_data_list'), 'it says goodbye after its last push');
    const registered = api.requests.filter((r) => r.path === '/register-env').at(-1)!.body as Record<string, unknown>;
    assert.deepEqual(registered, { max_token_length: 4096, desired_name: 'trace-rl', weight: 1, group_size: 1 });

    const store = RunStore.open(out, { readonly: true });
    const accepted = api.accepted as unknown as Group[];
    let at = 0;
    for (const step of [0, 1]) {
      const rows = rowsOf(out, step);
      const pushed = ev.find((e) => e.event === 'atropos' && e.step === step)!;
      const stored = new Map(store.treeRecords(step).flatMap((r) => r.advantages.leaves.map((l) => [l.id, l] as const)));
      const expected = rows.flatMap((r) => r.turn_starts.map((_, j) => ({ row: r, j })));
      assert.equal(pushed.groups, expected.length, 'one group per model turn of every exported leaf');
      assert.equal(pushed.sequences, expected.length);
      const groups = accepted.slice(at, at + expected.length);
      at += expected.length;
      assert.deepEqual(
        groups.map((g) => g.env_id),
        groups.map(() => 0),
        'groups of one carry the env id',
      );
      for (const [i, { row, j }] of expected.entries()) {
        const g = groups[i]!;
        assert.equal(g.tokens.length, 1);
        const [tokens, masks, adv] = [g.tokens[0]!, g.masks[0]!, g.advantages[0]!];
        const p = row.prompt_ids.length;
        const end = row.turn_starts[j + 1] ?? row.response_ids.length;
        // ids decode to the text the server saw, up to the end of this turn's sampled tokens.
        assert.ok((row.prompt_text + row.response_text).startsWith(codepointTokenizer.decode(tokens)));
        assert.deepEqual(tokens, [...row.prompt_ids, ...row.response_ids].slice(0, tokens.length));
        const trained = masks.flatMap((m, k) => (m === -100 ? [] : [k - p]));
        const sampled = row.response_mask.flatMap((m, k) => (m === 1 && k >= row.turn_starts[j]! && k < end ? [k] : []));
        assert.deepEqual(trained, sampled, 'the mask is exactly the turn’s sampled tokens');
        assert.ok(
          trained.every((k) => masks[k + p] === tokens[k + p]),
          'a trained position holds its token id',
        );
        assert.equal(tokens.length, p + sampled.at(-1)! + 1, 'the sequence ends with the turn’s last sampled token');
        const turnAdvantage = stored.get(row.leaf_id)!.turns[j]!;
        assert.equal(g.scores[0], turnAdvantage, 'score = the stored advantage of the turn');
        assert.ok(adv.every((a, k) => (masks[k] === -100 ? a === 0 : a === turnAdvantage)));
        assert.ok(
          g.inference_logprobs![0]!.every((l, k) => (masks[k] === -100 ? l === 1 : l < 0)),
          'the server’s log-probabilities on trained tokens, 1.0 elsewhere',
        );
      }
      assert.ok(new Set(groups.map((g) => g.scores[0])).size > 1, 'the step has distinct advantages');
    }
    assert.equal(at, accepted.length, 'nothing else was pushed');
    store.close();
    // The trainer was served whole batches of the pushed groups, in order.
    await sleep(100);
    const served = t.served.flat();
    assert.ok(served.length >= 4 && served.length % 4 === 0);
    assert.deepEqual(served, accepted.slice(0, served.length));
    // export reads the run's own tokenizer options (--mode tokens --tokenizer codepoints): no flags needed,
    // and the rows are the batch file's.
    const exported = join(out, '..', 'step-1.jsonl');
    const ex = await runCli(['export', out, '--format', 'jsonl', '--out', exported]);
    assert.equal(ex.code, 0, ex.stderr);
    assert.equal(readFileSync(exported, 'utf8'), readFileSync(join(out, 'batches', 'step-1.jsonl'), 'utf8'));
  } finally {
    await t.stop();
    await api.close();
    await server.close();
  }
});

test('rollout --atropos-layout trees: a tree is sent as power-of-two groups of whole rows (observations masked, the rows’ advantages); the API packs them', async () => {
  const server = await startStandIn({ script: mixedScript() });
  const api = await startAtroposApi();
  const t = trainer(api, 8);
  const out = join(mkdtempSync(join(tmpdir(), 'trace-atropos-')), 'run');
  try {
    // 3 prompts and 10 trajectories a step: trees of 3 and 4 leaves, sent as groups of 2 + 1 and 4.
    const run = await runCli([
      'rollout',
      ...ROLLOUT,
      '--pool',
      '3',
      '--budget',
      '10',
      '--base-url',
      server.url,
      '--out',
      out,
      '--atropos',
      api.url,
      '--atropos-layout',
      'trees',
      ...SETTINGS,
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /warning: --atropos-layout trees sends whole rows, observations inside them; verl-recipe's atropos trainer trains every token/);
    const accepted = api.accepted as unknown as Group[];
    const expected = [0, 1].flatMap((step) => atroposGroups(rowsOf(out, step), 'trees'));
    assert.equal(accepted.length, expected.length);
    const sizes = new Set<number>();
    const treeSizes = new Set<number>();
    let at = 0;
    for (const step of [0, 1]) {
      const rows = rowsOf(out, step);
      const trees = [...new Set(rows.map((r) => r.tree_id))];
      for (const tree of trees) {
        const leaves = rows.filter((r) => r.tree_id === tree);
        const parts = powerOfTwoParts(leaves.length);
        treeSizes.add(leaves.length);
        let leaf = 0;
        for (const size of parts) {
          const g = accepted[at++]!;
          sizes.add(size);
          assert.equal(g.tokens.length, size);
          assert.equal(g.env_id, size === 1 ? 0 : null, 'only groups of the registered size (1) carry the env id: the API would hold back others');
          for (let s = 0; s < size; s++) {
            const row = leaves[leaf++]!;
            const p = row.prompt_ids.length;
            assert.equal(codepointTokenizer.decode(g.tokens[s]!), row.prompt_text + row.response_text);
            assert.deepEqual(g.masks[s], [...row.prompt_ids.map(() => -100), ...row.response_ids.map((id, k) => (row.response_mask[k] === 1 ? id : -100))]);
            assert.deepEqual(g.advantages[s]!.slice(p), row.advantages);
            assert.equal(g.scores[s], row.reward);
          }
        }
        assert.equal(leaf, leaves.length);
      }
    }
    assert.ok(treeSizes.size > 1, `trees of several sizes (${[...treeSizes].join(', ')})`);
    assert.ok(sizes.size > 1, `groups of several sizes (${[...sizes].join(', ')})`);
    assert.deepEqual(
      accepted,
      expected.map((g) => ({ ...nulls, ...g, env_id: g.tokens.length === 1 ? 0 : null })) as unknown as Group[],
      'exactly the groups of the stored rows',
    );
    await sleep(100);
    assert.ok(t.served.length > 0, 'the API formed batches from them');
    for (const batch of t.served)
      assert.equal(
        batch.reduce((n, g) => n + g.tokens.length, 0),
        8,
      );
  } finally {
    await t.stop();
    await api.close();
    await server.close();
  }
});

test('rollout --atropos: the API key goes as a Bearer header and nowhere else; a refused key is one stderr line and exit 1', async () => {
  const server = await startStandIn();
  const key = 'atropos-secret-7f3a';
  const api = await startAtroposApi({ key });
  const reg = {
    wandb_group: 'g',
    wandb_project: 'p',
    batch_size: 2,
    max_token_len: 4096,
    checkpoint_dir: 'c',
    save_checkpoint_interval: 0,
    starting_step: 0,
    num_steps: 1,
  };
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
  await fetch(`${api.url}/register`, { method: 'POST', body: JSON.stringify(reg), headers });
  await fetch(`${api.url}/batch`, { headers });
  const root = mkdtempSync(join(tmpdir(), 'trace-atropos-'));
  try {
    const args = ['rollout', ...ROLLOUT, '--steps', '1', '--base-url', server.url, '--atropos', api.url, ...SETTINGS, '--quiet'];
    const ok = await runCli([...args, '--out', join(root, 'ok')], '', { TRACE_RL_ATROPOS_API_KEY: key });
    assert.equal(ok.code, 0, ok.stderr);
    const fromCli = api.requests.filter((r) => r.path !== '/register' && r.authorization !== undefined);
    assert.ok(fromCli.length >= 3 && fromCli.every((r) => r.authorization === `Bearer ${key}`));
    assert.ok(!server.bodies.some((b) => JSON.stringify(b).includes(key)), 'not sent to the inference server');
    for (const file of walk(join(root, 'ok'))) assert.ok(!readFileSync(file).includes(key), `${file} holds no key`);
    assert.ok(!ok.stdout.includes(key) && !ok.stderr.includes(key));

    const bad = await runCli([...args, '--out', join(root, 'bad')], '', { TRACE_RL_ATROPOS_API_KEY: 'wrong' });
    assert.equal(bad.code, 1);
    const lines = bad.stderr.trim().split('\n');
    assert.equal(lines.length, 1, bad.stderr);
    assert.match(lines[0]!, /Atropos API failed: GET http:\/\/127\.0\.0\.1:\d+\/info: HTTP 401.*TRACE_RL_ATROPOS_API_KEY/);
    assert.equal(events(bad.stdout).at(-1)!.status, 'failed');
  } finally {
    await api.close();
    await server.close();
  }
});

test('rollout --atropos: usage errors are one line and exit 2', async () => {
  for (const [extra, pattern] of [
    [['--atropos', 'http://127.0.0.1:1', '--listen', '0'], /--atropos replaces --listen/],
    [['--atropos', 'http://127.0.0.1:1', '--atropos-layout', 'leaves'], /--atropos-layout leaves: choose one of turns, trees/],
    [['--atropos', 'ftp://x'], /use an http:\/\/ or https:\/\/ URL/],
    [['--atropos-layout', 'trees'], /need --atropos URL/],
  ] as const) {
    const run = await runCli([
      'rollout',
      ...ROLLOUT,
      '--base-url',
      'http://127.0.0.1:1/v1',
      '--out',
      join(mkdtempSync(join(tmpdir(), 'trace-atropos-')), 'x'),
      ...extra,
    ]);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, pattern);
    assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
  }
});

test('AtroposClient: retries a failing API a bounded number of times, refuses an oversized answer at once, and stops waiting when aborted', async () => {
  let calls = 0;
  let mode: 'fail' | 'huge' | 'wait' = 'fail';
  const http = createServer((req, res) => {
    calls++;
    if (mode === 'fail') {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end('{"detail":"busy"}');
    } else if (mode === 'huge') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"batch_size":4,"pad":"${'x'.repeat(4096)}"}`);
    } else {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"batch_size":-1,"max_token_len":-1}');
    }
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  try {
    const client = new AtroposClient({ url, attempts: 3, baseDelayMs: 1, maxResponseBytes: 1024, pollMs: 10 });
    await assert.rejects(client.register(), (e: unknown) => e instanceof AtroposError && /GET .*\/info: HTTP 503: \{"detail":"busy"\}/.test(e.message));
    assert.equal(calls, 3, 'three attempts, then the error');

    mode = 'huge';
    calls = 0;
    await assert.rejects(client.register(), (e: unknown) => e instanceof AtroposError && /more than 1024 bytes/.test(e.message));
    assert.equal(calls, 1, 'an oversized answer is not asked for again');

    mode = 'wait';
    const waits: string[] = [];
    const waiting = new AtroposClient({ url, pollMs: 10, onWait: (m) => waits.push(m) });
    const stop = new AbortController();
    const pending = waiting.register(stop.signal);
    await sleep(100);
    stop.abort();
    await assert.rejects(pending);
    assert.match(waits[0]!, /waiting at http:\/\/127\.0\.0\.1:\d+ for a trainer to register/);
    assert.equal(waits.length, 1, 'said once, not per poll');
  } finally {
    http.closeAllConnections();
    await new Promise<void>((r) => http.close(() => r()));
  }
});

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

/** `trace-rl rollout …` as a child whose stdout events the test reacts to (`onEvent`); resolves with its exit and output. */
function rolloutChild(
  args: string[],
  onEvent: (e: Record<string, unknown>, child: ChildProcess) => void,
): Promise<{ code: number | null; events: Array<Record<string, unknown>>; stderr: string }> {
  const child = spawn(process.execPath, [BIN, 'rollout', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const seen: Array<Record<string, unknown>> = [];
  let stderr = '';
  let buffered = '';
  child.stderr.on('data', (d) => (stderr += d));
  child.stdout.on('data', (d: Buffer) => {
    const lines = (buffered + d.toString()).split('\n');
    buffered = lines.pop()!;
    for (const line of lines.filter(Boolean)) {
      const e = JSON.parse(line) as Record<string, unknown>;
      seen.push(e);
      onEvent(e, child);
    }
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, events: seen, stderr })));
}

/** A trainer that registers and starts (one GET /batch), then takes nothing until told. */
async function idleTrainer(api: AtroposApi, batchSize: number, numSteps: number): Promise<void> {
  const reg = {
    wandb_group: 'g',
    wandb_project: 'p',
    batch_size: batchSize,
    max_token_len: 4096,
    checkpoint_dir: 'c',
    save_checkpoint_interval: 0,
    starting_step: 0,
    num_steps: numSteps,
  };
  await fetch(`${api.url}/register`, { method: 'POST', body: JSON.stringify(reg), headers: { 'content-type': 'application/json' } });
  await fetch(`${api.url}/batch`);
}

test('rollout --atropos: Ctrl-C while the trainer has not taken step 0 exits 130 with the acknowledgement noted in the run; --resume pushes no group twice and goes on', async () => {
  const server = await startStandIn({ script: mixedScript() });
  const api = await startAtroposApi();
  await idleTrainer(api, 2, 100);
  const out = join(mkdtempSync(join(tmpdir(), 'trace-atropos-')), 'run');
  try {
    const args = [...ROLLOUT, '--base-url', server.url, '--atropos', api.url, ...SETTINGS, '--quiet'];
    // The trainer takes nothing, so after step 0's push the service waits; Ctrl-C then.
    const stopped = await rolloutChild([...args, '--out', out], (e, child) => {
      if (e.event === 'atropos' && e.step === 0) child.kill('SIGINT');
    });
    assert.equal(stopped.code, 130, stopped.stderr);
    assert.deepEqual(
      stopped.events.map((e) => e.event),
      ['batch', 'atropos', 'done'],
    );
    assert.equal(stopped.events.at(-1)!.status, 'stopped');
    assert.match(stopped.stderr, new RegExp(`continue with trace-rl rollout --resume ${out.replace(/[./]/g, '\\$&')}`));
    const step0 = atroposGroups(rowsOf(out, 0), 'turns');
    const store = RunStore.open(out, { readonly: true });
    assert.deepEqual(
      store.note('atropos.step.0'),
      { groups: step0.length, acknowledged: step0.length, taken: false },
      'what the API acknowledged, noted in the run',
    );
    assert.equal(store.lastStep(), 0);
    store.close();
    assert.equal(api.accepted.length, step0.length);

    // The trainer takes the queued sequences; the resumed run waits for that, pushes step 1 only, and ends.
    for (let i = 0; i < step0.length; i++) await fetch(`${api.url}/batch`);
    const resumed = await runCli(['rollout', '--resume', out, '--atropos', api.url, '--quiet']);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.deepEqual(
      events(resumed.stdout).map((e) => [e.event, e.step]),
      [
        ['taken', 0],
        ['batch', 1],
        ['atropos', 1],
        ['done', undefined],
      ],
    );
    const step1 = atroposGroups(rowsOf(out, 1), 'turns');
    assert.deepEqual(
      (api.accepted as unknown as Group[]).map((g) => g.tokens),
      [...step0, ...step1].map((g) => g.tokens),
      'step 0 once, then step 1: no group twice',
    );
    const after = RunStore.open(out, { readonly: true });
    assert.deepEqual(after.note('atropos.step.0'), { groups: step0.length, acknowledged: step0.length, taken: true });
    assert.equal(after.status(), 'finished');
    after.close();
  } finally {
    await api.close();
    await server.close();
  }
});

test('rollout --atropos: once the trainer has taken all the batches it registered for (num_steps), the run ends cleanly (exit 0) instead of waiting forever', async () => {
  const server = await startStandIn({ script: mixedScript() });
  const api = await startAtroposApi();
  // One training step of two sequences: step 0's push alone fills it.
  await idleTrainer(api, 2, 1);
  const keepTaking = setInterval(() => void fetch(`${api.url}/batch`).catch(() => {}), 20);
  const out = join(mkdtempSync(join(tmpdir(), 'trace-atropos-')), 'run');
  try {
    const run = await runCli(['rollout', ...ROLLOUT, '--steps', '3', '--base-url', server.url, '--out', out, '--atropos', api.url, ...SETTINGS, '--quiet']);
    assert.equal(run.code, 0, run.stderr);
    const ev = events(run.stdout);
    assert.deepEqual(
      ev.map((e) => e.event),
      ['batch', 'atropos', 'trainer-finished', 'done'],
    );
    assert.equal(ev.at(-1)!.status, 'trainer-finished');
    assert.match(run.stderr, /has taken all 1 batches it registered for \(its num_steps\): no later step would be trained, so the run ends after step 0/);
    const store = RunStore.open(out, { readonly: true });
    assert.equal(store.lastStep(), 0);
    store.close();
  } finally {
    clearInterval(keepTaking);
    await api.close();
    await server.close();
  }
});
