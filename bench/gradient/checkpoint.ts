import { createHash } from 'node:crypto';
import { EmbeddedPolicy } from '../../src/policy/index.ts';
import { buildComponents, parseTrainConfig } from '../../src/train/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { cachedReference, referenceGradient, type ReferenceGradient } from './reference.ts';
import { ScoreGradients } from './score-gradient.ts';

/**
 * The gradient bench's fixed checkpoint and its reference gradients, shared by run.ts (update
 * directions) and root-value.ts (which root value tracks signal): the main job's configuration at
 * step 0 (world env seed 7, BC warm start), `prompts` fixed training prompts and a disjoint set of as
 * many, each with the reference ∇J from `rollouts` independent rollouts per prompt.
 */
export async function gradientCheckpoint(o: { prompts: number; rollouts: number; budget: number; cache?: string; log: (msg: string) => void }) {
  const base = parseTrainConfig({ pool: o.prompts, strategy: { name: 'grpo', budget: o.budget } });
  const parts = await buildComponents(base);
  const policy = parts.trainable as EmbeddedPolicy;
  const maxDepth = base.engine.maxTurns;
  const same = parts.train.slice(0, o.prompts);
  const disjoint = parts.train.slice(o.prompts, 2 * o.prompts);
  const grads = new ScoreGradients(policy);
  o.log(`checkpoint ready; ${o.prompts} prompts, ${o.rollouts} reference rollouts each (same and disjoint sets)`);
  const refRng = createRng(0).fork('gradient-bench');
  // `version` 3: each prompt's gradient carries its success rate and path share (older cache files are recomputed).
  const key = (set: string, prompts: readonly { id: string }[]) => ({
    version: 3,
    set,
    rollouts: o.rollouts,
    prompts: prompts.map((p) => p.id),
    env: base.env,
    engine: base.engine,
    checkpoint: createHash('sha256').update(policy.save()).digest('hex'),
  });
  const file = (set: string) => (o.cache ? `${o.cache}.${set}.json` : undefined);
  const reference = (set: string, prompts: typeof same): Promise<ReferenceGradient> =>
    cachedReference(file(set), key(set, prompts), () =>
      referenceGradient(parts.env, policy, prompts, o.rollouts, refRng.fork(set), base.engine, grads, maxDepth),
    );
  const refSame = await reference('same', same);
  o.log(`reference on the same prompts: J = ${refSame.success.toFixed(3)}`);
  const refOther = await reference('disjoint', disjoint);
  o.log(`reference on disjoint prompts: J = ${refOther.success.toFixed(3)}`);
  return { base, parts, policy, maxDepth, same, disjoint, grads, refSame, refOther };
}
