import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { RunStore } from '../../src/store/index.ts';
import { LmTrainer, modelFromGguf, trajectorySequence, type LlamaModel } from '../../src/tinylm/index.ts';
import { train } from '../../src/train/index.ts';
import { leaves, turnsTo, type RolloutTree } from '../../src/tree/index.ts';
import { fixture, shortRunConfig, writeTemp } from './fixtures.ts';

/** The largest |recorded log π − trainer log π| over every generated token of every leaf path. */
function maxLogprobGap(trees: readonly RolloutTree[], model: LlamaModel, prompts: Map<string, { id: string; question: string; answers: string[] }>): { gap: number; tokens: number } {
  const { tokenizer } = fixture();
  const trainer = new LmTrainer(model, { batch: 4 });
  const seqs = trees.flatMap((t) => leaves(t).map((leaf) => trajectorySequence(tokenizer, prompts.get(t.promptId)!, turnsTo(t, leaf.id))));
  const lp = trainer.logprobs(seqs);
  let gap = 0;
  let tokens = 0;
  seqs.forEach((s, j) => s.ids.forEach((_, i) => {
    if (s.mask[i] !== 1) return;
    gap = Math.max(gap, Math.abs(s.logprobs[i]! - lp[j]![i]!));
    tokens++;
  }));
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
        assert.ok(turn.tokens.mask.every((m) => m === 1), 'generated tokens only, mask 1');
        assert.equal(tokenizer.decode(turn.tokens.ids), turn.text, `${node.id}: ids spell the text`);
        assert.ok(turn.tokens.logprobs.every((l) => l <= 0));
      }
    }
    assert.ok(turns >= 6, `${turns} turns`);
    assert.ok(t0.some((t) => Object.values(t.nodes).some((n) => n.origin === 'continuation')), 'the strategy branched from prefixes');
    // Step 0 was sampled from the initial weights: every recorded token log-probability, prefixes and
    // continuations alike, is what the trainer computes on the rebuilt sequence (observations masked).
    const before = maxLogprobGap(t0, model, prompts);
    assert.ok(before.tokens > 50 && before.gap < 1e-3, `step 0: gap ${before.gap} over ${before.tokens} tokens`);
    // Step 1 was sampled by the resumed run from the policy snapshot of step 0.
    const nl = ck.indexOf(10);
    const header = JSON.parse(new TextDecoder().decode(ck.subarray(0, nl))) as { sizes: number[] };
    const restored = modelFromGguf(ck.subarray(nl + 1, nl + 1 + header.sizes[0]!));
    const after = maxLogprobGap(store.trees(1), restored, prompts);
    assert.ok(after.tokens > 50 && after.gap < 1e-3, `step 1 vs the step-0 snapshot: ${after.gap}`);
  } finally {
    store.close();
  }
});
