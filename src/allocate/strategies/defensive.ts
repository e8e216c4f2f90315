import type { OptionsOf } from '../options.ts';
import { allRemaining } from '../parts/roots.ts';
import type { RootCandidate, RootPlanner, RootRoundInput, Strategy } from '../types.ts';
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
 * The default draws are systematic, without repeats (Draws below): in a pre-registered comparison the repeats of
 * independent draws cost distinct prompts and 2.1 points of held-out success, systematic draws tied grpo.
 */
export function defensiveStrategy(o: OptionsOf<'defensive'>): Strategy {
  return { name: 'defensive', cap: o.budget, roots: defensiveRootPlanner(o.explore, o.groupSize, o.draws) };
}

function defensiveRootPlanner(explore: number, groupSize: number | undefined, draws: Draws): RootPlanner {
  // One draw design per input, read by both the plan and the weights.
  const design = (input: RootRoundInput) => {
    const cs = input.candidates;
    const total = allRemaining(input);
    const G = groupSize ?? Math.max(2, Math.floor(total / cs.length));
    const K = Math.floor(total / G);
    const q = proposal(cs, G, explore);
    // Systematic draws include prompt i with probability π_i (K·q_i capped at 1): per draw π_i / K. With
    // K ≥ n every prompt is in once (π = 1) and the n drawn groups share the budget: per draw 1 / n.
    const pi = draws === 'systematic' ? inclusion(q, K) : undefined;
    return { cs, total, G, K, q, pi, perDraw: pi && K > 0 ? pi.map((x) => x / Math.min(K, cs.length)) : q };
  };
  return {
    plan(input) {
      const { cs, total, G, K, q, pi } = design(input);
      if (cs.length === 0 || total < 2) return new Map();
      const drawn = pi ? systematicDraws(pi, input.rng) : Array.from({ length: K }, () => drawIndex(q, input.rng));
      const order: string[] = [];
      const plan = new Map<string, number>();
      for (const i of drawn) {
        const id = cs[i]!.promptId;
        if (!plan.has(id)) order.push(id);
        plan.set(id, (plan.get(id) ?? 0) + G);
      }
      // What is left below a whole group: one more rollout each to the drawn prompts, in draw order (grpo's rule).
      const left = total - drawn.length * G;
      for (let extra = left, i = 0; extra > 0 && order.length > 0; extra--, i = (i + 1) % order.length) plan.set(order[i]!, plan.get(order[i]!)! + 1);
      return plan;
    },
    weights(input) {
      const { cs, perDraw } = design(input);
      return new Map(cs.map((c, i) => [c.promptId, 1 / (cs.length * perDraw[i]!)]));
    },
  };
}

/**
 * How the ⌊B / G⌋ groups pick their prompts: 'independent' draws from q (a prompt may come twice: the
 * 1/(1 − ε) bound above is for these), 'systematic' draws without repeats, prompt i with probability
 * π_i = K·q_i (capped at 1, the excess spread over the rest), by systematic sampling in a random order
 * (Horvitz–Thompson weights keep it unbiased; no variance bound is claimed for it).
 */
export type Draws = 'independent' | 'systematic';

/** Inclusion probabilities π_i = K·q_i, capped at 1 with the excess moved to the uncapped in proportion (Σ π = K). */
export function inclusion(q: readonly number[], K: number): number[] {
  const n = q.length;
  if (K >= n) return q.map(() => 1);
  const pi = q.map(() => 0);
  const capped = new Set<number>();
  for (;;) {
    const rest = q.reduce((s, qi, i) => (capped.has(i) ? s : s + qi), 0);
    const target = K - capped.size;
    let changed = false;
    q.forEach((qi, i) => {
      if (capped.has(i)) return;
      pi[i] = (target * qi) / rest;
      if (pi[i]! >= 1) {
        pi[i] = 1;
        capped.add(i);
        changed = true;
      }
    });
    if (!changed) return pi;
  }
}

/** Systematic sampling: the candidates in a random order, one uniform start, K points 1 apart on the cumulated π. */
function systematicDraws(pi: readonly number[], rng: Rng): number[] {
  const order = pi.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  // Points u, u + 1, … on the cumulated π: a unit of length π_i ≤ 1 holds at most one of them.
  const drawn: number[] = [];
  let point = rng.next();
  let cum = 0;
  for (const i of order) {
    cum += pi[i]!;
    if (point < cum) {
      drawn.push(i);
      point += 1;
    }
  }
  return drawn;
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
