import { interruptible } from '../until-signal.ts';
import type { Command } from 'commander';
import cliProgress from 'cli-progress';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Prompt } from '../../tree/types.ts';
import { EvalError, EvalStore, formatTable, resultJson, runEval, type EvalRecord, type EvalResult, type EvalSuite } from '../../eval/index.ts';
import { buildPolicy as buildFromRegistry, PolicyConfigError, policyKinds } from '../../policy/registry.ts';
import type { PolicyKind, TrainedRun } from '../../policy/kind.ts';
import type { Policy, TrainablePolicy } from '../../policy/types.ts';
import type { EnvironmentSetup } from '../../env/registry.ts';
import { policyAndEnvOptions, policyFromFlags, refuseFlagValues, type PolicyAndEnvFlags } from '../policy-flags.ts';
import { RunStore } from '../../store/index.ts';
import { buildEnvironment, parseTrainConfig, storedTrainConfig, type TrainConfig } from '../../train/index.ts';
import { noTaskFits, promptsThatFit, tooLongLine, type FitWording, type TooLong } from '../../train/prompt-fit.ts';
import { envKinds } from '../../env/registry.ts';
import { applySetPairs, setPath } from '../config-file.ts';
import { parseDecimal, parseInteger, UsageError } from '../io.ts';
import { reportFailures } from '../failures.ts';
import { fixFor, serverEntry, serverFailure, serverFailureLine } from '../server-failure.ts';

export interface EvalFlags extends PolicyAndEnvFlags {
  questions?: string;
  samples: string;
  out?: string;
}

/**
 * `trace-rl eval`: a policy on the held-out questions of an environment (every kind: qa, world,
 * simulator, …), resumable in --out, with a table (95 % intervals), every trajectory as JSONL and an
 * HTML page. `--json` prints exactly one JSON object.
 */
export function register(program: Command): void {
  policyAndEnvOptions(
    program
      .command('eval')
      .description(
        'evaluate a policy (openai server, tinker engine, tiny-lm, embedded run) on held-out questions: EM/F1 or accuracy per dataset with 95% intervals; resumable',
      ),
    'evaluated',
  )
    .option('--max-turns <n>', 'turn limit per trajectory')
    .option('--split <which>', 'held-out (the training split’s held-out questions) or all', 'held-out')
    .option('--questions <n>', 'at most n questions per dataset (generated environments generate enough)')
    .option('--samples <n>', 'trajectories per question (n > 1 needs --temperature > 0)', '1')
    .option(
      '--temperature <t>',
      '0 = greedy; > 0 = sampled at that temperature (openai, tinker and tiny-lm; the embedded policy samples at its own temperature 1)',
      '0',
    )
    .option('--seed <n>', 'seed of the sampling streams (and of the split, unless the run sets it)', '0')
    .option('--out <dir>', 'result folder (resumed when it holds the same evaluation): eval.json, trajectories.jsonl, index.html')
    .option(
      '--json',
      'print exactly one JSON object: {"datasets": {name: {n, errors, skipped, em, f1, ci95: {em: [lo, hi], f1: [lo, hi]}}}, "average": {em, f1, ci95}, "out": DIR} (skipped: questions too long for the policy\'s context, not in n)',
    )
    .option('--quiet', 'no progress display')
    .action(async (opts: EvalFlags) => {
      const int = (flag: string, v: string, min: number) => parseInteger(flag, v, { min });
      const samples = int('--samples', opts.samples, 1);
      const temperature = parseDecimal('--temperature', opts.temperature, { min: 0 });
      if (samples > 1 && temperature === 0)
        throw new UsageError('--samples > 1 with --temperature 0 repeats one greedy trajectory; give --temperature (e.g. 1)');
      if (opts.split !== 'held-out' && opts.split !== 'all') throw new UsageError(`--split ${opts.split}: choose held-out or all`);
      const questions = opts.questions !== undefined ? int('--questions', opts.questions, 1) : undefined;
      const concurrency = int('--concurrency', opts.concurrency, 1);
      const seed = int('--seed', opts.seed, 0);
      const engine = {
        maxTurns: opts.maxTurns ? int('--max-turns', opts.maxTurns, 1) : undefined,
        maxTokensPerTurn: int('--max-tokens', opts.maxTokens, 1),
        timeoutMs: int('--timeout-ms', opts.timeoutMs, 1),
        retry: { maxAttempts: int('--retries', opts.retries, 1) },
      };

      const run = opts.run ? openRun(opts.run, opts.policy) : undefined;
      const config = evalConfig(opts, { run, engine, questions, temperature });
      const built = await buildSuite(config, opts.split as 'held-out' | 'all', questions);
      const { policy, about } = await buildPolicy(opts, built, run, temperature, config);
      const suite = await disposingOnError(policy, () => fitSuite(built, policy, config));
      const skipped = [...(suite.skipped?.values() ?? [])].reduce((a, b) => a + b, 0);
      if (skipped > 0) about.lines.push(`skipped at setup: ${skipped} questions whose prompt does not fit the policy's context (not in n)`);
      const out = path.resolve(opts.out ?? path.join('runs', `eval-${opts.policy}-${config.env.kind}`));
      // Said even with --quiet: without --out the results land in a folder the user did not name.
      if (opts.out === undefined)
        process.stderr.write(
          `eval: no --out given: writing to ${out} (eval.json, trajectories.jsonl, index.html; resumed there when the same evaluation runs again)\n`,
        );
      const spec = {
        env: config.env,
        maxTurns: config.engine.maxTurns,
        split: opts.split,
        questions: questions ?? null,
        policy: about.spec,
        samples,
        temperature,
        seed,
      };
      let store: EvalStore;
      try {
        store = EvalStore.open(out, spec);
      } catch (e) {
        if (e instanceof EvalError) throw new UsageError(e.message);
        throw e;
      }
      try {
        await evaluate(opts, { suite, policy, about, config, out, store, samples, temperature, concurrency, seed });
      } catch (e) {
        const failure = serverFailure(e);
        if (!failure) throw e;
        process.stderr.write(
          serverFailureLine('eval', failure, `the finished questions are kept in ${out}: rerun the same command to continue once the server is back`) + '\n',
        );
        process.exitCode = 1;
      } finally {
        store.close();
      }
    });
}

/** Runs an opened evaluation to the end (or Ctrl-C), then writes its page and prints the table. */
async function evaluate(
  opts: EvalFlags,
  e: {
    suite: Suite;
    policy: Policy;
    about: PolicyAbout;
    config: TrainConfig;
    out: string;
    store: EvalStore;
    samples: number;
    temperature: number;
    concurrency: number;
    seed: number;
  },
): Promise<void> {
  const { suite, policy, about, config, out, store, samples, temperature, concurrency, seed } = e;
  const interrupt = interruptible('finished questions are kept; rerun the same command to continue');
  if (!opts.quiet) for (const line of suite.scope) process.stderr.write(line + '\n');
  const progress = opts.quiet ? undefined : evalProgress(out);
  let result: EvalResult;
  try {
    result = await runEval({
      suite,
      policy,
      samples,
      greedy: temperature === 0,
      concurrency,
      engine: config.engine,
      seed,
      store,
      signal: interrupt.signal,
      onQuestion: progress?.update,
    });
  } finally {
    progress?.stop();
    interrupt.done();
    await (policy as { dispose?: () => Promise<void> }).dispose?.();
  }
  const { writeEvalPage } = await import('../../report/index.ts');
  writeEvalPage(path.join(out, 'index.html'), pageInput(result, suite, about.lines, opts.split));
  if (opts.json) process.stdout.write(JSON.stringify({ ...resultJson(result), out }) + '\n');
  else {
    process.stdout.write(`${formatTable(result)}\n`);
    process.stdout.write(
      `${result.stopped ? `stopped at ${result.records.length}/${result.total} questions; rerun the same command to continue. ` : ''}trajectories: ${path.join(out, 'trajectories.jsonl')}; page: ${path.join(out, 'index.html')}\n`,
    );
  }
  if (result.stopped) process.exitCode = 130;
  else reportErrors(result, [...(opts.baseUrl ?? []), ...serverEntry(config.env, ['url', 'retrieverUrl'])]);
}

/**
 * Questions that failed after the engine's retries score 0 in the table: say so, with the first error,
 * and exit 1: the evaluation is not complete (rerunning the same command runs them again), and when
 * every question failed the table is no score at all (src/cli/failures.ts).
 */
function reportErrors(result: EvalResult, servers: readonly string[]): void {
  const failed = result.records.filter((r) => r.errors > 0);
  const first = failed[0]?.samples.find((s) => s.error)?.error ?? 'no message';
  reportFailures({
    command: 'trace-rl eval',
    failed: failed.length,
    total: result.records.length,
    unit: 'questions',
    causes: `${servers.length ? `servers ${servers.join(', ')}; ` : ''}first: ${first}`,
    kept: `${fixFor(first, 'the policy server')}; they score 0 above and run again when the same command is rerun`,
    whenAll: 'every question failed: check the server (--base-url, --model) before reading the table',
  });
  if (failed.length > 0) process.exitCode = 1;
}

/** The training run behind `--policy KIND --run DIR` (a kind that evaluates runs): its configuration and last policy checkpoint. */
export function openRun(dir: string, policyKind: string): { config: TrainConfig; checkpoint: Uint8Array; step: number; dir: string } {
  const takers = policyKinds
    .entries()
    .filter((k) => k.evaluatesRuns)
    .map((k) => k.name);
  if (!takers.includes(policyKind)) throw new UsageError(`--run is for --policy ${takers.join(' or ')} (got --policy ${policyKind})`);
  let store: RunStore;
  try {
    store = RunStore.open(dir, { readonly: true });
  } catch (e) {
    throw new UsageError(`--run ${dir}: ${(e as Error).message}`);
  }
  try {
    const config = storedTrainConfig(store);
    if (config.policy.kind !== policyKind)
      throw new UsageError(`--run ${dir}: that run trained a ${config.policy.kind} policy, not ${policyKind}; use --policy ${config.policy.kind}`);
    const step = store.lastStep();
    if (step < 0) throw new UsageError(`--run ${dir}: no completed step yet, so there is no trained policy`);
    const checkpoint = store.checkpoints(step).policy;
    if (!checkpoint) throw new UsageError(`--run ${dir}: step ${step} has no policy checkpoint`);
    return { config, checkpoint, step, dir: path.resolve(dir) };
  } finally {
    store.close();
  }
}

/** The environment `trace-rl eval` evaluates when neither a run nor --env names one (--env's help says so). */
const EVAL_DEFAULT_ENV_KIND = 'qa';

/** A training run opened by `openRun`. */
export type OpenedRun = ReturnType<typeof openRun>;

/**
 * The settings of an evaluation (or diagnosis): the environment's (the run's, if any, then the flags)
 * and the policy's (`--policy` and its flags, by the kind's `fromFlags`), then `--set` pairs over both,
 * and the whole checked as `trace-rl train` checks a configuration. `temperature` > 0: the policy samples.
 */
export function evalConfig(opts: EvalFlags, o: { run?: OpenedRun; engine: Record<string, unknown>; questions?: number; temperature: number }): TrainConfig {
  const { run, engine, questions } = o;
  const base = run?.config;
  const policy = policyFlagSettings(opts, trainedRun(run), o.temperature);
  const raw: Record<string, unknown> = {
    seed: Number(opts.seed),
    env: { ...(base?.env ?? { kind: EVAL_DEFAULT_ENV_KIND }) },
    engine: { ...(base?.engine ?? {}), ...Object.fromEntries(Object.entries(engine).filter(([, v]) => v !== undefined)) },
  };
  if (base) raw.seed = base.seed;
  const set = (p: string, v: unknown) => v !== undefined && setPath(raw, p, v);
  set('env.kind', opts.env);
  if (opts.datasets !== undefined) setDatasets(raw, opts.env ?? base?.env.kind ?? EVAL_DEFAULT_ENV_KIND, opts.datasets);
  set('env.retrieval', opts.retrieval);
  set('env.retrieverUrl', opts.retrieverUrl);
  set('env.topK', opts.topK !== undefined ? Number(opts.topK) : undefined);
  raw.policy = { ...policy.settings };
  applySetPairs(raw, opts.set ?? [], 'env.successRule=em');
  const kind = (raw.policy as { kind?: unknown } | undefined)?.kind;
  if (kind !== opts.policy)
    throw new UsageError(`--set: policy.kind ${String(kind)} is not --policy ${opts.policy}: the policy's kind is --policy's; drop the pair`);
  // A flag's value that a pair did not replace is refused under its flag; the rest as train refuses it (config.policy.…).
  const flagged = Object.entries(policy.flags).filter(([field]) => (raw.policy as Record<string, unknown>)[field] === policy.settings[field]);
  refuseFlagValues(raw.policy as Record<string, unknown>, Object.fromEntries(flagged));
  const config = parseTrainConfig(raw);
  // A generated environment makes enough questions for the held-out split to hold `questions` of them.
  const withHeldOut = envKinds.get(config.env.kind).withHeldOut;
  if (questions !== undefined && withHeldOut && opts.split === 'held-out') return { ...config, env: withHeldOut(config.env, questions) as TrainConfig['env'] };
  return config;
}

/**
 * `--datasets` where the kind says it means something (`EnvKind.datasetsSetting`: qa's list, math's
 * one evaluation dataset); a kind that makes its own questions refuses it rather than ignoring it.
 */
function setDatasets(raw: Record<string, unknown>, kind: string, datasets: string): void {
  const setting = envKinds.has(kind) ? envKinds.get(kind).datasetsSetting : undefined;
  if (!setting) {
    const takers = envKinds
      .entries()
      .filter((k) => k.datasetsSetting)
      .map((k) => k.name);
    throw new UsageError(`--datasets is for --env ${takers.join(' or ')}; env ${kind} makes its own questions (drop --datasets, or use --env ${takers[0]})`);
  }
  if (!setting.single) return setPath(raw, setting.path, datasets);
  const list = datasets
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (list.length !== 1)
    throw new UsageError(
      `--datasets: env ${kind} evaluates one dataset (${setting.path}), got ${list.length}; give one bundled name or JSONL file, e.g. --datasets ${setting.single.example}`,
    );
  setPath(raw, setting.path, list[0]);
}

/** Held-out (or all) questions per dataset, at most `questions` each. */
type Suite = EvalSuite & { setup: EnvironmentSetup; scope: string[] };

/** How eval and diagnose word a context refusal (train/prompt-fit.ts). */
export const EVAL_WORDING: FitWording = { turnSetting: '--max-tokens', tasks: 'questions', purpose: 'to evaluate' };

/**
 * The suite without the questions whose prompt leaves no room for a first turn in the policy's context
 * (train/prompt-fit.ts, as training's setup): counted per dataset (`skipped`, beside n in the table and
 * the JSON) and named in one stderr line. The questions evaluated are chosen first (--split,
 * --questions), so two policies are measured on the same questions less their own refusals. A dataset
 * left with none fails in one line: an empty row would read as a result.
 */
export async function fitSuite<S extends EvalSuite>(suite: S, policy: Policy, config: TrainConfig): Promise<S> {
  const turn = config.engine.maxTokensPerTurn;
  const render = (p: Prompt) => suite.env.render(p);
  const datasets = new Map<string, Prompt[]>();
  const skipped = new Map<string, number>();
  const tooLong: TooLong[] = [];
  let of = 0;
  for (const [name, prompts] of suite.datasets) {
    const fit = await promptsThatFit(policy, prompts, render, turn);
    if (fit.kept.length === 0 && fit.tooLong.length > 0) throw noTaskFits(fit.tooLong, `eval: dataset ${name}`, policy.name, turn, EVAL_WORDING);
    of += prompts.length;
    datasets.set(name, fit.kept);
    skipped.set(name, fit.tooLong.length);
    tooLong.push(...fit.tooLong);
  }
  if (tooLong.length > 0) process.stderr.write(`trace-rl ${tooLongLine(tooLong, of, 'eval', policy.name, turn, EVAL_WORDING)}\n`);
  return { ...suite, datasets, skipped };
}

/** Runs `f`; when it throws, the policy is disposed first (what it holds outside the heap, llama.cpp, is freed before the one-line failure). */
export async function disposingOnError<T>(policy: Policy, f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    await (policy as { dispose?: () => Promise<void> }).dispose?.();
    throw e;
  }
}

export async function buildSuite(config: TrainConfig, split: 'held-out' | 'all', questions: number | undefined): Promise<Suite> {
  let setup;
  try {
    setup = await buildEnvironment(config);
  } catch (e) {
    throw new UsageError(`cannot build the ${config.env.kind} environment: ${(e as Error).message}`);
  }
  const datasets = new Map<string, Prompt[]>();
  const scope: string[] = [];
  for (const [name, held] of setup.heldOut) {
    const own = setup.train.filter((p) => (p.meta?.dataset ?? name) === name && !/~\d+$/.test(p.id));
    const prompts = split === 'all' ? [...held, ...own] : [...held];
    // An empty table exits 0 and reads as a result. The loaders refuse empty files; this guards the rest.
    if (prompts.length === 0) throw new UsageError(`dataset ${name}: no questions to evaluate in the ${split} split; use --split all, or a larger dataset`);
    const evaluated = questions !== undefined ? prompts.slice(0, questions) : prompts;
    datasets.set(name, evaluated);
    scope.push(scopeLine(name, evaluated.length, held.length, held.length + own.length, split, questions));
  }
  return { kind: config.env.kind, env: setup.env, datasets, setup, scope };
}

/**
 * What of a dataset is evaluated, and why, so that "10/10 questions" is not read as the whole file: the
 * default split is the held-out part of the training split (the questions training never sees), and
 * the line gives that split's size, then the dataset's.
 */
function scopeLine(name: string, evaluated: number, held: number, total: number, split: 'held-out' | 'all', questions: number | undefined): string {
  const why: string[] = [];
  if (split === 'held-out' && held < total) why.push(`of ${total} in the dataset; training never sees these; --split all evaluates every question`);
  if (questions !== undefined && evaluated === questions) why.push(`--questions ${questions}`);
  const of = split === 'held-out' ? `${held} held-out` : `${total}`;
  return `eval: ${name}: ${evaluated} of ${of} questions${why.length ? ` (${why.join('; ')})` : ''}`;
}

interface PolicyAbout {
  spec: Record<string, unknown>;
  lines: string[];
}

/** The policy of `config.policy` (evalConfig: the flags, then `--set policy.*`), built by the policy registry (src/policy/registry.ts), and what it is in words. */
export async function buildPolicy(
  opts: EvalFlags,
  suite: Suite,
  run: OpenedRun | undefined,
  temperature: number,
  config: TrainConfig,
): Promise<{ policy: Policy; about: PolicyAbout }> {
  const topK = 'topK' in config.env ? `, top-k ${config.env.topK}` : '';
  const envLine = `environment: ${suite.env.name} (turn limit ${config.engine.maxTurns}${topK}); datasets: ${[...suite.datasets.keys()].join(', ')}; split: ${opts.split}`;
  const sampling = temperature === 0 ? 'greedy' : `sampled at temperature ${temperature}`;
  const trained = trainedRun(run);
  const concurrency = Number(opts.concurrency);
  const settings = config.policy;
  const kind: PolicyKind = policyKinds.get(settings.kind);
  let policy: Policy;
  try {
    // Sampling only: nothing here updates the policy, so a kind's checks of an update are skipped.
    ({ policy } = await buildFromRegistry(settings, { envKind: config.env.kind, setup: suite.setup, concurrency, sampleOnly: true }, config.env));
  } catch (e) {
    if (e instanceof PolicyConfigError) throw new UsageError(e.message);
    throw e;
  }
  // A run's checkpoint holds the trained weights (tiny-lm: its GGUF supplies the vocabulary and shape they load into).
  if (run) (policy as TrainablePolicy).load(run.checkpoint);
  const spec = kind.spec?.(settings, trained) ?? { kind: settings.kind };
  return { policy, about: { spec, lines: [`policy: ${kind.describe(settings, { policy, run: trained, concurrency })}, ${sampling}`, envLine] } };
}

const trainedRun = (run: OpenedRun | undefined): TrainedRun | undefined =>
  run && { dir: run.dir, step: run.step, policy: run.config.policy as TrainedRun['policy'] };

/** The flag of each policy setting that one gives, for messages. */
const POLICY_FLAGS: Record<string, string> = {
  kind: '--policy',
  baseUrls: '--base-url',
  baseUrl: '--base-url',
  model: '--model',
  mode: '--mode',
  temperature: '--temperature',
  apiKeyFile: '--api-key-file',
};

/**
 * The policy settings `--policy` and its flags give (the kind's `fromFlags`; absent: `{ kind }`), not
 * yet checked, and the flag of each field they set. An unknown kind is refused under --policy, naming
 * the known ones.
 */
function policyFlagSettings(opts: EvalFlags, run: TrainedRun | undefined, temperature: number) {
  if (!policyKinds.has(opts.policy)) policyFromFlags({ kind: opts.policy }, { kind: '--policy' });
  const kind = policyKinds.get(opts.policy);
  let settings: Record<string, unknown>;
  try {
    settings = kind.fromFlags?.(opts, run, temperature > 0 ? { temperature } : {}) ?? { kind: kind.name };
  } catch (e) {
    if (e instanceof PolicyConfigError) throw new UsageError(e.message);
    throw e;
  }
  const flags = Object.fromEntries(Object.keys(settings).flatMap((field) => (POLICY_FLAGS[field] ? [[field, POLICY_FLAGS[field]]] : [])));
  return { settings, flags };
}

function pageInput(result: EvalResult, suite: EvalSuite, about: string[], split: string) {
  const rows = [...result.datasets].map(([dataset, d]) => ({ dataset, n: d.n, errors: d.errors, metrics: d.metrics }));
  const trees = [...suite.datasets.keys()].map((dataset) => ({
    dataset,
    trees: result.records.filter((r: EvalRecord) => r.dataset === dataset).map((r) => r.tree),
  }));
  return { title: `trace-rl eval: ${suite.kind} (${split})`, about, metrics: result.metrics, rows, average: result.average, trees };
}

/** A bar on a terminal (questions, questions/s, running mean of the first metric); plain lines otherwise. */
function evalProgress(label: string) {
  const stream = process.stderr;
  const tty = Boolean(stream.isTTY);
  const t0 = performance.now();
  let bar: cliProgress.SingleBar | undefined;
  let lastLine = 0;
  const sums = new Map<string, number>();
  let count = 0;
  return {
    update(done: number, total: number, record: EvalRecord) {
      count++;
      for (const [k, v] of Object.entries(record.metrics)) sums.set(k, (sums.get(k) ?? 0) + v);
      const [metric, sum] = [...sums][0] ?? ['score', 0];
      const rate = count / Math.max(1e-3, (performance.now() - t0) / 1000);
      const payload = { rate: rate.toFixed(2), metric, mean: (sum / count).toFixed(3) };
      if (tty) {
        if (!bar) {
          bar = new cliProgress.SingleBar(
            {
              stream,
              format: `eval [{bar}] {value}/{total} questions | {rate} q/s | {metric} {mean} (this session)`,
              hideCursor: true,
              clearOnComplete: false,
            },
            cliProgress.Presets.shades_classic,
          );
          bar.start(total, done - 1, payload);
        }
        bar.update(done, payload);
      } else if (done === total || performance.now() - lastLine > 5000) {
        lastLine = performance.now();
        stream.write(`${label}: ${done}/${total} questions, ${payload.rate} q/s, ${metric} ${payload.mean} (this session)\n`);
      }
    },
    stop() {
      bar?.stop();
    },
  };
}
