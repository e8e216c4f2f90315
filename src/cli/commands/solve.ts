import type { Command } from 'commander';
import { z } from 'zod';
import { AllocationInputError, InfeasibleBudgetError, solveKnapsack, solvePrefixes, solveRoots } from '../../allocate/index.ts';
import { readStdinJson, UsageError, writeJson } from '../io.ts';

const probability = z.number().min(0).max(1);
const count = z.number().int().min(0);
const bounds = {
  min: z.number().int().min(2).default(2).describe('m_min ≥ 2'),
  max: z.number().int().min(2).default(64).describe('m_max ≥ min'),
};
const maxAtLeastMin = (o: { min: number; max: number }) => o.max >= o.min;
const maxError = { message: 'must be ≥ min', path: ['max'] };

const rootsInput = z.strictObject({ v: z.array(probability), budget: count, ...bounds }).refine(maxAtLeastMin, maxError);
const knapsackInput = z.strictObject({ p: z.array(probability), budget: count, ...bounds }).refine(maxAtLeastMin, maxError);
// The prefix solver picks one continuation at a time (exact greedy), so its time grows with the budget:
// an absurd budget (e.g. 2^53) would run for days instead of failing.
const MAX_PREFIX_BUDGET = 10_000_000;
const prefixesInput = z
  .strictObject({
    budget: count.max(MAX_PREFIX_BUDGET, `must be at most ${MAX_PREFIX_BUDGET.toLocaleString('en')} continuations (the greedy solver places them one by one)`),
    prefixes: z.array(z.strictObject({ id: z.string().min(1), q: probability, r: probability })),
  })
  .superRefine((o, ctx) => {
    const seen = new Set<string>();
    o.prefixes.forEach((p, i) => {
      if (seen.has(p.id)) ctx.addIssue({ code: 'custom', message: `duplicate id "${p.id}"`, path: ['prefixes', i, 'id'] });
      seen.add(p.id);
    });
  });

/** Solver errors become one-line usage errors that name the input field. */
function solverErrors<T>(run: () => T): T {
  try {
    return run();
  } catch (e) {
    if (e instanceof InfeasibleBudgetError || e instanceof AllocationInputError) throw new UsageError(`input.${e.message}`);
    throw e;
  }
}

/**
 * `trace-rl solve roots|prefixes|knapsack`: JSON on stdin, JSON on stdout (docs/allocation.md).
 *   roots     {"v":[…],"budget":M,"min":2,"max":64}            → {"m":[…],"objective":x}
 *   prefixes  {"budget":K,"prefixes":[{"id","q","r"},…]}        → {"k":{"id":K,…},"objective":x}
 *   knapsack  {"p":[…],"budget":M,"min":2,"max":64}            → {"m":[…],"objective":x}
 */
export function register(program: Command): void {
  const solve = program.command('solve').description('solve one allocation problem exactly (JSON on stdin → JSON on stdout)');
  solve
    .command('roots')
    .description('root allocation: maximise Σ 1 − v^m − (1 − v)^m with Σ m = budget, m ∈ {0} ∪ [min, max]')
    .action(async () => {
      const input = await readStdinJson(rootsInput);
      const { m, objective } = solverErrors(() => solveRoots(input));
      writeJson({ m, objective });
    });
  solve
    .command('prefixes')
    .description('prefix expansion: maximise Σ 1 − ρ^K, ρ = r·q + (1 − r)(1 − q), with Σ K = budget')
    .action(async () => {
      const input = await readStdinJson(prefixesInput);
      const { k, objective } = solverErrors(() => solvePrefixes(input.prefixes, input.budget));
      writeJson({ k: Object.fromEntries(input.prefixes.map((p, i) => [p.id, k[i]])), objective });
    });
  solve
    .command('knapsack')
    .description('Knapsack-RL allocation: maximise Σ (1 − p^k − (1 − p)^k)·p(1 − p)² with Σ k = budget, k ∈ {0} ∪ [min, max]')
    .action(async () => {
      const input = await readStdinJson(knapsackInput);
      const { m, objective } = solverErrors(() => solveKnapsack(input));
      writeJson({ m, objective });
    });
}
