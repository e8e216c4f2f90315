/**
 * One registry of environment kinds, built from `config.env`: what training, the rollout service and
 * `trace-rl eval` all need from an environment — the environment, its training and held-out prompts
 * (held-out grouped by dataset for evaluation tables), and, for the embedded policy, where its
 * candidate actions come from. Adding an environment kind is one entry here (plus its metrics entry in
 * src/eval/kinds.ts for evaluation).
 */
import type { Environment, KnowsTruth } from '../env/index.ts';
import { InlineArithmeticTool, MathEnv, MathWorldEnv, QaEnv, Simulator, WorldEnv, createCodeTool, loadMathDataset, qaCandidates, worldCandidates } from '../env/index.ts';
import { BfclEnv } from '../env/bfcl/index.ts';
import { ScriptedBfclPolicy, ScriptedMathWorldPolicy, SimulatorPolicy, worldCandidateSource, type CandidateSource, type Policy } from '../policy/index.ts';
import type { Prompt } from '../tree/types.ts';
import { ConfigError, type TrainConfig } from './config.ts';

export interface EnvironmentSetup {
  env: Environment<unknown>;
  train: Prompt[];
  test: Prompt[];
  /** Held-out prompts by dataset name (one entry, named after the kind, for generated environments). */
  heldOut: Map<string, Prompt[]>;
  /** Set when the environment knows exact success probabilities (the simulator). */
  truth?: KnowsTruth;
  /** Candidate actions for the embedded policy; absent when it cannot act here. */
  candidates?: CandidateSource;
  /** A fixed policy that belongs to the environment (the simulator's), used instead of a trainable one. */
  fixedPolicy?: Policy;
  /** The environment's scripted noisy policy, for `policy.kind: scripted` (allocation studies). */
  scripted?: Policy;
  /** True when only a policy that writes text can act (no candidate actions for the embedded policy). */
  needsText?: boolean;
}

type Builder = (config: TrainConfig) => EnvironmentSetup;

const success = (config: TrainConfig) => ({ rule: config.env.successRule, threshold: config.env.successThreshold });

export const ENVIRONMENTS: Record<TrainConfig['env']['kind'], Builder> = {
  world(config) {
    const env = new WorldEnv({
      seed: config.env.seed,
      questions: config.env.questions,
      testFraction: config.env.testFraction,
      topK: config.env.topK,
      maxTurns: config.engine.maxTurns,
      success: success(config),
      prompt: config.env.prompt,
      ...(config.env.world ? { profile: config.env.world.profile } : {}),
    });
    return { env: env as Environment<unknown>, train: env.train, test: env.test, heldOut: new Map([['world', env.test]]), candidates: worldCandidateSource(env) };
  },
  simulator(config) {
    const sim = new Simulator({ seed: config.env.seed, maxTurns: config.engine.maxTurns });
    const all = sim.prompts(config.env.questions);
    const nTest = Math.max(1, Math.round(all.length * config.env.testFraction));
    const test = all.slice(0, nTest);
    return { env: sim as Environment<unknown>, truth: sim, train: all.slice(nTest), test, heldOut: new Map([['simulator', test]]), fixedPolicy: new SimulatorPolicy(sim) };
  },
  qa(config) {
    const env = new QaEnv({
      datasets: config.env.datasets,
      retrieval: config.env.retrieval,
      retrieverUrl: config.env.retrieverUrl,
      retrieverTimeoutMs: config.env.retrieverTimeoutMs,
      cacheDir: config.env.cacheDir,
      seed: config.env.seed,
      testFraction: config.env.testFraction,
      topK: config.env.topK,
      maxTurns: config.engine.maxTurns,
      success: success(config),
    });
    return { env: env as Environment<unknown>, train: env.train, test: env.test, heldOut: env.heldOut, candidates: (prompt, turns) => qaCandidates(prompt, turns) };
  },
  bfcl(config) {
    // No trainable policy here can call BFCL's functions (no such model on CPU): the scripted noisy policy drives it.
    const env = new BfclEnv({ seed: config.env.seed, testFraction: config.env.testFraction, maxTurns: config.engine.maxTurns });
    const heldOut = new Map<string, Prompt[]>();
    for (const p of env.test) {
      const category = `bfcl_${(p.meta?.bfcl as { category: string }).category}`;
      heldOut.set(category, [...(heldOut.get(category) ?? []), p]);
    }
    return { env: env as Environment<unknown>, train: env.train, test: env.test, heldOut, fixedPolicy: new ScriptedBfclPolicy(env) };
  },
  math(config) {
    const m = config.env.math;
    if (m.tool === 'inline') throw new ConfigError("config.env.math.tool: inline runs only the math world's cells; use pyodide or url for env.kind math");
    const env = new MathEnv({ tool: createCodeTool({ ...m, tool: m.tool ?? 'pyodide' }), format: m.format, maxTurns: config.engine.maxTurns });
    const test = loadMathDataset(m.testDataset, { limit: m.limit });
    return { env: env as Environment<unknown>, train: loadMathDataset(m.dataset, { limit: m.limit }), test, heldOut: new Map([[m.testDataset, test]]), needsText: true };
  },
  'math-world'(config) {
    const m = config.env.math;
    if (config.policy.kind === 'tiny-lm') throw new ConfigError('config.policy.kind: env.kind math-world is for the embedded or scripted policy; use env.kind math for a language model');
    const tool = m.tool === undefined || m.tool === 'inline' ? new InlineArithmeticTool() : createCodeTool({ ...m, tool: m.tool });
    const env = new MathWorldEnv({ seed: config.env.seed, problems: m.problems, testFraction: config.env.testFraction, maxTurns: config.engine.maxTurns, tool });
    // Held-out rows per difficulty (number of solution steps), easiest first.
    const heldOut = new Map<string, Prompt[]>();
    for (const p of [...env.test].sort((a, b) => (a.meta!.steps as number) - (b.meta!.steps as number))) {
      const key = `math-world-${p.meta!.steps as number}step`;
      heldOut.set(key, [...(heldOut.get(key) ?? []), p]);
    }
    const candidates: CandidateSource = (prompt, turns) => {
      const c = worldCandidates(prompt, turns);
      return { search: [], answer: [c.answer], tool: c.code.map((x) => ({ type: 'python', input: x.input })) };
    };
    return { env: env as Environment<unknown>, train: env.train, test: env.test, heldOut, candidates, scripted: new ScriptedMathWorldPolicy({ noise: m.noise }) };
  },
};

export function buildEnvironment(config: TrainConfig): EnvironmentSetup {
  return ENVIRONMENTS[config.env.kind](config);
}
