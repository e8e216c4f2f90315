/**
 * The pre-registered finals of TRACE vs GRPO: what each froze and where its committed numbers live.
 * Only descriptions here; every number in the finals table is read by tables.ts from the out folder.
 *
 * Two kinds of source, because the per-run records (`<out>/records/*.json`, written by analyse) came
 * late: where both arms have records the row is paired from them (pool.ts's statistics); the earlier
 * finals whose per-seed numbers were not kept have only what analyse printed when they ran
 * (`summary.md` / `summary.json`, computed from the run folders), so their rows are read from that.
 */
export interface FinalSpec {
  name: string;
  /** Commit the configuration was frozen at, before its seeds ran. */
  frozen: string;
  setting: string;
  /** What the trace arm is, in words. */
  arm: string;
  /** Out folder under bench/compare. */
  out: string;
  /** The experiment (a `### name` section of summary.md, a key of summary.json). */
  experiment: string;
  trace: string;
  grpo: string;
  /** The same pair on world env seed 11, a second world (robustness check). */
  env?: { experiment: string; trace: string; grpo: string };
  /** The pre-registered reading of held-out success (default greedy); with records holding both, the other is shown beside it. */
  reading?: 'greedy' | 'sampled';
  /** What the README's "interval above 0" line calls the arm (default: the paper's trace or the best trace, by `arm`). */
  short?: string;
  /** The experiment write-up: pre-registration, development, the full tables. */
  doc: string;
  command: string;
}

/** The command every world final ran with (the table prints it once). */
export const RUN = 'nice -n 5 npx tsx bench/compare/run.ts';
const WORLD12 = '--steps 12 --pool 32 --budget 48 --eval-every 4 --eval-questions 500 --env-questions 2500 --cheap-baseline-predictor';
const MAIN = '--steps 30 --pool 64 --budget 192 --eval-every 5 --eval-questions 500 --env-questions 2500 --cheap-baseline-predictor --jobs 1';
const TINY = '--steps 40 --pool 32 --budget 16 --eval-every 10 --eval-questions 300 --cheap-baseline-predictor --jobs 2';

/** Round two's other finals (frozen at 4a2ae2a): [name, setting, trace arm in words, experiment, trace label, grpo label]. */
const R2_ROWS: ReadonlyArray<[string, string, string, string, string, string]> = [
  [
    'R2 world',
    "the default world at the main job's scale, **11,500 generated tokens a step**, 30 steps",
    'as R2 late (not tuned again)',
    'final-r2-world',
    'r2w-trace-best',
    'r2w-grpo',
  ],
  ['R2 world, secondary', 'as R2 world', "the paper's", 'final-r2-world', 'r2w-trace', 'r2w-grpo'],
  ['R2 math', 'math-world, **6,000 generated tokens a step**, 30 steps', 'as R2 late (not tuned again)', 'final-r2-math', 'r2m-trace-best', 'r2m-grpo'],
  ['R2 math, secondary', 'as R2 math', "the paper's", 'final-r2-math', 'r2m-trace', 'r2m-grpo'],
  ...(['world', 'late', 'math'] as const).flatMap((setting) =>
    [37, 53].map((seed): [string, string, string, string, string, string] => [
      `R2 ${setting}, world seed ${seed}`,
      `as R2 ${setting} on world seed ${seed} (unused before)`,
      'as R2 late',
      `final-r2-${setting}-env${seed}`,
      `r2${setting[0]}${seed}-trace-best`,
      `r2${setting[0]}${seed}-grpo`,
    ]),
  ),
];
const R2_COMMAND = `${RUN} --experiments final-r2-world,final-r2-math,final-r2-world-env37,final-r2-world-env53,final-r2-late-env37,final-r2-late-env53,final-r2-math-env37,final-r2-math-env53 --first-seed 1005 --seeds 5 --steps 30 --pool 64 --budget 192 --eval-every 5 --eval-questions 500 --eval-samples 2 --env-questions 2500 --cheap-baseline-predictor --jobs 2 --out bench/compare/out-final-r2 --plots bench/compare/plots/final-r2`;

export const FINALS: readonly FinalSpec[] = [
  {
    name: '1',
    frozen: '5e75d3f',
    setting: 'world, B = 48, 8 steps',
    arm: "the paper's",
    out: 'out-final',
    experiment: 'final',
    trace: 'trace',
    grpo: 'grpo',
    doc: 'docs/experiments/2026-11-final1-first.md',
    command: `${RUN} --experiments final,final-gold,final-env,final-oracle --first-seed 100 --seeds 10 --steps 8 --pool 32 --budget 48 --eval-every 4 --eval-questions 500 --cheap-baseline-predictor --out bench/compare/out-final`,
  },
  {
    name: '2',
    frozen: 'fbc61e4',
    setting: 'world, B = 48, 12 steps',
    arm: 'predictor roots, decision-weighted prefixes, leftover over the pool',
    out: 'out-final2',
    experiment: 'final',
    trace: 'trace-best',
    grpo: 'grpo',
    env: { experiment: 'final-env', trace: 'env11-trace-best', grpo: 'env11-grpo' },
    doc: 'docs/experiments/2026-11-finals2-4-world.md',
    command: `${RUN} --experiments final,final-gold,final-env,final-oracle --first-seed 200 --seeds 10 ${WORLD12} --out bench/compare/out-final2 --plots bench/compare/plots/final2`,
  },
  {
    name: '3',
    frozen: 'd06da9d',
    setting: 'as 2, one policy pass a step (every arm)',
    arm: 'as 2',
    out: 'out-final3',
    experiment: 'final-epochs1',
    trace: 'trace-best-e1',
    grpo: 'grpo-e1',
    doc: 'docs/experiments/2026-11-finals2-4-world.md',
    command: `${RUN} --experiments final-epochs1 --first-seed 300 --seeds 10 ${WORLD12} --out bench/compare/out-final3 --plots bench/compare/plots/final3`,
  },
  {
    name: '4',
    frozen: '0aaabe7',
    setting: 'as 2',
    arm: 'uniform roots, decision-weighted prefixes',
    out: 'out-final4',
    experiment: 'final-roots',
    trace: 'trace-best-uniform-root',
    grpo: 'grpo',
    env: { experiment: 'final-roots-env', trace: 'env11-trace-best-uniform-root', grpo: 'env11-grpo' },
    doc: 'docs/experiments/2026-11-finals2-4-world.md',
    command: `${RUN} --experiments final-roots --first-seed 400 --seeds 10 ${WORLD12} --out bench/compare/out-final4 --plots bench/compare/plots/final4`,
  },
  {
    name: '5',
    frozen: 'e29edc3',
    setting: "world, the main job's scale (B = 192, 30 steps)",
    arm: 'as 4',
    out: 'out-final5',
    experiment: 'final-main',
    trace: 'trace-rec',
    grpo: 'grpo',
    env: { experiment: 'final-main-env', trace: 'env11-trace-rec', grpo: 'env11-grpo' },
    doc: 'docs/experiments/2026-11-final5-main-scale.md',
    command: `${RUN} --experiments final-main --first-seed 500 --seeds 10 ${MAIN} --out bench/compare/out-final5 --plots bench/compare/plots/final5`,
  },
  {
    name: '6',
    frozen: 'd4d2ae1',
    setting: 'as 5',
    arm: 'as 4 + `rootResample`, N = ½ (the recommendation since)',
    out: 'out-final6',
    experiment: 'final-rs',
    trace: 'trace-rs-half',
    grpo: 'grpo',
    env: { experiment: 'final-rs-env', trace: 'env11-trace-rs-half', grpo: 'env11-grpo' },
    doc: 'docs/experiments/2026-11-final6-root-resample.md',
    command: `${RUN} --experiments final-rs,final-rs-env --first-seed 600 --seeds 10 ${MAIN} --out bench/compare/out-final6 --plots bench/compare/plots/final6`,
  },
  {
    name: '7',
    frozen: 'd4e5254',
    setting: 'math-world from a cold start (1–5 % success), B = 192, 20 steps',
    arm: "the paper's",
    out: 'out-final-math',
    experiment: 'final-math',
    trace: 'math-trace',
    grpo: 'math-grpo',
    doc: 'docs/experiments/2026-11-final7-math-world.md',
    command: `${RUN} --experiments final-math --first-seed 800 --seeds 10 --steps 20 --pool 64 --budget 192 --eval-every 5 --eval-questions 500 --env-questions 2500 --cheap-baseline-predictor --jobs 1 --out bench/compare/out-final-math --plots bench/compare/plots/final-math`,
  },
  {
    name: 'R2 late',
    frozen: '30d5273',
    setting: 'the late-decision world, **15,000 generated tokens a step**, 30 steps (contrast columns per trajectory)',
    arm: "uniform roots, the paper's prefix solver, `rootResample`, N = ½, `branchFrom: 2`",
    out: 'out-final-late',
    experiment: 'final-late',
    trace: 'fl-trace-best',
    grpo: 'fl-grpo',
    doc: 'docs/experiments/2026-12-01-final-late.md',
    command: `${RUN} --experiments final-late --first-seed 1000 --seeds 5 --steps 30 --pool 64 --budget 192 --eval-every 5 --eval-questions 500 --eval-samples 2 --env-questions 2500 --cheap-baseline-predictor --jobs 2 --out bench/compare/out-final-late --plots bench/compare/plots/final-late`,
  },
  {
    name: 'R2 late, secondary',
    frozen: '30d5273',
    setting: 'as R2 late',
    arm: "the paper's",
    out: 'out-final-late',
    experiment: 'final-late',
    trace: 'fl-trace',
    grpo: 'fl-grpo',
    doc: 'docs/experiments/2026-12-01-final-late.md',
    command: '(the same run)',
  },
  {
    name: 'R2 late, 20 seeds',
    frozen: '2358601',
    setting: 'as R2 late, seeds 1010–1029',
    arm: 'as R2 late (not tuned again)',
    out: 'out-final-late-20',
    experiment: 'final-late-20',
    trace: 'f20-trace-best',
    grpo: 'f20-grpo',
    doc: 'docs/experiments/2026-12-02-final-late-20.md',
    command: `${RUN} --experiments final-late-20 --first-seed 1010 --seeds 20 --steps 30 --pool 64 --budget 192 --eval-every 5 --eval-questions 500 --eval-samples 2 --env-questions 2500 --cheap-baseline-predictor --jobs 2 --out bench/compare/out-final-late-20 --plots bench/compare/plots/final-late-20`,
  },
  {
    name: 'R3 world',
    frozen: '6a8a72f',
    setting: 'the default world, **256 candidate prompts**, 11,500 generated tokens a step, 30 steps, seeds 1030–1069',
    arm: 'guarded (grpo G = 3 plus ε = ¼ for the root solver on the posterior; against grpo G = 3)',
    out: 'out-final-r3-world',
    experiment: 'final-r3-world',
    trace: 'r3w-guarded-g3',
    grpo: 'r3w-grpo-g3',
    short: 'guarded',
    doc: 'docs/experiments/2026-12-03-final-r3-world.md',
    command: `npx tsx bench/compare/run.ts --experiments final-r3-world --first-seed 1030 --seeds 40 --steps 30 --pool 64 --budget 192 --eval-every 5 --eval-questions 500 --eval-samples 2 --env-questions 2500 --jobs 2 --out bench/compare/out-final-r3-world --plots bench/compare/plots/final-r3-world`,
  },
  {
    name: 'R3 world, G = 8',
    frozen: '6a8a72f',
    setting: "as R3 world, tier 1: both arms at TRL's usual G = 8 (where development found the guard's headroom)",
    arm: 'guarded on grpo G = 8 (against grpo G = 8)',
    out: 'out-final-r3-world-t1',
    experiment: 'final-r3-world',
    trace: 'r3w-guarded-g8',
    grpo: 'r3w-grpo-g8',
    short: 'guarded',
    doc: 'docs/experiments/2026-12-03-final-r3-world.md',
    command: `npx tsx bench/compare/run.ts --experiments final-r3-world --arms r3w-guarded-g8,r3w-grpo-g8,r3w-grpo-g3-batch --first-seed 1030 --seeds 40 --steps 30 --pool 64 --budget 192 --eval-every 5 --eval-questions 500 --eval-samples 2 --env-questions 2500 --jobs 2 --out bench/compare/out-final-r3-world-t1`,
  },
  {
    name: 'R4 world',
    frozen: 'c1652a4',
    setting: 'as R3 world, fresh seeds 1070–1109',
    arm: 'defensive (prompts drawn by importance, ε = ¼, systematic draws, posterior; against grpo G = 3)',
    out: 'out-final-r4-defensive',
    experiment: 'final-r4-defensive',
    trace: 'r4d-defensive-sys',
    grpo: 'r4d-grpo-g3',
    short: 'defensive',
    doc: 'docs/experiments/2026-12-03-final-r3-world.md',
    command: `npx tsx bench/compare/run.ts --experiments final-r4-defensive --first-seed 1070 --seeds 40 --steps 30 --pool 64 --budget 192 --eval-every 5 --eval-questions 500 --eval-samples 2 --env-questions 2500 --jobs 2 --out bench/compare/out-final-r4-defensive`,
  },
  {
    name: 'R4 world, independent draws',
    frozen: 'c1652a4',
    setting: 'as R4 world, tier 1',
    arm: 'defensive with independent draws (where its variance bound is proved; against grpo G = 3)',
    out: 'out-final-r4-defensive',
    experiment: 'final-r4-defensive',
    trace: 'r4d-defensive',
    grpo: 'r4d-grpo-g3',
    short: 'defensive, independent',
    doc: 'docs/experiments/2026-12-03-final-r3-world.md',
    command: '(the same run)',
  },
  // Round two's other finals: one run of the command below (the first row carries it).
  ...R2_ROWS.map(([name, setting, arm, experiment, trace, grpo], i): FinalSpec => ({
    name,
    frozen: '4a2ae2a',
    setting,
    arm,
    out: 'out-final-r2',
    experiment,
    trace,
    grpo,
    doc: 'docs/experiments/2026-12-01-final-r2.md',
    command: i === 0 ? R2_COMMAND : '(the same run)',
  })),
  {
    name: 'tiny LM 1',
    frozen: 'c5d3e8e',
    setting: 'tiny LM d64 × 4 from 17.7 %, B = 16, 40 steps (PPO defect)',
    arm: 'as 2',
    out: 'out-tinylm',
    experiment: 'tinylm',
    trace: 'trace-best',
    grpo: 'grpo',
    doc: 'docs/experiments/2026-11-tinylm.md',
    command: `${RUN} --experiments tinylm --first-seed 100 --seeds 5 ${TINY} --out bench/compare/out-tinylm --plots bench/compare/plots/tinylm`,
  },
  {
    name: 'tiny LM 2',
    frozen: 'f4e5f91',
    setting: 'tiny LM from 34 %, B = 16, 40 steps (PPO defect)',
    arm: 'as 4',
    out: 'out-tinylm-d',
    experiment: 'tinylm-d',
    trace: 'trace-rec',
    grpo: 'grpo',
    doc: 'docs/experiments/2026-11-tinylm-final2.md',
    command: `${RUN} --experiments tinylm-d --first-seed 700 --seeds 5 ${TINY} --out bench/compare/out-tinylm-d --plots bench/compare/plots/tinylm-d`,
  },
  {
    name: 'tiny LM 3',
    frozen: 'e7b19e9',
    setting: 'tiny LM from 34 %, B = 64, 40 steps, **sampled** held-out success',
    arm: 'as 6',
    out: 'out-tinylm-s',
    experiment: 'tinylm-s',
    trace: 'trace-rec',
    grpo: 'grpo',
    reading: 'sampled',
    doc: 'docs/experiments/2026-12-tinylm-sampled.md',
    command:
      'TRACE_RL_JAX_THREADS=1 npx tsx bench/compare/run.ts --experiments tinylm-s --first-seed 900 --seeds 5 --steps 40 --pool 32 --budget 64 --eval-every 20 --eval-questions 300 --eval-samples 2 --cheap-baseline-predictor --jobs 2 --out bench/compare/out-tinylm-s --plots bench/compare/plots',
  },
  {
    name: 'tiny LM 3, secondary',
    frozen: 'e7b19e9',
    setting: 'as tiny LM 3',
    arm: "the paper's",
    out: 'out-tinylm-s',
    experiment: 'tinylm-s',
    trace: 'trace',
    grpo: 'grpo',
    reading: 'sampled',
    doc: 'docs/experiments/2026-12-tinylm-sampled.md',
    command: '(the same run)',
  },
];

/**
 * The README's summary: the finals grouped by regime. Names point into FINALS; the words (regime,
 * budget, why) are descriptions, and every number beside them is computed by tables.ts from the rows.
 */
export interface SummaryGroup {
  regime: string;
  budget: string;
  finals: readonly string[];
  why: string;
  /**
   * The budget-elasticity reading of the group's first final: grpo's arms at ½× and 2× its tokens
   * (bench/compare/elasticity.ts) and that final's folder and arms, so its Δ reads as a compute multiplier.
   */
  elasticity?: { out: string; tag: string; final: { folder: string; trace: string; grpo: string } };
}

export const README_SUMMARY: readonly SummaryGroup[] = [
  {
    regime: 'late-decision world (turns after the first are uncertain), 3 worlds',
    budget: 'equal tokens',
    finals: ['R2 late, 20 seeds', 'R2 late, world seed 37', 'R2 late, world seed 53'],
    why: 'trees hold more mixed anchors, but that extra contrast does not show in held-out success',
    elasticity: { out: 'out-dev-elasticity', tag: 'ell', final: { folder: 'out-final-late-20', trace: 'f20-trace-best', grpo: 'f20-grpo' } },
  },
  {
    regime: "default world at the main job's scale, 3 worlds",
    budget: 'equal tokens',
    finals: ['R2 world', 'R2 world, world seed 37', 'R2 world, world seed 53'],
    why: 'the first search decides; a continuation is no cheaper contrast than a fresh rollout',
    elasticity: { out: 'out-dev-elasticity', tag: 'elw', final: { folder: 'out-final-r2', trace: 'r2w-trace-best', grpo: 'r2w-grpo' } },
  },
  {
    regime: "default world, 256 candidate prompts: guarded at grpo's best G = 3 and at TRL's G = 8; defensive at G = 3",
    budget: 'equal tokens',
    finals: ['R3 world', 'R3 world, G = 8', 'R4 world'],
    elasticity: { out: 'out-dev-elasticity', tag: 'elw', final: { folder: 'out-final-r3-world', trace: 'r3w-guarded-g3', grpo: 'r3w-grpo-g3' } },
    why: 'at G = 3 the solver finds no more mixed prompts per token; at G = 8 it finds 1.6× and gains, yet G = 3 is 5.7 points better still; defensive stays unbiased and ties',
  },
  {
    regime: 'math-world from a cold start (1–5 % success), 3 worlds',
    budget: 'equal tokens',
    finals: ['R2 math', 'R2 math, world seed 37', 'R2 math, world seed 53'],
    why: 'most groups all fail, and a continuation from a failing prefix rarely flips',
  },
  {
    regime: "round one, each final's primary arm: finals 1–7 (world, math-world) and the tiny LM on llama.cpp",
    budget: 'equal trajectories',
    finals: ['1', '2', '3', '4', '5', '6', '7', 'tiny LM 1', 'tiny LM 2', 'tiny LM 3'],
    why: 'two handicaps, fixed since: the estimator and the cost unit',
  },
  {
    regime: "the paper's own configuration (round two's secondary arms; tiny LM 3's)",
    budget: 'equal tokens (tiny LM: trajectories)',
    finals: ['R2 late, secondary', 'R2 world, secondary', 'R2 math, secondary', 'tiny LM 3, secondary'],
    why: 'adaptive roots at N = 2 spend most of the budget on continuations over few prompts; the recommended options draw prompts as grpo does',
  },
];
