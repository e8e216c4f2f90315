import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { Environment } from '../../src/env/index.ts';
import type { EmbeddedPolicy } from '../../src/policy/index.ts';
import { runStep, type EngineSettings } from '../../src/rollout/index.ts';
import { rewardedLeaves, turnsTo } from '../../src/tree/index.ts';
import type { Prompt, Turn } from '../../src/tree/types.ts';
import type { Rng } from '../../src/util/rng.ts';
import type { ScoreGradients } from './score-gradient.ts';
import { SparseSum } from './sparse.ts';
import type { PromptGradient } from './update-direction.ts';
import { pathShare } from './path-share.ts';

/** A prompt's reference gradient with its rollouts' mean success and path share (path-share.ts). */
export interface ReferencePromptGradient extends PromptGradient {
  success: number;
  pathShare: number;
}

export interface ReferenceGradient {
  /** ∇J_p estimated from all rollouts of each prompt. */
  full: ReferencePromptGradient[];
  /** The same from the first and the second half of the rollouts (the reference's own noise). */
  halves: [PromptGradient[], PromptGradient[]];
  /** Mean success over all rollouts (J of the prompt set). */
  success: number;
}

/**
 * The reference gradient of expected success J_p = E[R] for each prompt, from n independent
 * rollouts of the current policy: REINFORCE with the leave-one-out baseline,
 *   ∇J_p ≈ (1/n) Σ_τ (R_τ − mean of the other n − 1) Σ_t ∇ log π(a_t) = 1/(n − 1) · Σ_τ (R_τ − R̄) Σ_t ∇ log π(a_t),
 * unbiased because each rollout's baseline is independent of it. Rollouts whose trajectory failed
 * (no reward) are left out. Prompts run `chunk` at a time so only a chunk's trees are held.
 */
export async function referenceGradient(
  env: Environment<unknown>,
  policy: EmbeddedPolicy,
  prompts: readonly Prompt[],
  rollouts: number,
  rng: Rng,
  settings: Partial<EngineSettings>,
  grads: ScoreGradients,
  maxDepth: number,
  chunk = 4,
): Promise<ReferenceGradient> {
  const full: ReferencePromptGradient[] = [];
  const halves: [PromptGradient[], PromptGradient[]] = [[], []];
  let successes = 0;
  let count = 0;
  for (let c = 0; c < prompts.length; c += chunk) {
    const part = prompts.slice(c, c + chunk);
    const { trees } = await runStep({
      prompts: part,
      env,
      policy,
      rng: rng.fork(`reference/${c}`),
      rootPlan: new Map(part.map((p) => [p.id, rollouts])),
      settings,
    });
    for (const tree of trees) {
      const prompt = part.find((p) => p.id === tree.promptId)!;
      const samples = rewardedLeaves(tree).map((leaf) => ({ reward: leaf.reward!, turns: turnsTo(tree, leaf.id) }));
      const won = samples.reduce((a, s) => a + s.reward, 0);
      successes += won;
      count += samples.length;
      const half = samples.length >> 1;
      full.push({ ...baselined(prompt, samples, grads, maxDepth), success: samples.length ? won / samples.length : Number.NaN, pathShare: pathShare(samples) });
      halves[0].push(baselined(prompt, samples.slice(0, half), grads, maxDepth));
      halves[1].push(baselined(prompt, samples.slice(half), grads, maxDepth));
    }
  }
  return { full, halves, success: count ? successes / count : Number.NaN };
}

/** One prompt's leave-one-out REINFORCE gradient from its rollouts (the formula above), whole and by turn depth. */
export function baselined(
  prompt: Prompt,
  samples: ReadonlyArray<{ reward: number; turns: readonly Turn[] }>,
  grads: ScoreGradients,
  maxDepth: number,
): PromptGradient {
  const total = new SparseSum();
  const byDepth = Array.from({ length: maxDepth }, () => new SparseSum());
  const n = samples.length;
  if (n >= 2) {
    const mean = samples.reduce((a, s) => a + s.reward, 0) / n;
    for (const s of samples) {
      const w = (s.reward - mean) / (n - 1);
      if (w === 0) continue;
      s.turns.forEach((_, k) => {
        const g = grads.at(prompt, s.turns, k);
        if (!g) return;
        total.add(g, w);
        byDepth[Math.min(k + 1, maxDepth) - 1]!.add(g, w);
      });
    }
  }
  return { promptId: prompt.id, total: total.finish(), byDepth: byDepth.map((d) => d.finish()) };
}

/**
 * The reference of `key` read from `file` when it was computed for the same key, else computed and
 * written there: the reference is most of the bench's time, and arms and reports change more often.
 */
export async function cachedReference(
  file: string | undefined,
  key: Record<string, unknown>,
  compute: () => Promise<ReferenceGradient>,
): Promise<ReferenceGradient> {
  const tag = JSON.stringify(key);
  if (file && existsSync(file)) {
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { key: string; reference: unknown };
    if (stored.key === tag) return revive(stored.reference) as ReferenceGradient;
  }
  const reference = await compute();
  if (file)
    writeFileSync(
      file,
      JSON.stringify({ key: tag, reference }, (_, v: unknown) =>
        v instanceof Int32Array || v instanceof Float64Array ? { t: v instanceof Int32Array ? 'i' : 'f', d: Array.from(v) } : v,
      ),
    );
  return reference;
}

function revive(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(revive);
  if (x && typeof x === 'object') {
    const o = x as { t?: string; d?: number[] };
    if ((o.t === 'i' || o.t === 'f') && Array.isArray(o.d)) return o.t === 'i' ? Int32Array.from(o.d) : Float64Array.from(o.d);
    return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, revive(v)]));
  }
  return x;
}
