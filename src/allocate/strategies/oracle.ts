import type { OptionsOf } from '../options.ts';
import type { RootCandidate, Strategy } from '../types.ts';
import { solverTreeStrategy } from './trace.ts';
import { truePrefix, trueRoot } from './truth.ts';

/**
 * Oracle: TRACE's solvers fed the true success probabilities p (roots and prefixes) instead of the
 * predictor's — the upper bound for any predictor. Needs an environment that knows the truth.
 *
 * `truthSamples: k` (a measuring instrument) shows the root solver and the leftover top-up
 * p only through k fresh outcomes a step: v = (1 + s) / (2 + k), s ~ Binomial(k, p), the uniform-prior
 * posterior mean, drawn once per prompt and step. It bounds what a per-prompt predictor with k outcomes
 * of evidence could capture: its evidence is at best that many outcomes, and older than these. The k
 * outcomes cost nothing from the budget. Prefixes keep their true p. Where the environment does not know
 * p (the world), it draws the k outcomes from the policy itself before the step (StepStart.freshOutcomes),
 * and only roots can be planned so (`continuations: 0`).
 */
export function oracleStrategy(o: OptionsOf<'oracle'>): Strategy {
  const k = o.truthSamples;
  if (k === undefined) return solverTreeStrategy('oracle', o, { root: (c) => trueRoot(c, 'oracle'), prefix: (c) => truePrefix(c, 'oracle') });
  let seen = new Map<string, number>();
  const strategy = solverTreeStrategy('oracle', o, { root: (c) => seen.get(c.promptId) ?? trueRoot(c, 'oracle'), prefix: (c) => truePrefix(c, 'oracle') });
  const roots = strategy.roots!;
  const self: Strategy = {
    ...strategy,
    // Where the environment does not know p, the k outcomes are rollouts of the policy itself, drawn now.
    perStep: async (start) => {
      if (start.candidates.every((c) => c.p !== undefined)) return { strategy: self, candidates: start.candidates };
      const probe = await start.freshOutcomes(k);
      // A prompt the probe could not finish (cancelled, every rollout failed) reads as no evidence: v = ½.
      const candidates = start.candidates.map((c) => ({ ...c, seen: probe.outcomes.get(c.promptId) ?? { successes: 0, trials: 0 } }));
      return { strategy: self, candidates, metrics: { probe_tokens: probe.tokens } };
    },
    roots: {
      ...roots,
      plan(input) {
        const rng = input.rng.fork('truth-samples');
        const draw = (c: RootCandidate): [string, number] => {
          // Outcomes the step drew from the policy itself (an environment without the truth), else k from p.
          if (c.seen) return [c.promptId, (1 + c.seen.successes) / (2 + c.seen.trials)];
          const p = trueRoot(c, 'oracle');
          let s = 0;
          for (let i = 0; i < k; i++) if (rng.next() < p) s++;
          return [c.promptId, (1 + s) / (2 + k)];
        };
        seen = new Map(input.candidates.map(draw));
        return roots.plan(input);
      },
    },
  };
  return self;
}
