/**
 * The late world profile's measured promises, with this bench's contrast measure (contrast.ts), so
 * they live beside it; the profile's unit tests are test/env/world-late.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { worldMeta } from '../../src/env/index.ts';
import { greedyAccuracy } from '../../src/eval/index.ts';
import { buildComponents, parseTrainConfig } from '../../src/train/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { contrastTrees, openProfile } from './contrast.ts';

/**
 * The profile's two promises, on real components (warm start fitted here, in a private cache; a
 * 300-question world to keep the fit short): a sparse start — held-out greedy success of the warm start
 * in [0.05, 0.32] and below the default world's — and late contrast — with k = 6 continuations from
 * every prefix of 24 bridge questions, the open variance two turns in (V̂(1 − V̂) of each rollout's
 * depth-2 prefix, 0 once it has ended; contrast.ts) is at least half of depth 0's, and more
 * than on the default world's bridge questions (its learnable kind: the default's comparisons end in a
 * pick the features cannot decide, so they are left out of the contrast). Half: most of the outcome is
 * then decided by choices after turn 2, which is what the profile is for. Measured (the run is seeded, so it
 * repeats): late 1.09, default 0.40; greedy success late 0.083 (5 of 60 held-out questions), default
 * 0.35. (On 500 questions and 40 bridge questions, as first written and twice the CPU: late 0.64,
 * default 0.42; greedy success late 0.10, default 0.44.)
 * The 1,500-question bench (docs/experiments/2026-12-01-late-world.md) reads 0.99 against 0.47.
 */
test('late profile: sparse warm start and contrast after turn 2, against the default world', { timeout: 900_000 }, async (t) => {
  const cache = mkdtempSync(join(tmpdir(), 'world-late-'));
  try {
    const measure = async (profile: 'default' | 'late') => {
      const config = parseTrainConfig({ env: { questions: 300, world: { profile } } });
      const parts = await buildComponents(config, { cacheDir: cache });
      const acc = await greedyAccuracy({ prompts: parts.test, env: parts.env, policy: parts.policy, rng: createRng(1), settings: config.engine });
      const prompts = parts.train.filter((p) => worldMeta(p).kind === 'bridge').slice(0, 24);
      const trees = await contrastTrees({ env: parts.env, policy: parts.policy, prompts, k: 6, rng: createRng(2), maxTurns: config.engine.maxTurns });
      const open = openProfile(trees);
      return { acc, share2: open[2]!.open / open[0]!.open };
    };
    const def = await measure('default');
    const late = await measure('late');
    t.diagnostic(`default ${JSON.stringify(def)}, late ${JSON.stringify(late)}`);
    assert.ok(late.acc >= 0.05 && late.acc <= 0.32, `late greedy success ${late.acc}`);
    assert.ok(late.acc < def.acc, `late ${late.acc} vs default ${def.acc}`);
    assert.ok(late.share2 >= 0.5, `late open share at depth 2: ${late.share2}`);
    assert.ok(late.share2 > def.share2, `late ${late.share2} vs default bridge ${def.share2}`);
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
});
