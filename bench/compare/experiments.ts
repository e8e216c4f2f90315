/**
 * The runs of the comparison benchmark (issue 6, TRACE-SPEC §7), as data: every run is one
 * `trace-rl train` configuration; runs with the same `label` are seeds of one arm.
 *
 *  main      world + embedded policy: trace, grpo, random-tree, pcl, dapo at equal B
 *  oracle    simulator (known probabilities, fixed policy): oracle, trace, grpo
 *  ablation  world: uniform/adaptive roots × uniform/adaptive prefixes, and N = 1 / N = 4 at the same B
 *            (the adaptive × adaptive, N = 2 arm is main's trace; it is run once and shared)
 *  tinylm    world + the tiny LM (issue 18): trace-best, grpo, random-tree, the paper's trace
 *  tinylm-d  the same from the longer warm start (34 %): the recommendation, grpo, random-tree, the paper's trace
 *  sim-learn simulator + its learnable tabular policy, exact J (issue 34 §1): grpo, pcl on the true p,
 *            pcl on each learned predictor, the paper's trace, uniform-root trace
 *  final-r2-* issue 34 §3's finals at equal tokens beside final-late: the default world, math-world, and
 *            both (and the late world) on two unused world seeds (roundTwo)
 */
import { PREFILL_PRICE } from '../../lab/index.ts';
import { optionsTakenBy, type StrategyName } from '../../src/allocate/index.ts';

export interface Scale {
  /** Seeds firstSeed, firstSeed + 1, …, firstSeed + seeds − 1 (development: 0–4; the frozen final run: 100–109). */
  firstSeed: number;
  seeds: number;
  /** World / simulator seed (fixed across arms). */
  envSeed: number;
  /** World questions before the 80/20 split (env.questions; 2,500 gives the ≥ 500 held-out questions issue 13 asks for). */
  envQuestions?: number;
  steps: number;
  pool: number;
  budget: number;
  evalEvery: number;
  evalQuestions: number;
  /** Sampled rollouts per held-out question at each evaluation (eval.samples; 0 = greedy only). */
  evalSamples?: number;
  /** Run the arms that never read Ṽ with the running-rate predictor (see PREDICTOR_FREE). */
  cheapPredictorForBaselines?: boolean;
}

export const DEFAULT_SCALE: Scale = { firstSeed: 0, seeds: 5, envSeed: 7, steps: 30, pool: 64, budget: 192, evalEvery: 5, evalQuestions: 200 };

/** What an experiment's summary and plots carry (analyse.ts); each experiment declares its own. */
export interface Report {
  /**
   * The paired final-accuracy tables (budget, paired difference, trajectories to reach grpo): `first` =
   * the first arm minus each other arm (the finals' reading), `grpo` = each arm minus grpo.
   */
  paired?: 'first' | 'grpo';
  /** "Where the bare rollouts went", by question kind. */
  kinds?: boolean;
  /** Re-evaluate the final policies by question kind (one evaluation per run): every arm, or these labels. */
  byKind?: 'all' | readonly string[];
  /** Held-out accuracy against trajectories and against tokens (SVG). */
  curves?: boolean;
  /** Effective ratio and mixed trees per step (SVG). */
  contrast?: boolean;
  /** The ablation's bar chart (SVG). */
  bars?: boolean;
  /**
   * Read accuracy as exact J on the training prompts (train_accuracy_exact: runs whose policy supplies
   * the truth, the simulator's tabular one), with the share of the oracle's gain over grpo each arm captures.
   */
  exact?: boolean;
}

const REPORT_TABLE = {
  main: { kinds: true, byKind: 'all', curves: true, contrast: true },
  oracle: { contrast: true },
  ablation: { kinds: true, byKind: 'all', bars: true },
  options: { paired: 'first', kinds: true, byKind: 'all', curves: true },
  diagnose: { paired: 'first' },
  final: { paired: 'first', kinds: true, byKind: ['trace-best', 'trace', 'grpo'], curves: true, contrast: true },
  'final-gold': { paired: 'first' },
  'final-env': { paired: 'first' },
  'final-oracle': {},
  'final-epochs1': { paired: 'first', curves: true },
  scale: { paired: 'first' },
  roots: { paired: 'first' },
  'final-roots': { paired: 'first', curves: true },
  'final-roots-env': { paired: 'first' },
  'final-roots-gold': { paired: 'first' },
  'final-roots-oracle': {},
  tinylm: { paired: 'grpo', kinds: true, curves: true },
  'tinylm-roots': { paired: 'grpo', kinds: true, curves: true },
  'tinylm-d': { paired: 'grpo', kinds: true, curves: true },
  'tinylm-d-lr': { paired: 'first', curves: true },
  'tinylm-d-fix': { paired: 'first', curves: true },
  'tinylm-b64': { paired: 'first', curves: true },
  'tinylm-temp': { paired: 'first', curves: true },
  'tinylm-s': { paired: 'first', kinds: true, curves: true, contrast: true },
  mainscale: { paired: 'grpo', kinds: true, curves: true },
  'final-main': { paired: 'first', kinds: true, curves: true, contrast: true },
  'final-main-env': { paired: 'first' },
  'final-rs': { paired: 'first', kinds: true, curves: true, contrast: true },
  'final-rs-env': { paired: 'first' },
  'units-trajectories': { paired: 'first', curves: true },
  'units-tokens': { paired: 'first', curves: true },
  'final-math': { paired: 'first', curves: true, contrast: true },
  'late-dev': { paired: 'grpo', curves: true, contrast: true },
  'final-late': { paired: 'first', curves: true, contrast: true },
  'math-shared': { paired: 'first', curves: true, contrast: true },
  'sim-learn': { paired: 'grpo', exact: true },
  'final-r2-world': { paired: 'first', curves: true, contrast: true },
  'final-r2-math': { paired: 'first', curves: true, contrast: true },
  'final-r2-world-env37': { paired: 'first' },
  'final-r2-world-env53': { paired: 'first' },
  'final-r2-late-env37': { paired: 'first' },
  'final-r2-late-env53': { paired: 'first' },
  'final-r2-math-env37': { paired: 'first' },
  'final-r2-math-env53': { paired: 'first' },
  'final-late-20': { paired: 'first', curves: true, contrast: true },
  'headroom-prefix-turns': { paired: 'grpo', exact: true },
  'headroom-prefix-samples': { paired: 'grpo', exact: true },
  'headroom-prefix-batch': { paired: 'grpo', exact: true },
  'elasticity-world': { paired: 'grpo', curves: true },
  'elasticity-late': { paired: 'grpo', curves: true },
  'select-sim': { paired: 'grpo', exact: true },
  'select-world': { paired: 'grpo', curves: true, contrast: true },
  'select-late': { paired: 'grpo', curves: true, contrast: true },
  'final-r3-world': { paired: 'first', curves: true, contrast: true },
  'final-r4-defensive': { paired: 'first', curves: true, contrast: true },
} satisfies Record<string, Report>;

/** The experiments, in the order `--experiments` runs them by default (the order of REPORT_TABLE). */
export type ExperimentName = keyof typeof REPORT_TABLE;
export const REPORTS: Record<ExperimentName, Report> = REPORT_TABLE;
export const EXPERIMENTS = Object.keys(REPORT_TABLE) as ExperimentName[];

/**
 * The trace configuration chosen on development seeds (issue 13, second round) and frozen before the
 * final run on seeds 200–209 (the first final, seeds 100–109, ran the paper's trace, frozen at
 * 5e75d3f); its commit hash is in BENCHMARKS.md. Development: `--experiments diagnose`, seeds 0–4,
 * 12 steps, pool 32, B = 48, 500 held-out questions (world of 2,500). Paired grpo − arm, final accuracy:
 * trace (paper) +2.7 pts, decision-weighted prefixes +0.9, decision-weighted + leftover over the pool
 * +0.2 (mean accuracy 0.0), + N = 1 +2.5 to +3.1, + expansion-aware roots +1.6, two expansion rounds
 * +2.0 to +5.4. The best is decision-weighted prefixes with the leftover solved over the pool; it ties
 * grpo in development (it does not beat it). Written out, not read from RECOMMENDED_TRACE_OPTIONS, so
 * the experiments that froze it keep their meaning when the recommendation moves on.
 */
export const BEST_TRACE: Record<string, unknown> = { name: 'trace', prefixes: 'decision-weighted', leftover: 'pool' };

/**
 * The fourth round's arm (`roots`, `final-roots`): BEST_TRACE's prefixes on uniform roots. The frozen
 * run (0aaabe7) also carried `leftover: pool`, which uniform roots never used (their leftover is
 * uniform) and which the schema now rejects beside roots: uniform; the allocation is the same.
 * RECOMMENDED_TRACE_OPTIONS since that final.
 */
export const UNIFORM_ROOT_TRACE: Record<string, unknown> = { name: 'trace', roots: 'uniform', prefixes: 'decision-weighted' };

/**
 * The sixth round's arm (`mainscale` trace-rs-half, `final-rs`): UNIFORM_ROOT_TRACE with root re-sampling
 * at N = ½. RECOMMENDED_TRACE_OPTIONS since that final; written out here for the same reason as above.
 */
export const ROOT_RESAMPLE_TRACE: Record<string, unknown> = { ...UNIFORM_ROOT_TRACE, rootResample: true, continuations: 0.5 };

/** The late-decision world's token budget per step (issue 34; see `late-dev`). */
export const LATE_TOKENS = 15_000;

/**
 * late-dev's winner by the rule fixed before its results (docs/experiments/2026-12-01-late-dev.md): uniform
 * roots, the paper's prefix solver, root resampling, N = ½, no branch point before turn 2: +8.6 points
 * [3.7, 13.6] over grpo in final greedy held-out success on seeds 0–4 (late-trace-rs-adaptive-b2).
 */
export const LATE_BEST: Record<string, unknown> = { name: 'trace', roots: 'uniform', rootResample: true, continuations: 0.5, branchFrom: 2 };

/**
 * Round two's token budgets per step on the default world and on math-world (issue 34 §3): grpo's mean
 * spend at B = 192 trajectories there, read from committed results before the final-r2 runs. World:
 * 11,500 (units-tokens; the sixth final's grpo spent 343,616 tokens over 30 steps). math-world: 6,000
 * (the seventh final's grpo spent 120,219 tokens over 20 steps, 6,011 a step).
 */
export const WORLD_TOKENS = 11_500;
/** The learnable simulator's tokens a step: what grpo's 192 trajectories cost there (134,072 over 30 steps, sl-grpo seed 0). */
export const SIM_TOKENS = 4_500;
export const MATH_TOKENS = 6_000;

/** Per-arm config overrides beyond the strategy (e.g. the predictor without gold-answer features). */
export interface ArmExtra {
  predictor?: Record<string, unknown>;
  /** Advantage estimator (default: the config's, trace). */
  estimator?: string;
  /** Policy settings (e.g. sharedTurns). */
  policy?: Record<string, unknown>;
  /** Advantage scale (std: GRPO's z; none: Dr. GRPO's unscaled deviations). */
  advantageScale?: 'std' | 'none';
  /** Rollout engine settings (e.g. the tiny LM's turn limit and llama.cpp batch width). */
  engine?: Record<string, unknown>;
  /** Environment settings beside kind and seed (e.g. the world's profile, the simulator's number of prompts). */
  env?: Record<string, unknown>;
  /** Candidate prompts a step (default: the scale's pool): larger than the budget covers in the prompt-selection regime. */
  pool?: number;
}

/** One arm: a strategy configuration run over every seed. */
export interface Arm {
  /** Unique across experiments; the run folders are `<label>-s<seed>`. */
  label: string;
  env: 'world' | 'simulator' | 'math-world';
  strategy: Record<string, unknown>;
  /** What the arm is in the paper's terms (for tables). */
  meaning: string;
  extra?: ArmExtra;
  /** Env seed override (the final's check on another world). */
  envSeed?: number;
  /** Run order: lower tiers run first (seed-major within a tier), so a run cut short by the clock still pairs its core arms. */
  tier?: number;
}

/**
 * The tiny LM of issue 18 (docs/tinylm.md): the committed d64 × 4-layer warm start generating in
 * llama.cpp (8 sequences in one batch) and trained by PPO in jax-js, with the settings its earlier
 * runs used (Adam 3e-4, one pass per step, 6 turns). Every arm of `tinylm` starts from this one file.
 */
export const TINY_LM: ArmExtra = {
  policy: { kind: 'tiny-lm', model: 'bench/tinylm/warm-start-d64x4.gguf', learningRate: 3e-4, epochs: 1 },
  engine: { maxTurns: 6, concurrency: 8 },
};

/**
 * TINY_LM from the longer warm start `bench/tinylm/warm-start-d64x4d.gguf` (same d64 × 4 shape, 34.0 %
 * greedy held-out success against the first file's 17.7 %); everything else as TINY_LM.
 */
export const TINY_LM_D: ArmExtra = { ...TINY_LM, policy: { ...TINY_LM.policy, model: 'bench/tinylm/warm-start-d64x4d.gguf' } };

/**
 * The learnable simulator of `sim-learn` (issue 34 §1): the tabular policy (one softmax per simulator
 * node, from the random policy) with η = 100 on the sample-normalised surrogate, on 300 prompts (240 to
 * train on, so each recurs about every 4 steps at pool 64). Chosen on seeds 0–2, 30 steps: with the
 * surrogate a mean over contributing turns (the embedded policy's rule), the oracle's roots were
 * behind grpo (η = 200: 0.833 vs 0.852, seeds 0–1), since a step's size then ignores how much contrast
 * it found; normalised by the number of samples, pcl on the true p leads grpo by 5–6 points (η = 100
 * and 200), near the +4.2 the review measured.
 */
export const SIM_LEARN: ArmExtra = { policy: { kind: 'simulator-tabular', learningRate: 100, normalise: 'samples' }, env: { questions: 300 } };

export function arms(experiment: ExperimentName): Arm[] {
  const world = (label: string, strategy: Record<string, unknown>, meaning: string, extra?: ArmExtra): Arm => ({
    label,
    env: 'world',
    strategy,
    meaning,
    ...(extra ? { extra } : {}),
  });
  const sim = (label: string, strategy: Record<string, unknown>, meaning: string, extra?: ArmExtra): Arm => ({
    label,
    env: 'simulator',
    strategy,
    meaning,
    ...(extra ? { extra } : {}),
  });
  const math = (label: string, strategy: Record<string, unknown>, meaning: string, extra?: ArmExtra): Arm => ({
    label,
    env: 'math-world',
    strategy,
    meaning,
    ...(extra ? { extra } : {}),
  });
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
    case 'options':
      // Development (seeds 0–4): each option beyond the paper alone, then together, against the paper and grpo.
      return [
        world('trace', { name: 'trace' }, 'the paper (faithful)'),
        world('grpo', { name: 'grpo' }, 'uniform groups, all B as bare rollouts'),
        world('trace-expansion', { name: 'trace', rootValue: 'expansion-aware' }, 'expansion-aware root value'),
        world('trace-posterior', { name: 'trace', rootPrior: 'posterior' }, 'Ṽ as prior of a per-prompt Beta posterior'),
        world('trace-pool', { name: 'trace', leftover: 'pool' }, 'leftover solved over the whole pool'),
        world('trace-entropy-w', { name: 'trace', prefixes: 'entropy-weighted' }, 'prefix value × (1 + H) (AT²PO-style)'),
        world('trace-uniform-root', { name: 'trace', roots: 'uniform' }, 'uniform root × adaptive prefix'),
        world('trace-pool-entropy-w', { name: 'trace', leftover: 'pool', prefixes: 'entropy-weighted' }, 'leftover over the pool + entropy-weighted prefixes'),
        world('trace-n1', { name: 'trace', continuations: 1 }, 'the paper with N = 1 (more roots)'),
        world(
          'trace-n1-expansion-entropy-w',
          { name: 'trace', continuations: 1, rootValue: 'expansion-aware', prefixes: 'entropy-weighted' },
          'N = 1, expansion-aware roots, entropy-weighted prefixes',
        ),
      ];
    case 'diagnose':
      // Development (seeds 0–4, second session): why trees lose to grpo at equal B. Is it the number of
      // distinct prompts a step learns from, or how tree leaves enter the update?
      return [
        world('grpo', { name: 'grpo' }, 'uniform groups, 24 prompts × 2'),
        world('grpo-8', { name: 'grpo', batchSize: 8 }, 'uniform groups on 8 prompts × 6 (trace-like coverage)'),
        world('trace', { name: 'trace' }, 'the paper (faithful)'),
        world('trace-est-grpo', { name: 'trace' }, 'the paper, grpo estimator (root groups only)', { estimator: 'grpo' }),
        world('trace-est-tree-grpo', { name: 'trace' }, 'the paper, tree-grpo estimator', { estimator: 'tree-grpo' }),
        world('random-tree', { name: 'random-tree' }, 'uniform roots, continuations at random prefixes'),
        world('trace-rounds2', { name: 'trace', expansionRounds: 2 }, 'the paper with two expansion rounds'),
        world('trace-decision-w', { name: 'trace', prefixes: 'decision-weighted' }, 'prefix value × turns after the prefix'),
        world(
          'trace-decision-w-rounds2',
          { name: 'trace', prefixes: 'decision-weighted', expansionRounds: 2 },
          'decision-weighted prefixes, two expansion rounds',
        ),
        world('trace-decision-w-n1', { name: 'trace', prefixes: 'decision-weighted', continuations: 1 }, 'decision-weighted prefixes, N = 1'),
        world(
          'trace-decision-w-pool',
          { name: 'trace', prefixes: 'decision-weighted', leftover: 'pool' },
          'decision-weighted prefixes, leftover over the pool',
        ),
        world(
          'trace-decision-w-n1-pool',
          { name: 'trace', prefixes: 'decision-weighted', continuations: 1, leftover: 'pool' },
          'decision-weighted prefixes, N = 1, leftover over the pool',
        ),
        world(
          'trace-decision-w-expansion',
          { name: 'trace', prefixes: 'decision-weighted', rootValue: 'expansion-aware' },
          'decision-weighted prefixes, expansion-aware roots',
        ),
        // Third round: the learner, not the allocator — shared prefix turns counted once.
        world('trace-once', { name: 'trace' }, 'the paper, shared turns once in the loss', { policy: { sharedTurns: 'once' } }),
        world('trace-decision-w-pool-once', { name: 'trace', prefixes: 'decision-weighted', leftover: 'pool' }, 'decision-weighted + pool, shared turns once', {
          policy: { sharedTurns: 'once' },
        }),
        // One Adam pass per step instead of 4, for every arm alike: fewer passes over a few prompts' samples.
        world('grpo-e1', { name: 'grpo' }, 'grpo, policy.epochs 1', { policy: { epochs: 1 } }),
        world('trace-e1', { name: 'trace' }, 'the paper, policy.epochs 1', { policy: { epochs: 1 } }),
        world('trace-best-e1', BEST_TRACE, 'the recommended trace, policy.epochs 1', { policy: { epochs: 1 } }),
      ];
    case 'final':
      return [
        world('trace-best', BEST_TRACE, 'the frozen best trace configuration (decision-weighted prefixes, leftover over the pool)'),
        world('trace', { name: 'trace' }, 'the paper (faithful)'),
        world('grpo', { name: 'grpo' }, 'uniform groups, all B as bare rollouts'),
        { ...world('random-tree', { name: 'random-tree' }, 'uniform roots, continuations at random prefixes'), tier: 1 },
        ...[
          world('pcl', { name: 'pcl' }, 'adaptive roots only, all B as bare rollouts'),
          world('knapsack', { name: 'knapsack' }, 'Knapsack-RL on history, all B as bare rollouts'),
          world('entropy', { name: 'entropy' }, 'uniform roots, continuations by policy entropy'),
          world('dapo', { name: 'dapo' }, 'dynamic sampling (real cost shown)'),
        ].map((a) => ({ ...a, tier: 2 })),
      ];
    case 'final-gold':
      return [
        { ...world('trace-best-nogold', BEST_TRACE, 'the best trace configuration, predictor.useGold false', { predictor: { useGold: false } }), tier: 1 },
      ];
    case 'final-env':
      return [
        { ...world('env11-trace-best', BEST_TRACE, 'best trace on world env seed 11'), envSeed: 11, tier: 1 },
        { ...world('env11-grpo', { name: 'grpo' }, 'grpo on world env seed 11'), envSeed: 11, tier: 1 },
      ];
    case 'final-epochs1':
      // Third round (frozen before seeds 300–309): one Adam pass per step for every arm, chosen on seeds 0–4
      // where it raised grpo 0.442 → 0.491, trace 0.415 → 0.450, trace-best 0.440 → 0.477.
      return [
        world('trace-best-e1', BEST_TRACE, 'the recommended trace, policy.epochs 1', { policy: { epochs: 1 } }),
        world('trace-e1', { name: 'trace' }, 'the paper, policy.epochs 1', { policy: { epochs: 1 } }),
        world('grpo-e1', { name: 'grpo' }, 'grpo, policy.epochs 1', { policy: { epochs: 1 } }),
      ];
    case 'scale':
      // Fourth round, development (seeds 0–4): the learner again. Trees make large, lopsided groups
      // (6 leaves, anchors of 3), where GRPO's division by the std turns one rare outcome into a ±2
      // advantage; grpo's 2-leaf groups are always ±0.71. Dr. GRPO's unscaled deviations, for every arm alike.
      return [
        world('grpo', { name: 'grpo' }, 'uniform groups, 24 prompts × 2'),
        world('trace-best', BEST_TRACE, 'the recommended trace'),
        world('grpo-dr', { name: 'grpo' }, 'grpo, advantageScale none', { advantageScale: 'none' }),
        world('trace-best-dr', BEST_TRACE, 'the recommended trace, advantageScale none', { advantageScale: 'none' }),
        world('trace-dr', { name: 'trace' }, 'the paper, advantageScale none', { advantageScale: 'none' }),
      ];
    case 'roots':
      // Fourth round, development (seeds 0–4): bench/compare/credit.ts shows the arms whose roots follow
      // P(mixed) (trace, trace-best, pcl) barely teach "search again, then answer"; uniform roots do.
      // The recommended trace's prefixes and leftover on uniform roots, against random-tree and grpo.
      return [
        world('grpo', { name: 'grpo' }, 'uniform groups, 24 prompts × 2'),
        world('trace-best', BEST_TRACE, 'the recommended trace'),
        world('random-tree', { name: 'random-tree' }, 'uniform roots, continuations at random prefixes'),
        world('trace-best-uniform-root', UNIFORM_ROOT_TRACE, 'decision-weighted prefixes on uniform roots'),
      ];
    case 'final-roots':
      // Fourth round (frozen before seeds 400–409): the recommended trace on uniform roots, chosen on seeds
      // 0–4 where it was the first tree arm ahead of grpo on final accuracy (0.451 vs 0.442, +0.9 [−1.5, 3.3]).
      return [
        world('trace-best-uniform-root', UNIFORM_ROOT_TRACE, 'decision-weighted prefixes on uniform roots'),
        world('grpo', { name: 'grpo' }, 'uniform groups, 24 prompts × 2'),
        world('trace-best', BEST_TRACE, 'the recommended trace'),
        world('random-tree', { name: 'random-tree' }, 'uniform roots, continuations at random prefixes'),
      ];
    // The checks issue 13 asks of the final configuration, for the fourth round's (seeds 400–409): another
    // world (env seed 11), and the predictor without gold-answer features, paired with final-roots' own
    // arm (same label: run into the same --out, its runs are reused).
    case 'final-roots-env':
      return [
        { ...world('env11-trace-best-uniform-root', UNIFORM_ROOT_TRACE, 'decision-weighted prefixes on uniform roots, world env seed 11'), envSeed: 11 },
        { ...world('env11-grpo', { name: 'grpo' }, 'grpo on world env seed 11'), envSeed: 11 },
      ];
    case 'final-roots-gold':
      return [
        world('trace-best-uniform-root', UNIFORM_ROOT_TRACE, 'decision-weighted prefixes on uniform roots (final-roots’ arm)'),
        world('trace-best-uniform-root-nogold', UNIFORM_ROOT_TRACE, 'decision-weighted prefixes on uniform roots, predictor.useGold false', {
          predictor: { useGold: false },
        }),
      ];
    case 'final-roots-oracle':
      return [
        sim('sim-oracle', { name: 'oracle' }, 'solvers on the true probabilities'),
        sim('sim-trace-best-uniform-root', UNIFORM_ROOT_TRACE, 'decision-weighted prefixes on uniform roots, learned predictor'),
        sim('sim-grpo', { name: 'grpo' }, 'uniform groups'),
      ];
    case 'tinylm':
      // Issue 18: the frozen trace configurations against grpo and random-tree on a real token-level LM.
      // Tiers in the priority order, so a run the clock cuts short still has whole arms.
      return [
        world('trace-best', BEST_TRACE, 'the second round’s best trace, BEST_TRACE (decision-weighted prefixes, leftover over the pool)', TINY_LM),
        world('grpo', { name: 'grpo' }, 'uniform groups, all B as bare rollouts', TINY_LM),
        { ...world('random-tree', { name: 'random-tree' }, 'uniform roots, continuations at random prefixes', TINY_LM), tier: 1 },
        { ...world('trace', { name: 'trace' }, 'the paper (faithful)', TINY_LM), tier: 2 },
      ];
    case 'tinylm-roots':
      // Added after `tinylm` ran, with the configuration the world's fourth final had already made the
      // recommendation (uniform roots, decision-weighted prefixes; nothing tuned on the tiny LM). Same seeds
      // 100–104; run into tinylm's --out, grpo's runs (same label and config) are reused and paired.
      return [
        world(
          'trace-best-uniform-root',
          UNIFORM_ROOT_TRACE,
          'decision-weighted prefixes on uniform roots (the recommendation since the fourth world final)',
          TINY_LM,
        ),
        world('grpo', { name: 'grpo' }, 'uniform groups, all B as bare rollouts', TINY_LM),
      ];
    case 'tinylm-d':
      // Issue 18 again, from the stronger warm start: the fifth round's recommendation (uniform roots,
      // decision-weighted prefixes; nothing tuned on the tiny LM), grpo, random-tree, the paper's trace,
      // tiers in that priority order. Fresh seeds (700–704), its own --out.
      return [
        world('trace-rec', UNIFORM_ROOT_TRACE, 'decision-weighted prefixes on uniform roots (the recommendation)', TINY_LM_D),
        world('grpo', { name: 'grpo' }, 'uniform groups, all B as bare rollouts', TINY_LM_D),
        { ...world('random-tree', { name: 'random-tree' }, 'uniform roots, continuations at random prefixes', TINY_LM_D), tier: 1 },
        { ...world('trace', { name: 'trace' }, 'the paper (faithful)', TINY_LM_D), tier: 2 },
      ];
    case 'tinylm-d-lr': {
      // Development only (seeds 0–1), after tinylm-d: both arms fell below the 34 % warm start. Does a
      // third of the Adam step size (1e-4) stop the decline?
      const slow: ArmExtra = { ...TINY_LM_D, policy: { ...TINY_LM_D.policy, learningRate: 1e-4 } };
      return [
        world('grpo-lr1e4', { name: 'grpo' }, 'grpo, Adam 1e-4', slow),
        world('trace-rec-lr1e4', UNIFORM_ROOT_TRACE, 'uniform roots + decision-weighted prefixes, Adam 1e-4', slow),
      ];
    }
    case 'tinylm-d-fix': {
      // Development only (seeds 0–1), after the PPO pass became one Adam step on the whole batch (it was one
      // per packed grid, and grids follow length, hence outcome: one-sided steps). grpo only: does RL now
      // improve the 34 % warm start? Adam 1e-4 at B = 16 (tinylm-d-lr's grpo arm, before the fix: flat),
      // 3e-4 (tinylm-d's, before the fix: 0.34 → 0.26), and B = 32 as 8 prompts × 4 (more mixed groups a step).
      const at = (lr: number): ArmExtra => ({ ...TINY_LM_D, policy: { ...TINY_LM_D.policy, learningRate: lr } });
      return [
        world('grpo-fix-lr1e4', { name: 'grpo' }, 'grpo, one Adam step a pass, Adam 1e-4', at(1e-4)),
        world('grpo-fix-b32g4-lr1e4', { name: 'grpo', budget: 32, batchSize: 8 }, 'grpo, one Adam step a pass, B = 32 as 8 prompts × 4, Adam 1e-4', at(1e-4)),
        world('grpo-fix-lr3e4', { name: 'grpo' }, 'grpo, one Adam step a pass, Adam 3e-4', at(3e-4)),
      ];
    }
    case 'tinylm-b64': {
      // Development only (ran on seed 0, 30 steps), after tinylm-d-fix: at B = 16 a step rests on ~1.7 mixed
      // groups and no step size moved held-out accuracy. Four times the batch as 16 prompts × 4 (~6 mixed
      // groups a step, and 480 training questions seen in 30 steps instead of 240), at 1e-4 and at 2e-4.
      const at = (lr: number): ArmExtra => ({ ...TINY_LM_D, policy: { ...TINY_LM_D.policy, learningRate: lr } });
      return [
        world('grpo-b64g4-lr1e4', { name: 'grpo', budget: 64, batchSize: 16 }, 'grpo, B = 64 as 16 prompts × 4, Adam 1e-4', at(1e-4)),
        world('grpo-b64g4-lr2e4', { name: 'grpo', budget: 64, batchSize: 16 }, 'grpo, B = 64 as 16 prompts × 4, Adam 2e-4', at(2e-4)),
      ];
    }
    case 'tinylm-temp': {
      // Development only (ran on seed 0, 30 steps), after tinylm-b64: greedy held-out success is 0.33 but rollouts sampled
      // at τ = 1 succeed ~0.19 of the time, so RL sharpens a sampling tail that greedy decoding never
      // takes. Rollouts at τ < 1 (policy.temperature; the trainer's log π is the same tempered softmax)
      // sit closer to the greedy policy that evaluation measures. tinylm-b64's 2e-4 arm is the τ = 1 reference.
      const at = (temperature: number): ArmExtra => ({ ...TINY_LM_D, policy: { ...TINY_LM_D.policy, learningRate: 2e-4, temperature } });
      return [
        world('grpo-b64g4-lr2e4-t07', { name: 'grpo', budget: 64, batchSize: 16 }, 'grpo, B = 64 as 16 prompts × 4, Adam 2e-4, rollouts at τ = 0.7', at(0.7)),
        world('grpo-b64g4-lr2e4-t05', { name: 'grpo', budget: 64, batchSize: 16 }, 'grpo, B = 64 as 16 prompts × 4, Adam 2e-4, rollouts at τ = 0.5', at(0.5)),
      ];
    }
    case 'tinylm-s': {
      // Issue 18's comparison, ninth pre-registered round (fresh seeds 900–904): on the one setting whose
      // RL moved anything in development, grpo at B = 64 as 16 prompts × 4 with Adam 2e-4 (tinylm-b64: seed
      // 0's sampled held-out success 0.187 → 0.226 in 30 steps; greedy flat). The primary reading is the
      // sampled held-out success (eval.samples), the quantity RL maximises; greedy is reported beside it.
      // The tree arm is the current recommendation (ROOT_RESAMPLE_TRACE), nothing tuned on the tiny LM.
      const lm: ArmExtra = { ...TINY_LM_D, policy: { ...TINY_LM_D.policy, learningRate: 2e-4 } };
      return [
        world(
          'trace-rec',
          { ...ROOT_RESAMPLE_TRACE, budget: 64 },
          'the recommendation (uniform roots, decision-weighted prefixes, root resampling, N = ½)',
          lm,
        ),
        world('grpo', { name: 'grpo', budget: 64, batchSize: 16 }, 'uniform groups, 16 prompts × 4', lm),
        { ...world('random-tree', { name: 'random-tree', budget: 64 }, 'uniform roots, continuations at random prefixes', lm), tier: 1 },
        { ...world('trace', { name: 'trace', budget: 64 }, 'the paper (faithful)', lm), tier: 2 },
      ];
    }
    case 'mainscale':
      // Fifth round, development (seeds 0–4) at the main job's scale (B = 192, pool 64, 30 steps), where grpo
      // keeps learning (0.42 → 0.57 on the main job's dev seeds) and the recommended trace stalls near 0.49.
      // Is it coverage (trace learns from 32 prompts a step, grpo from 64)? grpo on 32 prompts × 6 asks that;
      // N = 1 gives the tree arm 48 prompts at the same B.
      return [
        world('grpo', { name: 'grpo' }, 'uniform groups, 64 prompts × 3'),
        world('trace-rec', UNIFORM_ROOT_TRACE, 'decision-weighted prefixes on uniform roots (the recommendation)'),
        world('grpo-32', { name: 'grpo', batchSize: 32 }, 'uniform groups on 32 prompts × 6 (trace-like coverage)'),
        world('trace-rec-n1', { ...UNIFORM_ROOT_TRACE, continuations: 1 }, 'the recommendation with N = 1 (more prompts)'),
        // Added after the four arms above ran (seeds 0–3 showed trace-rec ≈ grpo, and grpo-32 ≈ 7 points below
        // grpo: at this scale coverage matters). N = ½ gives the tree arm grpo's 64 prompts: 2 bare rollouts
        // each and one continuation at the best prefix, in place of grpo's third bare rollout.
        world('trace-rec-half', { ...UNIFORM_ROOT_TRACE, continuations: 0.5 }, 'the recommendation with N = ½ (grpo’s 64 prompts)'),
        world('random-tree-half', { name: 'random-tree', continuations: 0.5 }, 'random-tree with N = ½ (is the prefix choice worth anything?)'),
        // Added after the fifth final, for the next round: are the tree arms' updates too large for the
        // few prompts they rest on? Half the Adam step size, for grpo and the recommendation alike.
        world('grpo-lr05', { name: 'grpo' }, 'grpo, policy.learningRate 0.05', { policy: { learningRate: 0.05 } }),
        world('trace-rec-lr05', UNIFORM_ROOT_TRACE, 'the recommendation, policy.learningRate 0.05', { policy: { learningRate: 0.05 } }),
        // Sixth round: the root competes with the prefixes (rootResample). A continuation re-samples only
        // the turns after its branch point; where the prompt's bare outcomes agree, one more bare rollout may
        // be worth more. N = ½ is grpo's 64 prompts with the third trajectory chosen per prompt.
        world('trace-rs', { ...UNIFORM_ROOT_TRACE, rootResample: true }, 'the recommendation + rootResample'),
        world('trace-rs-half', ROOT_RESAMPLE_TRACE, 'the recommendation + rootResample, N = ½ (grpo’s 64 prompts)'),
        // Eighth round: one continuation pool for the step (prefixBudget: shared) on the recommendation, so
        // the prompts whose outcomes a continuation (or a re-sample) can flip get it.
        world('trace-rs-half-shared', { ...ROOT_RESAMPLE_TRACE, prefixBudget: 'shared' }, 'the recommendation with one continuation pool for the step'),
      ];
    case 'final-main':
      // Fifth final (frozen before seeds 500–509): the main job's scale (B = 192, pool 64, 30 steps) with the
      // recommendation as it stands; mainscale's development (seeds 0–4) found no variant ahead of it.
      return [
        world('trace-rec', UNIFORM_ROOT_TRACE, 'decision-weighted prefixes on uniform roots (the recommendation)'),
        world('grpo', { name: 'grpo' }, 'uniform groups, 64 prompts × 3'),
        { ...world('trace', { name: 'trace' }, 'the paper (faithful)'), tier: 1 },
      ];
    case 'final-main-env':
      // The fifth final's check on another world (env seed 11), same seeds and scale (defined before final-main's results).
      return [
        { ...world('env11-trace-rec', UNIFORM_ROOT_TRACE, 'the recommendation on world env seed 11'), envSeed: 11 },
        { ...world('env11-grpo', { name: 'grpo' }, 'grpo on world env seed 11'), envSeed: 11 },
      ];
    case 'final-rs':
      // Sixth final (frozen before seeds 600–609): rootResample at N = ½, the one mainscale variant level
      // with grpo in development (+0.5 [−0.4, 1.4], seeds 0–4), against grpo (final-rs-env: both on world env seed 11).
      return [
        world('trace-rs-half', ROOT_RESAMPLE_TRACE, 'the recommendation + rootResample, N = ½ (grpo’s 64 prompts)'),
        world('grpo', { name: 'grpo' }, 'uniform groups, 64 prompts × 3'),
      ];
    case 'final-rs-env':
      // The sixth final's check on another world (env seed 11), same seeds and scale, run after final-rs.
      return [
        { ...world('env11-trace-rs-half', ROOT_RESAMPLE_TRACE, 'trace-rs-half on world env seed 11'), envSeed: 11, tier: 1 },
        { ...world('env11-grpo', { name: 'grpo' }, 'grpo on world env seed 11'), envSeed: 11, tier: 1 },
      ];
    case 'units-trajectories':
    case 'units-tokens': {
      // Issue 33's development reading (not a final; seeds 0–4): the sixth final's configuration (frozen
      // at d4d2ae1) with today's trace estimator (prompt-level term), at equal trajectories (B = 192) and
      // at equal generated tokens, on world env seed 23, which no earlier study used. The token budget,
      // 11,500 a step, is grpo's mean spend at B = 192 trajectories in the sixth final (343,616 tokens
      // over 30 steps), fixed before these runs.
      const tokens = experiment === 'units-tokens';
      const unit = tokens ? { unit: 'tokens', budget: 11_500 } : {};
      const tag = tokens ? 'tok-' : 'traj-';
      const at = tokens ? 'at 11,500 tokens a step' : 'at 192 trajectories a step';
      return [
        { ...world(`${tag}trace-rs-half`, { ...ROOT_RESAMPLE_TRACE, ...unit }, `the sixth final's trace (root resampling, N = ½), ${at}`), envSeed: 23 },
        { ...world(`${tag}grpo`, { name: 'grpo', ...unit }, `uniform groups, ${at}`), envSeed: 23 },
      ];
    }
    case 'late-dev': {
      // Issue 34 §3 development (seeds 0–4, not a final): the late-decision world (env.world.profile: late)
      // at equal generated tokens. 15,000 tokens a step is grpo's spend at B = 192 trajectories in the
      // first steps of a 3-step probe on this world (14,307, 14,313, 15,881; seed 0), fixed before these runs.
      const late: ArmExtra = { env: { world: { profile: 'late' } } };
      const tokens = { unit: 'tokens', budget: LATE_TOKENS };
      const lateWorld = (label: string, strategy: Record<string, unknown>, meaning: string) =>
        world(label, { ...strategy, ...tokens }, `${meaning}, at ${LATE_TOKENS.toLocaleString('en')} tokens a step`, late);
      return [
        lateWorld('late-grpo', { name: 'grpo' }, 'uniform groups'),
        lateWorld('late-trace', { name: 'trace' }, 'the paper (adaptive roots + prefixes, N = 2)'),
        lateWorld('late-trace-rs-half', ROOT_RESAMPLE_TRACE, 'the sixth final’s trace (uniform roots, decision-weighted prefixes, root resampling, N = ½)'),
        lateWorld('late-trace-rs-half-b2', { ...ROOT_RESAMPLE_TRACE, branchFrom: 2 }, 'trace-rs-half branching from turn 2 on'),
        lateWorld(
          'late-trace-rs-adaptive-b2',
          { name: 'trace', roots: 'uniform', rootResample: true, continuations: 0.5, branchFrom: 2 },
          'uniform roots, the paper’s prefix solver, root resampling, N = ½, branching from turn 2 on',
        ),
      ];
    }
    case 'final-late': {
      // Issue 34 §3's first pre-registered final of round two (frozen before seeds 1000–1004 ran; the commit
      // is in BENCHMARKS.md): the late-decision world at 15,000 generated tokens a step, the arms of §3.
      // LATE_BEST is late-dev's winner by the rule in docs/experiments/2026-12-01-late-dev.md. "grpo with the
      // tree-grpo estimator" is read as Tree-GRPO (arXiv 2509.21240): random expansion with its estimator, since
      // on grpo's flat groups tree-grpo only adds each leaf's own reward. dapo's target is whole groups, so it
      // runs at 192 trajectories a step and is compared by the tokens it really spends.
      const late: ArmExtra = { env: { world: { profile: 'late' } } };
      const tokens = { unit: 'tokens', budget: LATE_TOKENS };
      const at = `at ${LATE_TOKENS.toLocaleString('en')} tokens a step`;
      const lateWorld = (label: string, strategy: Record<string, unknown>, meaning: string, extra: ArmExtra = {}, tier = 0): Arm => ({
        ...world(label, strategy, meaning, { ...late, ...extra }),
        tier,
      });
      return [
        lateWorld('fl-trace-best', { ...LATE_BEST, ...tokens }, `late-dev's best trace (${JSON.stringify(LATE_BEST)}), ${at}`),
        lateWorld('fl-grpo', { name: 'grpo', ...tokens }, `uniform groups, ${at}`),
        lateWorld('fl-trace', { name: 'trace', ...tokens }, `the paper (adaptive roots + prefixes, N = 2, the trace estimator), ${at}`),
        lateWorld(
          'fl-tree-grpo',
          { name: 'random-tree', ...tokens },
          `Tree-GRPO: continuations at random prefixes with the tree-grpo estimator, ${at}`,
          { estimator: 'tree-grpo' },
          1,
        ),
        lateWorld('fl-pcl', { name: 'pcl', ...tokens }, `adaptive roots only (the predictor's P(mixed)), ${at}`, {}, 1),
        lateWorld('fl-knapsack', { name: 'knapsack', ...tokens }, `Knapsack-RL on each prompt's history, ${at}`, {}, 1),
        lateWorld('fl-random-tree', { name: 'random-tree', ...tokens }, `continuations at random prefixes (the trace estimator), ${at}`, {}, 1),
        lateWorld(
          'fl-dapo',
          { name: 'dapo' },
          'dynamic sampling until ⌊192/8⌋ mixed groups, at 192 trajectories a step (cap 4 · 192); its real tokens shown',
          {},
          1,
        ),
      ];
    }
    case 'final-late-20': {
      // Issue 34 §3, the late world's decisive test (pre-registered 2026-12-02, docs/experiments/2026-12-02-final-late-20.md;
      // frozen before seeds 1010–1029 ran, the commit in BENCHMARKS.md): final-late's setting and its two core
      // arms, unchanged, on 20 fresh seeds, since 5 seeds gave intervals of ± 6 points on this world.
      return arms('final-late')
        .filter((a) => a.label === 'fl-trace-best' || a.label === 'fl-grpo')
        .map((a) => ({ ...a, label: a.label.replace(/^fl-/, 'f20-') }));
    }
    case 'headroom-prefix-turns':
    case 'headroom-prefix-samples':
    case 'headroom-prefix-batch': {
      // Oracle prefix headroom in the learnable simulator: do prefixes add anything over the oracle's roots
      // alone, when both see the true p? Equal generated tokens (SIM_TOKENS, what grpo's 192 trajectories
      // cost there), each normalisation of the surrogate its own experiment so grpo is paired within it.
      // No arm reads Ṽ, so all train the running rate.
      const normalise = experiment.slice('headroom-prefix-'.length);
      const tokens = { unit: 'tokens', budget: SIM_TOKENS };
      const extra: ArmExtra = { ...SIM_LEARN, policy: { ...SIM_LEARN.policy, normalise }, predictor: { kind: 'global' } };
      const at = (label: string, strategy: Record<string, unknown>, meaning: string) =>
        sim(`hp-${normalise}-${label}`, { ...strategy, ...tokens }, `${meaning}, normalise ${normalise}`, extra);
      return [
        at('grpo', { name: 'grpo' }, 'uniform groups'),
        at('pcl-oracle', { name: 'oracle', continuations: 0 }, 'roots only: the exact root solver on the true p'),
        at('oracle-half', { name: 'oracle', continuations: 0.5 }, 'the exact root and prefix solvers on the true p, N = ½'),
        at('oracle-n2', { name: 'oracle', continuations: 2 }, 'the exact root and prefix solvers on the true p, N = 2'),
        at('oracle-uniform-roots', { name: 'oracle', roots: 'uniform', continuations: 2 }, 'uniform roots, the prefix solver on the true p, N = 2'),
      ];
    }
    case 'elasticity-world':
    case 'elasticity-late': {
      // Budget elasticity: grpo at ½×, 1× and 2× the finals' tokens a step, so a final's Δ can be read as a
      // compute multiplier (bench/compare/elasticity.ts). Development seeds; grpo never reads Ṽ.
      const late = experiment === 'elasticity-late';
      const budget = late ? LATE_TOKENS : WORLD_TOKENS;
      const extra: ArmExtra = { ...(late ? { env: { world: { profile: 'late' } } } : {}), predictor: { kind: 'global' } };
      return [0.5, 1, 2].map((c) =>
        world(
          `el${late ? 'l' : 'w'}-grpo-x${c}`,
          { name: 'grpo', unit: 'tokens', budget: Math.round(budget * c) },
          `grpo at ${c}× ${budget.toLocaleString('en')} tokens a step`,
          extra,
        ),
      );
    }
    case 'select-sim': {
      // Root headroom in the prompt-selection regime, where it can be measured exactly: 256 candidates of
      // 480 training prompts (each recurs about every other step), grpo's fixed G = 8 on ⌊B / 8⌋ of them at
      // random, against the oracle's roots over all 256 (exact p, and p seen through k fresh outcomes), pcl
      // on the posterior, and guarded. Equal tokens; the first arm listed is grpo (paired: 'grpo').
      const tokens = { unit: 'tokens', budget: SIM_TOKENS };
      const base: ArmExtra = { ...SIM_LEARN, env: { questions: 600 }, pool: 256 };
      const cheap: ArmExtra = { ...base, predictor: { kind: 'global' } };
      const learned: ArmExtra = { ...base, predictor: { kind: 'posterior' } };
      const at = (label: string, strategy: Record<string, unknown>, meaning: string, extra: ArmExtra) =>
        sim(`ss-${label}`, { ...strategy, ...tokens }, meaning, extra);
      return [
        at('grpo', { name: 'grpo', groupSize: 8 }, 'grpo, G = 8 on ⌊B / 8⌋ random prompts of 256', cheap),
        at('grpo-g2', { name: 'grpo' }, 'grpo, default G (⌊B / pool⌋ → 2) on ⌊B / 2⌋ random prompts of 256', cheap),
        at('pcl-oracle', { name: 'oracle', continuations: 0 }, 'the exact root solver on the true p over all 256', cheap),
        at('pcl-oracle-k4', { name: 'oracle', continuations: 0, truthSamples: 4 }, 'the root solver on p seen through 4 fresh outcomes', cheap),
        at('pcl-oracle-k8', { name: 'oracle', continuations: 0, truthSamples: 8 }, 'the root solver on p seen through 8 fresh outcomes', cheap),
        at('pcl-posterior', { name: 'pcl' }, 'pcl on the MLP-prior per-prompt posterior over all 256', learned),
        at('guarded', { name: 'guarded', groupSize: 8 }, 'guarded: grpo G = 8 with ε = ¼ to the root solver on the posterior', learned),
      ];
    }
    case 'select-world':
    case 'select-late': {
      // The prompt-selection regime on the world (default or late-decision): 256 candidates a step of the
      // training split, grpo's fixed G = 8, at the finals' tokens a step; guarded and pcl read the posterior.
      const late = experiment === 'select-late';
      const tokens = { unit: 'tokens', budget: late ? LATE_TOKENS : WORLD_TOKENS };
      const base: ArmExtra = { ...(late ? { env: { world: { profile: 'late' } } } : {}), pool: 256 };
      const batch = { policy: { normalise: 'batch' } };
      const at = (label: string, strategy: Record<string, unknown>, meaning: string, extra: ArmExtra) =>
        world(`s${late ? 'l' : 'w'}-${label}`, { ...strategy, ...tokens }, meaning, { ...base, ...extra });
      return [
        at('grpo', { name: 'grpo', groupSize: 8 }, 'grpo, G = 8 on ⌊B / 8⌋ random prompts of 256', { predictor: { kind: 'global' } }),
        at('grpo-batch', { name: 'grpo', groupSize: 8 }, 'as grpo, the surrogate divided by every sampled turn (normalise batch)', {
          predictor: { kind: 'global' },
          ...batch,
        }),
        at('guarded', { name: 'guarded', groupSize: 8 }, 'guarded: grpo G = 8 with ε = ¼ to the root solver on the posterior', {
          predictor: { kind: 'posterior' },
        }),
        at('guarded-batch', { name: 'guarded', groupSize: 8 }, 'guarded, normalise batch', { predictor: { kind: 'posterior' }, ...batch }),
        at('pcl-posterior', { name: 'pcl' }, 'pcl on the posterior over all 256', { predictor: { kind: 'posterior' } }),
        // Added after the five arms above had started (seeds 0–1 seen): grpo's G = 3 is what every earlier
        // final ran (B / pool at pool 64), so the best grpo here may not be G = 8; guarded on that G too.
        at('grpo-g3', { name: 'grpo', groupSize: 3 }, 'grpo, G = 3 on ⌊B / 3⌋ random prompts of 256 (the earlier finals’ group size)', {
          predictor: { kind: 'global' },
        }),
        at('guarded-g3', { name: 'guarded', groupSize: 3 }, 'guarded on grpo’s G = 3, ε = ¼, posterior', { predictor: { kind: 'posterior' } }),
        // Added after round three's final (defensive importance sampling, docs/allocation.md §8): development
        // seeds only, paired with grpo-g3's records of the same seeds.
        at('defensive-g3', { name: 'defensive', groupSize: 3, draws: 'independent' }, 'defensive on G = 3, ε = ¼, posterior', {
          predictor: { kind: 'posterior' },
        }),
        at('defensive-g3-e50', { name: 'defensive', groupSize: 3, explore: 0.5, draws: 'independent' }, 'defensive on G = 3, ε = ½, posterior', {
          predictor: { kind: 'posterior' },
        }),
        // After the two above (seeds 0–4 seen): their repeated draws cost distinct prompts, so draws without repeats.
        at('defensive-g3-sys', { name: 'defensive', groupSize: 3, draws: 'systematic' }, 'defensive on G = 3, ε = ¼, systematic draws, posterior', {
          predictor: { kind: 'posterior' },
        }),
        // Added 2026-12-03, after every final: root headroom on the world itself, the oracle's roots over all
        // 256 on p seen through k fresh rollouts of the current policy (train/probe.ts, outside the budget);
        // development seeds only, read against grpo-g3 rerun at the same sources.
        at('oracle-k8', { name: 'oracle', continuations: 0, truthSamples: 8 }, 'the root solver on p seen through 8 fresh rollouts (uncharged)', {
          predictor: { kind: 'global' },
        }),
        at('oracle-k4', { name: 'oracle', continuations: 0, truthSamples: 4 }, 'the root solver on p seen through 4 fresh rollouts (uncharged)', {
          predictor: { kind: 'global' },
        }),
        // After oracle-k2's seeds 0–4 (+4.5, mostly m = 2 on prompts seen mixed): grpo's own G = 2 on 96 random
        // prompts, to tell the oracle's choice of prompts from its group size.
        at('grpo-g2', { name: 'grpo', groupSize: 2 }, 'grpo, G = 2 on ⌊B / 2⌋ random prompts of 256', { predictor: { kind: 'global' } }),
        // After oracle-k8's seeds 0–4 (+4.2 points over grpo G = 3): how the headroom decays with less evidence.
        at('oracle-k2', { name: 'oracle', continuations: 0, truthSamples: 2 }, 'the root solver on p seen through 2 fresh rollouts (uncharged)', {
          predictor: { kind: 'global' },
        }),
        // Added after the probe arms, as the last root-scorer test (lab/pi-gold.ts, a plugin strategy the
        // workers register): the root solver on the current policy's teacher-forced probability of each
        // candidate's gold trajectory, a score that reads gold metadata; uncharged, then charged at the lab's
        // declared prefill price. Development seeds only, paired with grpo-g3 and oracle-k2 rerun beside it.
        at(
          'pigold',
          { name: 'pigold', score: 'product' },
          'the root solver on π_gold, the policy’s teacher-forced probability of the gold trajectory (uncharged)',
          {
            predictor: { kind: 'global' },
          },
        ),
        at(
          'pigold-charged',
          { name: 'pigold', score: 'product', prefillPrice: PREFILL_PRICE },
          'π_gold charged: each step’s cap less 1/5 of a generated token per teacher-forced token',
          { predictor: { kind: 'global' } },
        ),
      ];
    }
    case 'final-r3-world': {
      // Round three's pre-registered final (docs/experiments/2026-12-02-round-three-development.md §6,
      // frozen before any seed ≥ 1030 ran): the prompt-selection regime of select-world (256 candidates a
      // step, 11,500 tokens) with grpo at its best development group size, G = 3, against guarded on the
      // same G. Tier 0 is the decisive pair; tier 1 the G = 8 pair (TRL's usual G) and grpo's batch
      // normalisation; tier 2 the other baselines.
      const tokens = { unit: 'tokens', budget: WORLD_TOKENS };
      const at = (label: string, strategy: Record<string, unknown>, meaning: string, tier: number, extra: ArmExtra) => ({
        ...world(`r3w-${label}`, { ...strategy, ...tokens }, meaning, { pool: 256, ...extra }),
        tier,
      });
      const cheap = { predictor: { kind: 'global' } };
      const posterior = { predictor: { kind: 'posterior' } };
      return [
        at('guarded-g3', { name: 'guarded', groupSize: 3 }, 'guarded on grpo’s G = 3 (ε = ¼, posterior)', 0, posterior),
        at('grpo-g3', { name: 'grpo', groupSize: 3 }, 'grpo, G = 3 on ⌊B / 3⌋ random prompts of 256', 0, cheap),
        at('guarded-g8', { name: 'guarded', groupSize: 8 }, 'guarded on grpo’s G = 8', 1, posterior),
        at('grpo-g8', { name: 'grpo', groupSize: 8 }, 'grpo, G = 8 (TRL’s usual num_generations)', 1, cheap),
        at('grpo-g3-batch', { name: 'grpo', groupSize: 3 }, 'grpo G = 3, normalise batch (verl’s token-mean)', 1, { ...cheap, policy: { normalise: 'batch' } }),
        at('trace-best', { ...LATE_BEST }, 'the recommended trace (round two’s best)', 2, {}),
        at('pcl-posterior', { name: 'pcl' }, 'pcl on the posterior over all 256', 2, posterior),
        at('tree-grpo', { name: 'random-tree' }, 'Tree-GRPO: random prefixes, the tree-grpo estimator', 2, { estimator: 'tree-grpo' }),
      ];
    }
    case 'final-r4-defensive': {
      // Pre-registered 2026-12-03 (docs/experiments/2026-12-03-final-r3-world.md, "Pre-registration of
      // final-r4-defensive"), frozen before any of its seeds (1070–1109) ran: defensive importance sampling
      // against grpo at its best G = 3, in final-r3-world's setting. Tier 0 the primary pair, tier 1 the
      // independent draws the variance bound is proved for.
      const tokens = { unit: 'tokens', budget: WORLD_TOKENS };
      const at = (label: string, strategy: Record<string, unknown>, meaning: string, tier: number, extra: ArmExtra) => ({
        ...world(`r4d-${label}`, { ...strategy, ...tokens }, meaning, { pool: 256, ...extra }),
        tier,
      });
      const posterior = { predictor: { kind: 'posterior' } };
      return [
        at('defensive-sys', { name: 'defensive', groupSize: 3, draws: 'systematic' }, 'defensive, G = 3, ε = ¼, systematic draws, posterior', 0, posterior),
        at('grpo-g3', { name: 'grpo', groupSize: 3 }, 'grpo, G = 3 on ⌊B / 3⌋ random prompts of 256', 0, { predictor: { kind: 'global' } }),
        at('defensive', { name: 'defensive', groupSize: 3, draws: 'independent' }, 'defensive, G = 3, ε = ¼, independent draws, posterior', 1, posterior),
      ];
    }
    case 'final-r2-world':
    case 'final-r2-math':
    case 'final-r2-world-env37':
    case 'final-r2-world-env53':
    case 'final-r2-late-env37':
    case 'final-r2-late-env53':
    case 'final-r2-math-env37':
    case 'final-r2-math-env53':
      return roundTwo(experiment, world, math);
    case 'final-math':
      // Seventh final (frozen before seeds 800–809): the sparse-reward regime the paper targets. math-world's
      // embedded policy starts from zero weights at 1–3 % success, so grpo's groups are almost never mixed.
      // The only development: 6-step runs on seeds 0–4 (BENCHMARKS.md, math-world) and one 10-step smoke
      // run of trace and grpo on seed 0 (timing and sanity).
      return [
        math('math-trace', { name: 'trace' }, 'the paper (faithful): adaptive roots + adaptive prefixes, N = 2'),
        math('math-grpo', { name: 'grpo' }, 'uniform groups, 64 prompts × 3'),
        math('math-trace-rec', UNIFORM_ROOT_TRACE, 'the world’s recommendation: uniform roots, decision-weighted prefixes'),
        { ...math('math-dapo', { name: 'dapo' }, 'dynamic sampling until ⌊B/8⌋ mixed groups (cap 4B; its real cost shown)'), tier: 1 },
      ];
    case 'math-shared':
      // Eighth round, development (seeds 0–4) on math-world at the seventh final's scale: `prefixBudget:
      // shared` (one continuation pool for the step) against the paper's per-prompt budget, where the
      // seventh final found that a prompt's continuations rarely flip its all-fail rollouts.
      return [
        math('math-trace-shared', { name: 'trace', prefixBudget: 'shared' }, 'the paper with one continuation pool for the step'),
        math('math-trace', { name: 'trace' }, 'the paper (faithful): adaptive roots + adaptive prefixes, N = 2'),
        math('math-grpo', { name: 'grpo' }, 'uniform groups, 64 prompts × 3'),
        math('math-dw-shared', { name: 'trace', prefixes: 'decision-weighted', prefixBudget: 'shared' }, 'decision-weighted prefixes, one continuation pool'),
        math(
          'math-rs-shared',
          { ...ROOT_RESAMPLE_TRACE, prefixBudget: 'shared' },
          'the recommendation (uniform roots, decision-weighted prefixes, root re-sampling, N = ½) with one continuation pool',
        ),
      ];
    case 'sim-learn': {
      // Issue 34 §1: what share of the oracle's gain over grpo learned roots capture, on exact J (no
      // sampling noise). pcl on the true p is the oracle strategy with N = 0 (its root solver on p over
      // all of B, no prefixes). Arms whose allocation never reads Ṽ train the running rate (the same rollouts).
      const at = (predictor: Record<string, unknown>): ArmExtra => ({ ...SIM_LEARN, predictor });
      const cheap = at({ kind: 'global' });
      return [
        sim('sl-grpo', { name: 'grpo' }, 'uniform groups, 64 prompts × 3', cheap),
        sim('sl-pcl-oracle', { name: 'oracle', continuations: 0 }, 'pcl on the true p (the exact root solver, all B on roots)', cheap),
        sim('sl-pcl-mlp', { name: 'pcl' }, 'pcl on the shared MLP Ṽ', at({ kind: 'mlp' })),
        sim('sl-pcl-beta', { name: 'pcl' }, 'pcl on the per-prompt Beta-Bernoulli', at({ kind: 'beta' })),
        // Added after the four arms above ran (seeds 0–2): the shared MLP as the prior of a per-prompt
        // posterior (predictor.kind posterior), as it is and forgetting old evidence as the policy moves.
        sim('sl-pcl-posterior', { name: 'pcl' }, 'pcl on the MLP-prior per-prompt posterior (k₀ = 4, no discount)', at({ kind: 'posterior' })),
        sim(
          'sl-pcl-posterior-d08',
          { name: 'pcl' },
          'pcl on the MLP-prior posterior, discount λ = 0.8',
          at({ kind: 'posterior', posterior: { discount: 0.8 } }),
        ),
        // Added 2026-12-02 (development): the posterior arm spread B over 53 prompts a step where the oracle
        // concentrates on 33; a weaker prior (k₀ = 1, 2) lets one visit's outcomes discard a solved prompt.
        sim('sl-pcl-posterior-k1', { name: 'pcl' }, 'pcl on the MLP-prior posterior, k₀ = 1', at({ kind: 'posterior', posterior: { strength: 1 } })),
        sim('sl-pcl-posterior-k2', { name: 'pcl' }, 'pcl on the MLP-prior posterior, k₀ = 2', at({ kind: 'posterior', posterior: { strength: 2 } })),
        // The value of evidence (2026-12-02, development): pcl on the true p seen through k fresh outcomes a
        // prompt and step (oracle truthSamples), an upper bound for a per-prompt predictor with k outcomes.
        // Two posterior variants ran here on 2026-12-02 and were removed as measured worse (their records stay in
        // out-dev-sim-learn; the code is at cbbae25): sl-pcl-posterior-pop(-d08), a population prior over success
        // rates, and sl-pcl-posterior-ft(-d08), rollouts counted by the MLP's prediction after their first turn
        // (docs/experiments/2026-12-02-root-evidence-and-value.md).
        ...[2, 4, 8, 16, 64].map((k) =>
          sim(`sl-pcl-oracle-k${k}`, { name: 'oracle', continuations: 0, truthSamples: k }, `pcl on the true p seen through ${k} fresh outcomes a step`, cheap),
        ),
        // The tree arms after the root measurement (tier 1), so a run cut short by the clock still has it.
        { ...sim('sl-trace', { name: 'trace' }, 'the paper’s trace on the shared MLP Ṽ', at({ kind: 'mlp' })), tier: 1 },
        { ...sim('sl-trace-uniform-root', UNIFORM_ROOT_TRACE, 'uniform roots, decision-weighted prefixes on the MLP Ṽ', at({ kind: 'mlp' })), tier: 1 },
      ];
    }
    case 'final-oracle':
      return [
        sim('sim-oracle', { name: 'oracle' }, 'solvers on the true probabilities'),
        sim('sim-trace-best', BEST_TRACE, 'the best trace configuration on the learned predictor'),
        sim('sim-grpo', { name: 'grpo' }, 'uniform groups'),
      ].map((a) => ({ ...a, tier: 3 }));
  }
}

/**
 * Issue 34 §3's remaining pre-registered finals (frozen before seeds 1005–1009 ran; the commit is in
 * BENCHMARKS.md and docs/experiments/2026-12-01-final-r2.md). LATE_BEST, chosen on late-dev and not
 * tuned on any of these settings, against grpo and the paper's trace at equal generated tokens:
 *  - tier 0: the default world (env seed 7) at the main job's scale, WORLD_TOKENS a step; math-world
 *    (env seed 7), MATH_TOKENS a step;
 *  - tier 1: LATE_BEST and grpo on two world seeds no study used (37, 53): the default world, the
 *    late-decision world (LATE_TOKENS) and math-world;
 *  - tier 2: the other baselines of §3 on the default world and math-world (Tree-GRPO, pcl, knapsack,
 *    random-tree, dapo at 192 trajectories with its real tokens shown).
 * Each setting is its own experiment so its paired table compares arms on the same world.
 */
function roundTwo(
  experiment:
    | 'final-r2-world'
    | 'final-r2-math'
    | 'final-r2-world-env37'
    | 'final-r2-world-env53'
    | 'final-r2-late-env37'
    | 'final-r2-late-env53'
    | 'final-r2-math-env37'
    | 'final-r2-math-env53',
  world: (label: string, strategy: Record<string, unknown>, meaning: string, extra?: ArmExtra) => Arm,
  math: (label: string, strategy: Record<string, unknown>, meaning: string, extra?: ArmExtra) => Arm,
): Arm[] {
  const [, , setting, envTag] = experiment.split('-') as [string, string, 'world' | 'math' | 'late', string | undefined];
  const budget = setting === 'math' ? MATH_TOKENS : setting === 'late' ? LATE_TOKENS : WORLD_TOKENS;
  const tokens = { unit: 'tokens', budget };
  const at = `at ${budget.toLocaleString('en')} tokens a step`;
  const envSeed = envTag ? Number(envTag.slice(3)) : undefined;
  const tag = `r2${setting[0]}${envSeed ?? ''}`;
  const base: ArmExtra = setting === 'late' ? { env: { world: { profile: 'late' } } } : {};
  const arm = (name: string, strategy: Record<string, unknown>, meaning: string, tier: number, extra: ArmExtra = {}): Arm => {
    const a = (setting === 'math' ? math : world)(`${tag}-${name}`, strategy, meaning, { ...base, ...extra });
    return { ...a, tier, ...(envSeed === undefined ? {} : { envSeed }) };
  };
  const where = envSeed === undefined ? '' : ` on world seed ${envSeed}`;
  const core = [
    arm('trace-best', { ...LATE_BEST, ...tokens }, `late-dev's best trace (${JSON.stringify(LATE_BEST)}), ${at}${where}`, envSeed === undefined ? 0 : 1),
    arm('grpo', { name: 'grpo', ...tokens }, `uniform groups, ${at}${where}`, envSeed === undefined ? 0 : 1),
  ];
  if (envSeed !== undefined) return core;
  return [
    ...core,
    arm('trace', { name: 'trace', ...tokens }, `the paper (adaptive roots + prefixes, N = 2, the trace estimator), ${at}`, 0),
    arm('tree-grpo', { name: 'random-tree', ...tokens }, `Tree-GRPO: continuations at random prefixes with the tree-grpo estimator, ${at}`, 2, {
      estimator: 'tree-grpo',
    }),
    arm('pcl', { name: 'pcl', ...tokens }, `adaptive roots only (the predictor's P(mixed)), ${at}`, 2),
    arm('knapsack', { name: 'knapsack', ...tokens }, `Knapsack-RL on each prompt's history, ${at}`, 2),
    arm('random-tree', { name: 'random-tree', ...tokens }, `continuations at random prefixes (the trace estimator), ${at}`, 2),
    arm('dapo', { name: 'dapo' }, 'dynamic sampling until ⌊192/8⌋ mixed groups, at 192 trajectories a step (cap 4 · 192); its real tokens shown', 2),
  ];
}

/**
 * Strategies whose allocation never reads the predictor's Ṽ. In the final experiments they run with the
 * cheap running-rate predictor instead of the MLP: their rollouts, updates and accuracy are exactly the
 * same (Ṽ only steers trace, oracle and pcl), and the MLP's training is most of a step's CPU time on
 * this shared 2-core machine. Their predictor-quality metrics are then the running rate's.
 */
const PREDICTOR_FREE = new Set(['grpo', 'dapo', 'random-tree', 'entropy', 'knapsack']);

/** --env-questions: the world's questions, or math-world's generated problems (both before the test split). */
function envSize(env: Arm['env'], n: number | undefined): Record<string, unknown> {
  if (n === undefined) return {};
  return env === 'world' ? { questions: n } : env === 'math-world' ? { math: { problems: n } } : {};
}

/** The raw `trace-rl train` configuration of one arm and seed (validated by the caller). */
export function runConfig(arm: Arm, seed: number, scale: Scale): Record<string, unknown> {
  const name = arm.strategy.name as StrategyName;
  return {
    arm: arm.label,
    seed,
    steps: scale.steps,
    pool: arm.extra?.pool ?? scale.pool,
    env: { kind: arm.env, seed: arm.envSeed ?? scale.envSeed, ...envSize(arm.env, scale.envQuestions), ...arm.extra?.env },
    // An arm that names trace without a preset means the paper plus the options it lists, as when it was frozen.
    strategy: { name, ...optionsTakenBy(name, { budget: scale.budget, continuations: 2, ...(name === 'trace' ? { preset: 'paper' } : {}), ...arm.strategy }) },
    eval: { every: scale.evalEvery, questions: scale.evalQuestions, ...(scale.evalSamples ? { samples: scale.evalSamples } : {}) },
    ...(arm.extra?.predictor ? { predictor: arm.extra.predictor } : {}),
    ...(arm.extra?.estimator ? { estimator: arm.extra.estimator } : {}),
    ...(arm.extra?.advantageScale ? { advantageScale: arm.extra.advantageScale } : {}),
    ...(arm.extra?.policy ? { policy: arm.extra.policy } : {}),
    ...(arm.extra?.engine ? { engine: arm.extra.engine } : {}),
    ...(scale.cheapPredictorForBaselines && PREDICTOR_FREE.has(String(arm.strategy.name)) ? { predictor: { kind: 'global' } } : {}),
  };
}
