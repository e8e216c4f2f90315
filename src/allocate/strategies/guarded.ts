import { guardMetrics, initialGuard, nextGuard, storedGuard, type GuardOptions, type PartYield } from '../guard.ts';
import type { OptionsOf } from '../options.ts';
import { allRemaining, solvedRootPlanner, uniformRoots } from '../parts/roots.ts';
import type { PromptOutcome, RootRoundInput, StepPlan, StepStart, Strategy } from '../types.ts';

/**
 * guarded: grpo's plan, with a share s of each step (ε to start) given to the exact root solver over the
 * prompts of the pool grpo's part leaves out (m_i ∈ {0} ∪ [m_min, m_max] on the predictor's v). After
 * every step each part's distinct mixed prompts per unit of budget are counted and the guard (guard.ts)
 * moves s only when a sequential test says the solver's part yields more (or less) than grpo's.
 *
 * The base part is grpo's exactly: G rollouts on the first prompts of the pool (the pool is a random
 * draw), G = groupSize, else ⌊B / pool⌋ (at least 2) as grpo's default — fixed by the whole budget,
 * so a larger explore share means fewer grpo prompts, never smaller groups.
 */
export function guardedStrategy(o: OptionsOf<'guarded'>): Strategy {
  const guard: GuardOptions = { explore: o.explore, maxShare: o.maxShare, alpha: o.alpha };
  const solver = solvedRootPlanner(allRemaining, (c) => ({ v: c.v, w: 1 }), o);
  const at = (share: number): { strategy: Strategy; parts: Map<string, 'base' | 'explore'> } => {
    const parts = new Map<string, 'base' | 'explore'>();
    const plan = (input: RootRoundInput): Map<string, number> => {
      parts.clear();
      const total = allRemaining(input);
      const cs = input.candidates;
      const G = o.groupSize ?? Math.max(2, Math.floor(total / Math.max(1, cs.length)));
      const k = Math.min(cs.length, Math.floor(Math.round((1 - share) * total) / G));
      const explore = solver.plan({ ...input, candidates: cs.slice(k), remaining: total - k * G });
      const spent = [...explore.values()].reduce((a, b) => a + b, 0);
      // What the solver leaves of its share (too few candidates, or below m_min) buys grpo more prompts.
      const base = uniformRoots(
        cs.filter((c) => !explore.has(c.promptId)),
        total - spent,
        undefined,
        G,
      );
      const out = new Map<string, number>();
      for (const [id, m] of base) {
        out.set(id, m);
        parts.set(id, 'base');
      }
      for (const [id, m] of explore) {
        out.set(id, m);
        parts.set(id, 'explore');
      }
      return out;
    };
    return { strategy: { name: 'guarded', cap: o.budget, roots: { plan } }, parts };
  };
  // The guard's state is the strategy's memory (key `guard`): a resumed run restores it.
  const perStep = (start: StepStart): StepPlan => {
    const now = storedGuard(start.memory?.guard) ?? initialGuard(guard);
    const { strategy, parts } = at(now.share);
    return {
      strategy,
      candidates: start.candidates,
      end(outcomes: readonly PromptOutcome[]) {
        const base: PartYield = { mixed: 0, cost: 0 };
        const explore: PartYield = { mixed: 0, cost: 0 };
        for (const x of outcomes) {
          const part = parts.get(x.promptId);
          if (!part) continue;
          const y = part === 'base' ? base : explore;
          y.cost += x.cost;
          if (x.mixed) y.mixed++;
        }
        return { memory: { guard: nextGuard(now, { base, explore }, guard) }, metrics: guardMetrics(now.share, { base, explore }) };
      },
    };
  };
  return { ...at(guard.explore).strategy, perStep };
}
