/**
 * The comparison benchmark of issue 6 (TRACE-SPEC §7): TRACE against the baselines at equal budget on
 * the embedded world with the embedded policy, the oracle on the simulator, and the paper's ablation
 * grid and budget splits; ≥ 5 seeds each, 2 runs at a time in child processes (`trace-rl train`).
 *
 * Run:  npx tsx bench/compare/run.ts [--experiments main,oracle,ablation] [--first-seed 0] [--seeds 5] [--steps 30]
 *                                    [--pool 64] [--budget 192] [--eval-every 5] [--eval-questions 200] [--eval-samples 0] [--env-seed 7] [--env-questions 1500] [--plots dir]
 *                                    [--arms label,label] (a subset of the experiments' arms)
 *                                    [--cheap-baseline-predictor] (arms that never read Ṽ train the running rate, not the MLP)
 *                                    [--jobs 2] [--out bench/compare/out] [--runs-only | --analyse-only]
 * Rerunning resumes: finished run folders are reused, unfinished ones resumed.
 * Writes: <out>/runs/<arm>-s<seed>/ (run folders, not committed), <out>/<experiment>.html (writeReport),
 * <out>/summary.md and <out>/summary.json (the tables for BENCHMARKS.md), <out>/records/<arm>-s<seed>.json
 * (each finished run's numbers, committed, so bench/compare/pool.ts can pair seeds run on other
 * machines), bench/compare/plots/*.svg (committed charts).
 */
import os from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseTrainConfig } from '../../src/train/index.ts';
import { analyse } from './analyse.ts';
import { runJobs, type Job } from './children.ts';
import { DEFAULT_SCALE, EXPERIMENTS, arms, runConfig, type Arm, type ExperimentName, type Scale } from './experiments.ts';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}
const flag = (name: string) => process.argv.includes(`--${name}`);

const here = fileURLToPath(new URL('.', import.meta.url));
const out = resolve(arg('out') ?? join(here, 'out'));
const num = (name: string, fallback: number) => Number(arg(name) ?? fallback);
const scale: Scale = {
  firstSeed: num('first-seed', DEFAULT_SCALE.firstSeed),
  seeds: num('seeds', DEFAULT_SCALE.seeds),
  envSeed: num('env-seed', DEFAULT_SCALE.envSeed),
  ...(arg('env-questions') ? { envQuestions: num('env-questions', 1500) } : {}),
  steps: num('steps', DEFAULT_SCALE.steps),
  pool: num('pool', DEFAULT_SCALE.pool),
  budget: num('budget', DEFAULT_SCALE.budget),
  evalEvery: num('eval-every', DEFAULT_SCALE.evalEvery),
  evalQuestions: num('eval-questions', DEFAULT_SCALE.evalQuestions),
  ...(arg('eval-samples') ? { evalSamples: num('eval-samples', 0) } : {}),
  cheapPredictorForBaselines: flag('cheap-baseline-predictor'),
};
const seedList = Array.from({ length: scale.seeds }, (_, i) => scale.firstSeed + i);
const jobsAtOnce = Number(arg('jobs') ?? 2);
const experiments = (arg('experiments') ?? EXPERIMENTS.join(',')).split(',').map((s) => s.trim()) as ExperimentName[];
for (const e of experiments) if (!EXPERIMENTS.includes(e)) throw new Error(`--experiments: unknown "${e}"; allowed: ${EXPERIMENTS.join(', ')}`);

const only = arg('arms')
  ?.split(',')
  .map((s) => s.trim());
const byExperiment = new Map<ExperimentName, Arm[]>(experiments.map((e) => [e, arms(e).filter((a) => !only || only.includes(a.label))]));
const uniqueArms = new Map<string, Arm>();
for (const list of byExperiment.values()) for (const a of list) uniqueArms.set(a.label, a);
const runDir = (label: string, seed: number) => join(out, 'runs', `${label}-s${seed}`);
// Tier by tier, seed-major within a tier: every core arm gets a seed before any gets the next, so a
// bench cut short by the clock still compares paired seeds.
const jobs: Job[] = [];
const tiers = [...new Set([...uniqueArms.values()].map((a) => a.tier ?? 0))].sort((a, b) => a - b);
for (const tier of tiers) {
  for (const seed of seedList) {
    for (const arm of uniqueArms.values())
      if ((arm.tier ?? 0) === tier) jobs.push({ dir: runDir(arm.label, seed), config: parseTrainConfig(runConfig(arm, seed, scale)) });
  }
}

const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
const t0 = performance.now();
const machine = `${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), node ${process.version}, ${os.platform()} ${os.arch()}`;
// Warm starts are per seed and shared by every arm: fit each once here (in parallel children they would
// all miss the cache together and fit the same weights side by side).
if (!flag('analyse-only')) {
  const { buildComponents } = await import('../../src/train/index.ts');
  const worldJobs = new Map<string, (typeof jobs)[number]['config']>();
  for (const j of jobs) {
    const c = j.config as ReturnType<typeof parseTrainConfig>;
    // Only the embedded policy has a behaviour-cloning warm start (the tiny LM starts from its GGUF).
    if (c.env.kind === 'world' && c.policy.kind === 'embedded' && c.policy.warmStart === 'bc') worldJobs.set(`${c.seed}/${c.env.seed}`, c);
  }
  for (const [key, c] of worldJobs) {
    const t = performance.now();
    await buildComponents(c as ReturnType<typeof parseTrainConfig>);
    log(`warm start seed/env ${key} ready in ${((performance.now() - t) / 1000).toFixed(0)} s`);
  }
}
if (flag('prewarm-only')) process.exit(0);
if (!flag('analyse-only')) {
  log(
    `bench/compare: ${jobs.length} runs (${uniqueArms.size} arms × ${scale.seeds} seeds, ${scale.steps} steps, pool ${scale.pool}, B = ${scale.budget}), ${jobsAtOnce} at a time; ${machine}; load ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
  const results = await runJobs(jobs, jobsAtOnce, log);
  const failed = results.filter((r) => r.code !== 0);
  const walls = results.flatMap((r) => (r.wallSeconds === null ? [] : [r.wallSeconds])).sort((a, b) => a - b);
  if (walls.length)
    log(
      `run wall time: min ${walls[0].toFixed(0)} s, median ${walls[Math.floor(walls.length / 2)].toFixed(0)} s, max ${walls[walls.length - 1].toFixed(0)} s over ${walls.length} runs; total ${((performance.now() - t0) / 1000).toFixed(0)} s`,
    );
  if (failed.length) {
    log(`${failed.length} run(s) failed: ${failed.map((r) => r.dir).join(', ')}; rerun the same command to resume them`);
    process.exitCode = 1;
  }
}
if (!flag('runs-only')) {
  await analyse({
    byKindSeeds: arg('by-kind-seeds') ? Number(arg('by-kind-seeds')) : undefined,
    out,
    plots: resolve(arg('plots') ?? join(here, 'plots')),
    experiments: byExperiment,
    seeds: seedList,
    runDir,
    scale,
    machine,
    log,
  });
}
