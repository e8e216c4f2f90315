import type { OptionsOf } from '../options.ts';
import { allRemaining } from '../parts/roots.ts';
import type { RootCandidate, RootPlanner, Strategy } from '../types.ts';
import type { Rng } from '../../util/rng.ts';

/**
 * Defensive importance sampling over prompts. grpo draws its ⌊B / G⌋ prompts uniformly from the n
 * candidates, so its step estimates the gradient of the uniform objective, the one held-out success is
 * measured on. Choosing prompts by prediction (pcl, the guard's solver part) buys more mixed groups but
 * tilts that estimate toward the chosen prompts. This strategy keeps it unbiased: each of the ⌊B / G⌋
 * groups draws its prompt independently from
 *   q_i = (1 − ε) / n + ε · h_i / Σ h,   h_i = 1 − v_i^G − (1 − v_i)^G   (the chance a group of G is mixed),
 * and every advantage of prompt i is multiplied by w_i = 1 / (n · q_i) (RootPlanner.weights; the step
 * applies it). Then E[Σ_draws w·g] is the uniform gradient whatever v says, and since w_i ≤ 1 / (1 − ε)
 * the second moment of a draw is at most 1 / (1 − ε) times uniform sampling's: a useless predictor
 * costs at most that factor (ε = ¼: a third more variance, as if a quarter of the groups were lost),
 * a good one moves q toward the groups that carry gradient. A prompt drawn k times gets k · G rollouts.
 */
export function defensiveStrategy(o: OptionsOf<'defensive'>): Strategy {
  return { name: 'defensive', cap: o.budget, roots: defensiveRootPlanner(o.explore, o.groupSize) };
}

export function defensiveRootPlanner(explore: number, groupSize?: number): RootPlanner {
  const sizeFor = (n: number, total: number) => groupSize ?? Math.max(2, Math.floor(total / n));
  return {
    plan(input) {
      const cs = input.candidates;
      const total = allRemaining(input);
      if (cs.length === 0 || total < 2) return new Map();
      const G = sizeFor(cs.length, total);
      const q = proposal(cs, G, explore);
      const draws = Math.floor(total / G);
      const order: string[] = [];
      const plan = new Map<string, number>();
      for (let k = 0; k < draws; k++) {
        const id = cs[drawIndex(q, input.rng)]!.promptId;
        if (!plan.has(id)) order.push(id);
        plan.set(id, (plan.get(id) ?? 0) + G);
      }
      // The remainder below one group: one more rollout each to the drawn prompts, in draw order (grpo's rule).
      for (let extra = total - draws * G, i = 0; extra > 0 && order.length > 0; extra--, i = (i + 1) % order.length)
        plan.set(order[i]!, plan.get(order[i]!)! + 1);
      return plan;
    },
    weights(input) {
      const cs = input.candidates;
      const q = proposal(cs, sizeFor(cs.length, allRemaining(input)), explore);
      return new Map(cs.map((c, i) => [c.promptId, 1 / (cs.length * q[i]!)]));
    },
  };
}

/** q_i = (1 − ε)/n + ε · h_i / Σ h (uniform when no candidate is predicted mixed). */
export function proposal(candidates: readonly RootCandidate[], G: number, explore: number): number[] {
  const n = candidates.length;
  const h = candidates.map(({ v }) => 1 - v ** G - (1 - v) ** G);
  const sum = h.reduce((a, b) => a + b, 0);
  if (!(sum > 0)) return candidates.map(() => 1 / n);
  return h.map((hi) => (1 - explore) / n + (explore * hi) / sum);
}

/** One index drawn from the distribution q (inverse CDF on one uniform). */
function drawIndex(q: readonly number[], rng: Rng): number {
  let u = rng.next();
  for (let i = 0; i < q.length; i++) {
    u -= q[i]!;
    if (u < 0) return i;
  }
  return q.length - 1;
}
