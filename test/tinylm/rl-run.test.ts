import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { RunStore } from '../../src/store/index.ts';
import { LmTrainer, modelFromGguf, trajectorySequence, type LlamaModel } from '../../src/tinylm/index.ts';
import { train } from '../../src/train/index.ts';
import { leaves, turnsTo, type RolloutTree } from '../../src/tree/index.ts';
import { runCli } from '../helpers/run-cli.ts';
import { fixture, shortRunConfig, writeTemp } from './fixtures.ts';

/** The model inside a tiny-LM policy snapshot (its JSON header line, then the weights' GGUF first). */
function snapshotModel(snapshot: Uint8Array): LlamaModel {
  const nl = snapshot.indexOf(10);
  const header = JSON.parse(new TextDecoder().decode(snapshot.subarray(0, nl))) as { sizes: number[] };
  return modelFromGguf(snapshot.subarray(nl + 1, nl + 1 + header.sizes[0]!));
}

/** The largest |recorded log π − trainer log π| over every generated token of every leaf path. */
function maxLogprobGap(
  trees: readonly RolloutTree[],
  model: LlamaModel,
  prompts: Map<string, { id: string; question: string; answers: string[] }>,
): { gap: number; tokens: number } {
  const { tokenizer } = fixture();
  const trainer = new LmTrainer(model, { batch: 4 });
  const seqs = trees.flatMap((t) => leaves(t).map((leaf) => trajectorySequence(tokenizer, prompts.get(t.promptId)!, turnsTo(t, leaf.id))));
  const lp = trainer.logprobs(seqs);
  let gap = 0;
  let tokens = 0;
  seqs.forEach((s, j) =>
    s.ids.forEach((_, i) => {
      if (s.mask[i] !== 1) return;
      gap = Math.max(gap, Math.abs(s.logprobs[i]! - lp[j]![i]!));
      tokens++;
    }),
  );
  return { gap, tokens };
}

test('a short tiny-LM RL run: token-exact trees whose log-probabilities are the trainer’s, weights synced every step', async () => {
  const { env, tokenizer, model } = fixture();
  const file = writeTemp(model);
  const out = join(mkdtempSync(join(tmpdir(), 'tinylm-run-')), 'run');
  const config = shortRunConfig(file, 3);
  // Stop after step 0 to read its policy checkpoint, then resume: step 1 starts from the loaded snapshot.
  const stop = new AbortController();
  const first = await train({ out, config, clock: () => 0, signal: stop.signal, onEvent: (e) => e.kind === 'step' && stop.abort() });
  assert.equal(first.status, 'stopped');
  let store = RunStore.open(out, { readonly: true });
  const ck = store.checkpoints(0).policy!;
  store.close();
  const res = await train({ out, resume: true, clock: () => 0 });
  assert.equal(res.status, 'finished');
  store = RunStore.open(out, { readonly: true });
  try {
    const prompts = new Map(env.train.map((p) => [p.id, p]));
    const t0 = store.trees(0);
    let turns = 0;
    for (const tree of t0) {
      for (const node of Object.values(tree.nodes)) {
        const turn = node.turn;
        if (!turn || turn.error) continue;
        turns++;
        assert.ok(turn.tokens, `${node.id} has tokens`);
        assert.equal(turn.tokens.ids.length, turn.tokens.logprobs.length);
        assert.ok(
          turn.tokens.mask.every((m) => m === 1),
          'generated tokens only, mask 1',
        );
        assert.equal(tokenizer.decode(turn.tokens.ids), turn.text, `${node.id}: ids spell the text`);
        assert.ok(turn.tokens.logprobs.every((l) => l <= 0));
      }
    }
    assert.ok(turns >= 6, `${turns} turns`);
    assert.ok(
      t0.some((t) => Object.values(t.nodes).some((n) => n.origin === 'continuation')),
      'the strategy branched from prefixes',
    );
    // Step 0 was sampled from the initial weights: every recorded token log-probability, prefixes and
    // continuations alike, is what the trainer computes on the rebuilt sequence (observations masked).
    const before = maxLogprobGap(t0, model, prompts);
    assert.ok(before.tokens > 50 && before.gap < 1e-3, `step 0: gap ${before.gap} over ${before.tokens} tokens`);
    // Step 1 was sampled by the resumed run from the policy snapshot of step 0.
    const restored = snapshotModel(ck);
    const after = maxLogprobGap(store.trees(1), restored, prompts);
    assert.ok(after.tokens > 50 && after.gap < 1e-3, `step 1 vs the step-0 snapshot: ${after.gap}`);
  } finally {
    store.close();
  }
});

test('trace-rl eval --policy tiny-lm --run DIR samples from the run’s last checkpoint, not from the GGUF it loads into', async () => {
  const { env, model } = fixture();
  // A random model's rollouts all fail, so two RL steps barely move it: to tell the checkpoint's weights
  // from the file's, load them into another model of the same shape (--model), whose own weights differ.
  const other = writeTemp(fixture({}, 2).model);
  const file = writeTemp(model);
  const out = join(mkdtempSync(join(tmpdir(), 'tinylm-run-')), 'run');
  assert.equal((await train({ out, config: shortRunConfig(file, 4), clock: () => 0 })).status, 'finished');
  const store = RunStore.open(out, { readonly: true });
  const ck = store.checkpoints(store.lastStep()).policy!;
  store.close();
  const evalDir = join(out, 'eval');
  const res = await runCli([
    'eval',
    '--policy',
    'tiny-lm',
    '--run',
    out,
    '--model',
    other,
    '--questions',
    '3',
    '--samples',
    '2',
    '--temperature',
    '1',
    '--out',
    evalDir,
    '--json',
    '--quiet',
  ]);
  assert.equal(res.code, 0, res.stderr);
  const records = readFileSync(join(evalDir, 'trajectories.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { tree: RolloutTree });
  assert.equal(records.length, 3);
  const prompts = new Map(env.test.map((p) => [p.id, p]));
  const trees = records.map((r) => r.tree);
  const trained = snapshotModel(ck);
  const own = maxLogprobGap(trees, trained, prompts);
  assert.ok(own.tokens > 10 && own.gap < 1e-3, `the checkpoint's log π: gap ${own.gap} over ${own.tokens} tokens`);
  const base = maxLogprobGap(trees, fixture({}, 2).model, prompts);
  assert.ok(base.gap > 1e-2, `the --model file's own log π differs (${base.gap}), so the test tells the two apart`);
  const wrong = await runCli(['eval', '--policy', 'embedded', '--run', out, '--questions', '1', '--out', join(out, 'eval2'), '--quiet']);
  assert.notEqual(wrong.code, 0);
  assert.match(wrong.stderr, /trained a tiny-lm policy, not embedded; use --policy tiny-lm/);
});
