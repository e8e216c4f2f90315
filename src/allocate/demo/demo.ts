import { createRng } from '../../util/rng.ts';
import { createStrategy } from '../registry.ts';
import { beta, binomial, noisyPrediction } from './sampling.ts';
import type { RootCandidate, Strategy } from '../types.ts';

/**
 * The allocation demo: does spending M bare rollouts where outcomes are likely mixed give more
 * contrast than uniform groups? Each trial draws n prompts with p ~ Beta(a, b), a predictor
 * v = σ(logit p + noise·ε), allocates with grpo (uniform), trace (the exact root solver on v) and
 * oracle (the same solver on the true p), simulates Bernoulli(p) outcomes and counts mixed groups.
 * Root phase only: there are no turns here, so N = 0 and every strategy spends exactly M.
 */
export interface DemoOptions {
  prompts: number;
  budget: number;
  trials: number;
  seed: number;
  /** Beta(a, b) of the true success probabilities. */
  a: number;
  b: number;
  /** Standard deviation of the predictor's error in logit space. */
  noise: number;
  min: number;
  max: number;
}

export const DEMO_DEFAULTS: DemoOptions = { prompts: 256, budget: 1024, trials: 200, seed: 1, a: 0.5, b: 0.5, noise: 1, min: 2, max: 16 };

export interface Summary {
  mean: number;
  sd: number;
}

export interface DemoRow {
  strategy: string;
  /** Mixed groups / prompts drawn (the batch): comparable across strategies at equal cost. */
  effectiveRatio: Summary;
  /** Mixed groups / prompts that received rollouts. */
  selectedRatio: Summary;
  mixedGroups: Summary;
  promptsSelected: Summary;
  rolloutsSpent: Summary;
}

export const DEMO_STRATEGIES = ['grpo', 'trace', 'oracle'] as const;

export function runAllocationDemo(options: Partial<DemoOptions> = {}): { options: DemoOptions; rows: DemoRow[] } {
  const o = { ...DEMO_DEFAULTS, ...options };
  const strategies: Strategy[] = DEMO_STRATEGIES.map((name) =>
    name === 'grpo' ? createStrategy(name, { budget: o.budget }) : createStrategy(name, { budget: o.budget, continuations: 0, min: o.min, max: o.max }),
  );
  const samples = strategies.map(() => ({ eff: [] as number[], sel: [] as number[], mixed: [] as number[], selected: [] as number[], spent: [] as number[] }));
  const root = createRng(o.seed);
  for (let t = 0; t < o.trials; t++) {
    const rng = root.fork(`trial/${t}`);
    const draw = rng.fork('prompts');
    const candidates: RootCandidate[] = Array.from({ length: o.prompts }, (_, i) => {
      const p = beta(o.a, o.b, draw);
      return { promptId: `q${i}`, p, v: noisyPrediction(p, o.noise, draw) };
    });
    const pOf = new Map(candidates.map((c) => [c.promptId, c.p!]));
    strategies.forEach((s, k) => {
      const plan = s.roots.plan({ candidates, round: 0, remaining: o.budget, results: new Map(), rng: rng.fork(`plan/${s.name}`) });
      // The same outcome stream per prompt for every strategy (common random numbers).
      let mixed = 0;
      let spent = 0;
      for (const [id, m] of plan) {
        const successes = binomial(m, pOf.get(id)!, rng.fork(`outcomes/${id}`));
        if (successes > 0 && successes < m) mixed++;
        spent += m;
      }
      const out = samples[k];
      out.eff.push(mixed / o.prompts);
      out.sel.push(plan.size ? mixed / plan.size : 0);
      out.mixed.push(mixed);
      out.selected.push(plan.size);
      out.spent.push(spent);
    });
  }
  const rows = strategies.map((s, k) => ({
    strategy: s.name,
    effectiveRatio: summarise(samples[k].eff),
    selectedRatio: summarise(samples[k].sel),
    mixedGroups: summarise(samples[k].mixed),
    promptsSelected: summarise(samples[k].selected),
    rolloutsSpent: summarise(samples[k].spent),
  }));
  return { options: o, rows };
}

/** Mean and sample standard deviation (N − 1). */
export function summarise(xs: readonly number[]): Summary {
  const n = xs.length;
  if (n === 0) return { mean: NaN, sd: NaN };
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  const sd = n > 1 ? Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1)) : 0;
  return { mean, sd };
}
