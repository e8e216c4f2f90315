import type { Environment, KnowsTruth } from '../env/index.ts';
import { InlineArithmeticTool, MathEnv, MathWorldEnv, Simulator, WorldEnv, createCodeTool, loadMathDataset, worldCandidates } from '../env/index.ts';
import { EmbeddedPolicy, ScriptedMathWorldPolicy, SimulatorPolicy, worldCandidateSource, type Policy, type TrainablePolicy } from '../policy/index.ts';
import { BetaBernoulliPredictor, GlobalRatePredictor, createFeatures, createMlpPredictor, type SuccessPredictor } from '../predict/index.ts';
import { initJax } from '../util/jax.ts';
import { ConfigError, type TrainConfig } from './config.ts';
import type { Prompt } from '../tree/types.ts';

/** Everything a run is made of, built from the configuration once. */
export interface Components {
  env: Environment<unknown>;
  /** Set when the environment knows exact success probabilities (the simulator). */
  truth?: KnowsTruth;
  train: Prompt[];
  test: Prompt[];
  policy: Policy;
  trainable?: TrainablePolicy;
  predictor: SuccessPredictor;
}

export async function buildComponents(config: TrainConfig): Promise<Components> {
  const predictor = await buildPredictor(config);
  const success = { rule: config.env.successRule, threshold: config.env.successThreshold };
  if (config.env.kind === 'bfcl') {
    // BFCL has no trainable policy here (no model in this project can do it): the scripted noisy policy drives it.
    const { BfclEnv, ScriptedBfclPolicy } = await import('../env/bfcl/index.ts');
    const env = new BfclEnv({ seed: config.env.seed, testFraction: config.env.testFraction, maxTurns: config.engine.maxTurns });
    return { env: env as Environment<unknown>, train: env.train, test: env.test, policy: new ScriptedBfclPolicy(env), predictor };
  }
  if (config.env.kind === 'simulator') {
    const sim = new Simulator({ seed: config.env.seed, maxTurns: config.engine.maxTurns });
    const all = sim.prompts(config.env.questions);
    const nTest = Math.max(1, Math.round(all.length * config.env.testFraction));
    return { env: sim as Environment<unknown>, truth: sim, train: all.slice(nTest), test: all.slice(0, nTest), policy: new SimulatorPolicy(sim), predictor };
  }
  if (config.env.kind === 'math') return buildMath(config, predictor);
  if (config.env.kind === 'math-world') return buildMathWorld(config, predictor);
  if (config.policy.kind === 'scripted') throw new ConfigError('policy.kind scripted is only for env.kind math-world');
  const env = new WorldEnv({
    seed: config.env.seed,
    questions: config.env.questions,
    testFraction: config.env.testFraction,
    topK: config.env.topK,
    maxTurns: config.engine.maxTurns,
    success,
  });
  if (config.policy.kind === 'tiny-lm') {
    const policy = await buildTinyLm(config);
    return { env: env as Environment<unknown>, train: env.train, test: env.test, policy, trainable: policy, predictor };
  }
  const policy = new EmbeddedPolicy({ candidates: worldCandidateSource(env) });
  return { env: env as Environment<unknown>, train: env.train, test: env.test, policy, trainable: policy, predictor };
}

/** Tool-integrated math: needs a policy that writes text (tiny-lm here; any model through the rollout service). */
async function buildMath(config: TrainConfig, predictor: SuccessPredictor): Promise<Components> {
  const m = config.env.math;
  if (config.policy.kind !== 'tiny-lm') {
    throw new ConfigError('env.kind math needs a policy that writes text: set policy.kind tiny-lm, or drive it from an external trainer through `trace-rl export` / the rollout service with an openai policy');
  }
  const train = loadMathDataset(m.dataset, { limit: m.limit });
  const test = loadMathDataset(m.testDataset, { limit: m.limit });
  if (m.tool === 'inline') throw new ConfigError('env.math.tool inline runs only the math world\'s cells; use pyodide or url for env.kind math');
  const env = new MathEnv({ tool: createCodeTool({ ...m, tool: m.tool ?? 'pyodide' }), format: m.format, maxTurns: config.engine.maxTurns });
  const policy = await buildTinyLm(config);
  return { env: env as Environment<unknown>, train, test, policy, trainable: policy, predictor };
}

/** The math world: generated problems, code cells as candidate actions, for the embedded (or scripted) policy. */
async function buildMathWorld(config: TrainConfig, predictor: SuccessPredictor): Promise<Components> {
  const m = config.env.math;
  const tool = m.tool === undefined || m.tool === 'inline' ? new InlineArithmeticTool() : createCodeTool({ ...m, tool: m.tool });
  const env = new MathWorldEnv({ seed: config.env.seed, problems: m.problems, testFraction: config.env.testFraction, maxTurns: config.engine.maxTurns, tool });
  const base = { env: env as Environment<unknown>, train: env.train, test: env.test, predictor };
  if (config.policy.kind === 'scripted') return { ...base, policy: new ScriptedMathWorldPolicy({ noise: m.noise }) };
  if (config.policy.kind === 'tiny-lm') throw new ConfigError('env.kind math-world is for the embedded or scripted policy; use env.kind math for a language model');
  const policy = new EmbeddedPolicy({
    candidates: (prompt, turns) => {
      const c = worldCandidates(prompt, turns);
      return { search: [], answer: [c.answer], tool: c.code.map((x) => ({ type: 'python', input: x.input })) };
    },
  });
  return { ...base, policy, trainable: policy };
}

async function buildPredictor(config: TrainConfig): Promise<SuccessPredictor> {
  switch (config.predictor.kind) {
    case 'mlp':
      return createMlpPredictor({
        features: createFeatures({ hashed: { maxTurns: config.engine.maxTurns, useGold: config.predictor.useGold } }),
        hidden: config.predictor.hidden,
        lr: config.predictor.lr,
        replaySteps: config.predictor.replaySteps,
        seed: config.seed,
      });
    case 'beta':
      return new BetaBernoulliPredictor();
    case 'global':
      return new GlobalRatePredictor();
  }
}

/** The tiny LM from its GGUF (imported lazily: node-llama-cpp is heavy); the step passes its update settings. */
async function buildTinyLm(config: TrainConfig): Promise<TrainablePolicy> {
  const { readFileSync } = await import('node:fs');
  const { TinyLmPolicy } = await import('../tinylm/index.ts');
  await initJax();
  const file = config.policy.model!;
  return TinyLmPolicy.fromBytes(new Uint8Array(readFileSync(file)), {}, file);
}
