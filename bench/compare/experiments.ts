/**
 * The runs of the comparison benchmark (issue 6, TRACE-SPEC §7), as data: every run is one
 * `trace-rl train` configuration; runs with the same `label` are seeds of one arm.
 *
 *  main      world + embedded policy: trace, grpo, random-tree, pcl, dapo at equal B
 *  oracle    simulator (known probabilities, fixed policy): oracle, trace, grpo
 *  ablation  world: uniform/adaptive roots × uniform/adaptive prefixes, and N = 1 / N = 4 at the same B
 *            (the adaptive × adaptive, N = 2 arm is main's trace; it is run once and shared)
 */

export interface Scale {
  /** Seeds firstSeed, firstSeed + 1, …, firstSeed + seeds − 1 (development: 0–4; the frozen final run: 100–109). */
  firstSeed: number;
  seeds: number;
  /** World / simulator seed (fixed across arms). */
  envSeed: number;
  steps: number;
  pool: number;
  budget: number;
  evalEvery: number;
  evalQuestions: number;
}

export const DEFAULT_SCALE: Scale = { firstSeed: 0, seeds: 5, envSeed: 7, steps: 30, pool: 64, budget: 192, evalEvery: 5, evalQuestions: 200 };

export type ExperimentName = 'main' | 'oracle' | 'ablation';
export const EXPERIMENTS: readonly ExperimentName[] = ['main', 'oracle', 'ablation'];

/** One arm: a strategy configuration run over every seed. */
export interface Arm {
  /** Unique across experiments; the run folders are `<label>-s<seed>`. */
  label: string;
  env: 'world' | 'simulator';
  strategy: Record<string, unknown>;
  /** What the arm is in the paper's terms (for tables). */
  meaning: string;
}

export function arms(experiment: ExperimentName): Arm[] {
  const world = (label: string, strategy: Record<string, unknown>, meaning: string): Arm => ({ label, env: 'world', strategy, meaning });
  const sim = (label: string, strategy: Record<string, unknown>, meaning: string): Arm => ({ label, env: 'simulator', strategy, meaning });
  switch (experiment) {
    case 'main':
      return [
        world('trace', { name: 'trace' }, 'adaptive roots + adaptive prefixes, N = 2'),
        world('grpo', { name: 'grpo' }, 'uniform groups, all B as bare rollouts'),
        world('random-tree', { name: 'random-tree' }, 'uniform roots, continuations at random prefixes, N = 2'),
        world('pcl', { name: 'pcl' }, 'adaptive roots only, all B as bare rollouts'),
        world('dapo', { name: 'dapo' }, 'dynamic sampling until ⌊B/8⌋ mixed groups (cap 4B)'),
      ];
    case 'oracle':
      return [
        sim('sim-oracle', { name: 'oracle' }, 'solvers on the true probabilities'),
        sim('sim-trace', { name: 'trace' }, 'solvers on the learned predictor'),
        sim('sim-grpo', { name: 'grpo' }, 'uniform groups'),
      ];
    case 'ablation':
      return [
        world('trace', { name: 'trace' }, 'adaptive root × adaptive prefix (TRACE), N = 2'),
        world('trace-uniform-prefix', { name: 'trace', prefixes: 'uniform' }, 'adaptive root × uniform prefix, N = 2'),
        world('trace-uniform-root', { name: 'trace', roots: 'uniform' }, 'uniform root × adaptive prefix, N = 2'),
        world('trace-uniform-both', { name: 'trace', roots: 'uniform', prefixes: 'uniform' }, 'uniform root × uniform prefix, N = 2'),
        world('trace-n1', { name: 'trace', continuations: 1 }, 'more roots: M = B/2, N = 1'),
        world('trace-n4', { name: 'trace', continuations: 4 }, 'deeper expansion: M = ⌊B/5⌋, N = 4'),
      ];
  }
}

/** The raw `trace-rl train` configuration of one arm and seed (validated by the caller). */
export function runConfig(arm: Arm, seed: number, scale: Scale): Record<string, unknown> {
  return {
    seed,
    steps: scale.steps,
    pool: scale.pool,
    env: { kind: arm.env, seed: scale.envSeed },
    strategy: { budget: scale.budget, continuations: 2, ...arm.strategy },
    eval: { every: scale.evalEvery, questions: scale.evalQuestions },
  };
}
