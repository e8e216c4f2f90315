import type { EmbeddedPolicy } from '../../src/policy/index.ts';
import type { Prompt, Turn } from '../../src/tree/types.ts';
import { SparseSum, type SparseVec } from './sparse.ts';

/**
 * ∇_w log π(a_i | prompt, turns before i) of the embedded linear-softmax policy at its current
 * weights: φ(a) − Σ_c π(c) φ(c) over the candidates of that turn (the same terms, feature repeats
 * included, as EmbeddedPolicy.surrogate). Undefined where the policy's update skips the turn: an
 * errored turn, or an action outside the candidate set.
 *
 * Rollouts of one prompt share most of their prefixes (the warm-started policy is nearly
 * deterministic early on), so gradients are cached by the prefix itself — actions and observations,
 * which are everything the policy's features read.
 */
export class ScoreGradients {
  private readonly cache = new Map<string, SparseVec | null>();

  constructor(private readonly policy: EmbeddedPolicy) {}

  at(prompt: Prompt, turns: readonly Turn[], i: number): SparseVec | undefined {
    const turn = turns[i]!;
    if (turn.error) return undefined;
    const key = `${prompt.id}\u0000${turns
      .slice(0, i + 1)
      .map((t, k) => `${t.action.type}\u0001${t.action.input}${k < i ? `\u0001${t.observation}` : ''}`)
      .join('\u0000')}`;
    let g = this.cache.get(key);
    if (g === undefined) {
      g = this.compute(prompt, turns, i) ?? null;
      this.cache.set(key, g);
    }
    return g ?? undefined;
  }

  private compute(prompt: Prompt, turns: readonly Turn[], i: number): SparseVec | undefined {
    const action = turns[i]!.action;
    const d = this.policy.distribution(prompt, turns.slice(0, i));
    const k = d.actions.findIndex((a) => a.type === action.type && a.input === action.input);
    if (k < 0) return undefined;
    const s = new SparseSum();
    for (let c = 0; c < d.actions.length; c++) {
      const coef = (c === k ? 1 : 0) - d.probs[c]!;
      const f = d.features[c]!;
      for (let j = 0; j < f.length; j++) s.addAt(f[j]!, coef);
    }
    return s.finish();
  }
}
