import { interruptible } from '../until-signal.ts';
import { policyAndEnvOptions, type PolicyAndEnvFlags } from '../policy-flags.ts';
import type { Command } from 'commander';
import { statSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { diagnose, diagnosisJson, formatDiagnosis, renderDiagnosisPage, trajectoryBound, type Diagnosis, type DiagnosisAbout } from '../../diagnose/index.ts';
import { WorldEnv } from '../../env/world/index.ts';
import type { EmbeddedPolicy } from '../../policy/embedded/index.ts';
import { policyKindsTaking } from '../../policy/registry.ts';
import type { Prompt } from '../../tree/types.ts';
import { refuseForeignOutput, startsWithText, writeFileAtomic, type OutputSignature } from '../../store/index.ts';
import { createRng, shuffled } from '../../util/rng.ts';
import { parseDecimal, parseInteger, UsageError } from '../io.ts';
import { engineProgress } from '../progress.ts';
import { buildPolicy, buildSuite, disposingOnError, EVAL_WORDING, evalConfig, openRun, type EvalFlags } from './eval.ts';
import type { Policy } from '../../policy/types.ts';
import type { Environment } from '../../env/types.ts';
import { noTaskFits, promptsThatFit, tooLongLine, type TooLong } from '../../train/prompt-fit.ts';

/** Bounds on what one diagnosis may ask for: it runs on a laptop before training, not instead of it. */
export const DIAGNOSE_LIMITS = { prompts: 1000, k: 256, rollouts: 16, maxTurns: 256, trajectories: 100_000, concurrency: 256 } as const;

interface DiagnoseFlags extends PolicyAndEnvFlags {
  prompts: string;
  k: string;
  rollouts: string;
  html?: string;
  warmStart?: boolean;
}

/**
 * `trace-rl diagnose --env KIND --policy KIND`: before training, where the outcome contrast of a task
 * lies, per turn depth. Environment and policy are built exactly as `trace-rl eval` builds them (its
 * builders); the sampling is one rollout-engine step with a fixed allocation (src/diagnose).
 */
export function register(program: Command): void {
  policyAndEnvOptions(
    program
      .command('diagnose')
      .description(
        "before training: where the outcome contrast lies — per depth t, mean V_t(1−V_t) from k continuations, the share of outcome variance still open, the next decision's entropy, and what a continuation costs; see docs/diagnose.md",
      ),
    'diagnosed',
  )
    .option(
      '--warm-start',
      'embedded on the world, without --run: the behaviour-cloning warm start training begins from (policy.warmStart bc, its cached fit), instead of zero weights',
    )
    .option('--split <which>', 'where prompts are drawn from: all (every question of the environment) or held-out', 'all')
    .option('--prompts <n>', `prompts sampled (at most ${DIAGNOSE_LIMITS.prompts})`, '8')
    .option('--k <n>', `trajectories per prefix: the root's rollouts and each prefix's continuations (2 … ${DIAGNOSE_LIMITS.k})`, '8')
    .option(
      '--rollouts <n>',
      `bare rollouts per prompt whose every prefix is expanded (1 … min(k, ${DIAGNOSE_LIMITS.rollouts}); the first of the root's k)`,
      '1',
    )
    .option('--max-turns <n>', `turn limit per trajectory (at most ${DIAGNOSE_LIMITS.maxTurns}; default the environment's)`)
    .option('--temperature <t>', 'sampling temperature, > 0 (openai, tinker and tiny-lm; the embedded and scripted policies sample at their own)', '1')
    .option('--seed <n>', 'seed of the prompt sample and of every sampling stream', '0')
    .option('--json', 'print exactly one JSON object (per-depth rows, spend) instead of the table')
    .option('--html <file>', 'also write a self-contained HTML page with the plots (written atomically)')
    .option('--quiet', 'no progress display')
    .action(async (opts: DiagnoseFlags) => {
      const sizes = parseSizes(opts);
      const setup = await setUp(opts, sizes);
      await sampleAndReport(opts, sizes, setup);
    });
}

type Sizes = ReturnType<typeof parseSizes>;

/** Every number flag, bounded, before anything is built: a refusal costs nothing. */
function parseSizes(opts: DiagnoseFlags) {
  const L = DIAGNOSE_LIMITS;
  const prompts = parseInteger('--prompts', opts.prompts, { min: 1, max: L.prompts });
  const k = parseInteger('--k', opts.k, { min: 2, max: L.k });
  const rollouts = parseInteger('--rollouts', opts.rollouts, { min: 1, max: L.rollouts });
  if (rollouts > k) throw new UsageError(`--rollouts ${rollouts} > --k ${k}: the expanded rollouts are among the root's k; lower --rollouts or raise --k`);
  const temperature = parseDecimal('--temperature', opts.temperature, { min: 0, max: 100 });
  if (temperature === 0)
    throw new UsageError('--temperature 0 makes every continuation the same greedy trajectory, so no contrast can show; give a temperature > 0 (e.g. 1)');
  const concurrency = parseInteger('--concurrency', opts.concurrency, { min: 1, max: L.concurrency });
  const seed = parseInteger('--seed', opts.seed, { min: 0, max: 4294967295 });
  if (opts.split !== 'held-out' && opts.split !== 'all') throw new UsageError(`--split ${opts.split}: choose all or held-out`);
  const split: 'held-out' | 'all' = opts.split;
  const engine = {
    maxTurns: opts.maxTurns !== undefined ? parseInteger('--max-turns', opts.maxTurns, { min: 1, max: L.maxTurns }) : undefined,
    maxTokensPerTurn: parseInteger('--max-tokens', opts.maxTokens, { min: 1, max: 1_000_000 }),
    timeoutMs: parseInteger('--timeout-ms', opts.timeoutMs, { min: 1, max: 3_600_000 }),
    retry: { maxAttempts: parseInteger('--retries', opts.retries, { min: 1, max: 10 }) },
  };
  return { prompts, k, rollouts, temperature, concurrency, seed, split, engine };
}

/**
 * The environment, the prompt sample and the policy, built by eval's builders; the refusals that need
 * the configuration (the turn limit it settles on, the trajectory bound) come first.
 */
async function setUp(opts: DiagnoseFlags, sizes: Sizes) {
  const { prompts, k, rollouts, temperature, seed, split, engine } = sizes;
  const L = DIAGNOSE_LIMITS;
  // eval's builders, unchanged: the same flags mean the same environment and policy in both commands.
  const flags: EvalFlags = { ...opts, samples: String(k), questions: undefined, out: undefined, seed: String(seed) };
  const run = opts.run ? openRun(opts.run, opts.policy) : undefined;
  const config = evalConfig(flags, { run, engine, temperature });
  const maxTurns = config.engine.maxTurns;
  if (maxTurns > L.maxTurns)
    throw new UsageError(`turn limit ${maxTurns} (from the run or --set) is above ${L.maxTurns}; give --max-turns ${L.maxTurns} or less`);
  const total = trajectoryBound({ prompts, k, rollouts, maxTurns });
  if (total > L.trajectories)
    throw new UsageError(
      `--prompts ${prompts} × --k ${k} × (1 + --rollouts ${rollouts} × (turn limit ${maxTurns} − 1)) = up to ${total} trajectories, above the limit of ${L.trajectories}; lower --prompts, --k, --rollouts or --max-turns`,
    );
  if (opts.html !== undefined) checkPageTarget(opts.html);
  const suite = await buildSuite(config, split, undefined);
  const order = shuffledPool(suite.datasets, prompts, seed, split);
  // The warm start is training's behaviour cloning: a policy kind that takes policy.warmStart, on the world, where the demonstrations come from.
  if (opts.warmStart && (!policyKindsTaking('warmStart').includes(opts.policy) || run || !(suite.env instanceof WorldEnv)))
    throw new UsageError('--warm-start is for --policy embedded on --env world without --run (a run has its own trained weights)');
  const { policy, about: policyAbout } = await buildPolicy(flags, suite, run, temperature, config);
  const { sample, skipped } = await disposingOnError(policy, () => sampleThatFits(order, prompts, policy, suite.env, config.engine.maxTokensPerTurn));
  if (opts.warmStart) {
    // What training starts from: the same fit and cache key as buildComponents, so the weights are the run's step-0 weights.
    const { bcWarmStart } = await import('../../train/index.ts');
    await bcWarmStart(policy as EmbeddedPolicy, suite.env as WorldEnv, config);
    policyAbout.spec = { ...policyAbout.spec, warmStart: 'bc' };
  }
  const about: DiagnosisAbout = {
    env: config.env.kind,
    policy: policyLabel(policyAbout.spec),
    prompts: sample.length,
    ...(skipped > 0 ? { skipped } : {}),
    k,
    rollouts,
    maxTurns,
    seed,
  };
  return { config, suite, sample, policy, about };
}

/** One engine step with the progress bar and Ctrl-C, then the page (atomically) and the table or JSON. */
async function sampleAndReport(opts: DiagnoseFlags, sizes: Sizes, setup: Awaited<ReturnType<typeof setUp>>): Promise<void> {
  const { k, rollouts, concurrency, seed } = sizes;
  const { config, suite, sample, policy, about } = setup;
  const interrupt = interruptible('a partial diagnosis would be biased towards short trajectories, so nothing is printed');
  const progress = opts.quiet ? undefined : engineProgress({ label: 'diagnose', now: () => performance.now() });
  let result: Diagnosis;
  try {
    result = await diagnose({
      prompts: sample,
      env: suite.env,
      policy,
      k,
      rollouts,
      rng: createRng(seed).fork('diagnose'),
      settings: { ...config.engine, concurrency },
      signal: interrupt.signal,
      onEvent: progress?.onEvent,
    });
  } finally {
    progress?.stop();
    interrupt.done();
    await (policy as { dispose?: () => Promise<void> }).dispose?.();
  }
  if (result.cancelled) {
    process.exitCode = 130;
    return;
  }
  if (opts.html !== undefined) writeFileAtomic(opts.html, await renderDiagnosisPage(result, about), { replaces: DIAGNOSIS_PAGE, flag: '--html' });
  if (opts.json) process.stdout.write(JSON.stringify(diagnosisJson(result, about)) + '\n');
  else process.stdout.write(formatDiagnosis(result, about) + (opts.html !== undefined ? `\npage: ${opts.html}` : '') + '\n');
}

/**
 * Refuses an --html path that cannot take the page before any sampling is spent (writeFileAtomic
 * checks again when it writes): an empty name, a folder, a missing parent folder.
 */
function checkPageTarget(file: string): void {
  if (file.trim() === '') throw new UsageError('--html needs a file name, e.g. --html diagnose.html');
  const target = path.resolve(file);
  let st;
  try {
    st = statSync(target);
  } catch {
    // a new file: its folder must exist
  }
  if (st && !st.isFile())
    throw new UsageError(`--html ${file}: not a regular file (a folder, a device or a pipe); give a file path such as ${path.join(file, 'diagnose.html')}`);
  let dir;
  try {
    dir = statSync(path.dirname(target));
  } catch {
    // reported below
  }
  if (!dir?.isDirectory()) throw new UsageError(`--html ${file}: folder ${path.dirname(target)} does not exist; create it or choose another path`);
  refuseForeignOutput(file, DIAGNOSIS_PAGE, '--html');
}

/** A page this command wrote earlier (its title opens with this), which a rerun replaces; nothing else is. */
const DIAGNOSIS_PAGE: OutputSignature = {
  what: 'a page written by trace-rl diagnose',
  matches: (head) => startsWithText(head, '<!doctype html>') && new TextDecoder().decode(head.subarray(0, 1024)).includes('<title>trace-rl diagnose: '),
};

/**
 * Every prompt of the suite's datasets in a seeded order, each id once (a prompt listed in two datasets
 * would otherwise be two trees with one id); the sample is its first `n` that fit (sampleThatFits).
 */
function shuffledPool(datasets: ReadonlyMap<string, readonly Prompt[]>, n: number, seed: number, split: string): Prompt[] {
  const seen = new Set<string>();
  const pool: Prompt[] = [];
  for (const prompts of datasets.values()) for (const p of prompts) if (!seen.has(p.id)) (seen.add(p.id), pool.push(p));
  if (n > pool.length)
    throw new UsageError(
      `--prompts ${n}: the ${split === 'all' ? '' : 'held-out '}pool holds only ${pool.length} questions; give --prompts ${pool.length} or less${split === 'all' ? '' : ', or --split all'}`,
    );
  return shuffled(pool, createRng(seed).fork('diagnose/prompts'));
}

/**
 * The first `n` prompts of `order` whose prompt leaves room for a first turn in the policy's context
 * (train/prompt-fit.ts, as training's and eval's setup): the policy is asked about the first `n`, then
 * about as many more as it refused, so a large pool is not counted whole for a sample of 8. With no
 * refusal the sample is the pool's first `n`, as before. The skipped are named in one stderr line; a
 * pool with fewer that fit is diagnosed on those, and one with none fails in one line.
 */
async function sampleThatFits(
  order: readonly Prompt[],
  n: number,
  policy: Policy,
  env: Environment<unknown>,
  turn: number,
): Promise<{ sample: Prompt[]; skipped: number }> {
  const render = (p: Prompt) => env.render(p);
  const sample: Prompt[] = [];
  const tooLong: TooLong[] = [];
  let asked = 0;
  while (sample.length < n && asked < order.length) {
    const next = order.slice(asked, asked + n - sample.length);
    asked += next.length;
    const fit = await promptsThatFit(policy, next, render, turn);
    sample.push(...fit.kept);
    tooLong.push(...fit.tooLong);
  }
  if (sample.length === 0) throw noTaskFits(tooLong, 'diagnose', policy.name, turn, { ...EVAL_WORDING, purpose: 'to diagnose' });
  if (tooLong.length > 0) process.stderr.write(`trace-rl ${tooLongLine(tooLong, asked, 'diagnose', policy.name, turn, EVAL_WORDING)}\n`);
  return { sample, skipped: tooLong.length };
}

/** The policy in a few words, from its evaluation spec: kind, model, and the run or warm start its weights come from (a spec with `run: null` is untrained). */
function policyLabel(spec: Record<string, unknown>): string {
  const name = [spec.kind, spec.model]
    .filter((x) => x !== undefined)
    .map(String)
    .join(' ');
  if (spec.run) return `${name} (${String(spec.run)}, step ${String(spec.step)})`;
  if (spec.warmStart) return `${name} (behaviour-cloning warm start)`;
  return spec.run === null ? `${name} (untrained)` : name;
}
