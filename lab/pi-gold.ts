/**
 * π_gold: a root scorer that reads each candidate's gold trajectory (the world's gold search path with
 * the observations the environment really returns, then the gold answer) and scores it by the current
 * policy's teacher-forced probability of that trajectory. It reads gold metadata that a deployable
 * predictor never sees (for an LLM: supporting facts, a reference solution), so it is an experiment's
 * scorer, registered only by this lab and never a default.
 *
 * The score goes to the exact root solver as v with no continuations, the way the oracle's probe arm
 * feeds it fresh outcomes: the solver values v near ½, so prompts whose gold path the policy follows
 * about half the time get the rollouts.
 */
import { z } from 'zod';
import {
  adaptiveLeftover,
  allRemaining,
  pluginStrategyOptions,
  solvedRootPlanner,
  type RootCandidate,
  type StepPlan,
  type StepStart,
  type Strategy,
} from '../src/allocate/index.ts';
import { WorldEnv, worldMeta } from '../src/env/world/world-env.ts';
import { EmbeddedPolicy } from '../src/policy/embedded/embedded-policy.ts';
import type { Action, Prompt, Turn } from '../src/tree/types.ts';

/** The characters a token stands for, as the policies and the fault server count them. */
const CHARS_PER_TOKEN = 4;
const tokensOf = (text: string): number => Math.ceil(text.length / CHARS_PER_TOKEN);

/** One prompt's gold trajectory under the current policy. */
export interface GoldTrace {
  /** Π over the gold actions of π(action | the gold prefix before it); 0 when one is not among the policy's candidates. */
  prob: number;
  /** Σ log π over the gold actions (−∞ when prob is 0). */
  logprob: number;
  /** Gold actions scored (searches + the answer). */
  turns: number;
  /**
   * Tokens a teacher-forced pass over the trajectory reads: the rendered prompt, each turn's text and
   * each observation, at the policies' four characters a token.
   */
  tokens: number;
}

/** The gold actions of a world question: each entity of its gold search path, then its gold answer. */
export function goldActions(prompt: Prompt): Action[] {
  const meta = worldMeta(prompt);
  const answer = prompt.answers[0];
  if (answer === undefined) throw new Error(`prompt ${prompt.id} has no gold answer`);
  return [...meta.goldPath.map((input): Action => ({ type: 'search', input })), { type: 'answer', input: answer }];
}

/** The turn text the embedded policy writes for an action, so the trajectory's tokens are the ones it would generate. */
function turnText(action: Action): { thought: string; text: string } {
  const thought = action.type === 'search' ? `I need to look up ${action.input}.` : `The answer is ${action.input}.`;
  return { thought, text: `<think>${thought}</think>\n<${action.type}>${action.input}</${action.type}>` };
}

/**
 * Teacher-forces the gold trajectory: at each gold action the policy's probability of it given the
 * gold turns so far, then the environment's real step (search results included), so the next choice
 * is scored against what the policy would actually see. Stops early only if the episode ends.
 */
export async function goldTrace(env: WorldEnv, policy: EmbeddedPolicy, prompt: Prompt): Promise<GoldTrace> {
  let state = env.reset(prompt);
  const turns: Turn[] = [];
  let logprob = 0;
  let tokens = tokensOf(env.render(prompt));
  for (const action of goldActions(prompt)) {
    const lp = policy.logprob(prompt, turns, action);
    logprob += lp ?? -Infinity;
    const { thought, text } = turnText(action);
    const out = await env.step(state, action);
    tokens += tokensOf(text) + tokensOf(out.observation);
    turns.push({ thought, action, observation: out.observation, text, generatedTokens: tokensOf(text) });
    state = out.state;
    if (out.done) break;
  }
  return { prob: Math.exp(logprob), logprob, turns: turns.length, tokens };
}

/** How a gold trajectory becomes v: its probability, or the per-turn geometric mean of it. */
export type GoldScore = 'product' | 'geomean';

export function goldValue(trace: GoldTrace, score: GoldScore): number {
  if (trace.prob === 0 || trace.turns === 0) return 0;
  return score === 'product' ? trace.prob : Math.exp(trace.logprob / trace.turns);
}

/**
 * The prefill price this lab declares: a token read by a forward pass (prefill, teacher forcing) costs
 * 1/5 of a generated token. Serving prices put input tokens at 1/4–1/5 of output tokens; measured GPU
 * throughput puts prefill further below decode (compute-bound against memory-bound), so 1/5 is the
 * dearer end of the range and does not flatter the charged arm.
 */
export const PREFILL_PRICE = 0.2;

export const piGoldSchema = pluginStrategyOptions('pigold', {
  min: z.number().int().min(2).default(2).describe('m_min ≥ 2: fewest bare rollouts a selected prompt gets'),
  max: z.number().int().min(2).default(16).describe('m_max: most bare rollouts one prompt gets (also the top-up’s cap)'),
  score: z
    .enum(['product', 'geomean'])
    .default('product')
    .describe('v from the gold trajectory: product = its teacher-forced probability; geomean = that probability per turn (its T-th root)'),
  prefillPrice: z
    .number()
    .min(0)
    .default(0)
    .describe(
      'charged: each step’s cap is reduced by this price × the teacher-forced tokens of every candidate’s gold trajectory (budget unit tokens); 0 = uncharged, a measuring instrument',
    ),
});
export type PiGoldOptions = z.output<typeof piGoldSchema>;

/** A run's environment and policy as π_gold needs them: the world and the embedded policy. */
export function isGoldReadable(run: { env: unknown; policy: unknown }): run is { env: WorldEnv; policy: EmbeddedPolicy } {
  return run.env instanceof WorldEnv && run.policy instanceof EmbeddedPolicy;
}

/** The cap a charged step keeps: B less the declared price of the gold trajectories' tokens (never below 0). */
export function chargedCap(budget: number, price: number, tokens: number): number {
  return Math.max(0, budget - price * tokens);
}

/** The root solver on v with no continuations (the oracle probe arm's parts), capped at `cap`. */
function rootsOn(o: PiGoldOptions, cap: number): Strategy {
  return {
    name: 'pigold',
    cap,
    roots: solvedRootPlanner(allRemaining, (c: RootCandidate) => ({ v: c.v, w: 1 }), o),
    leftover: adaptiveLeftover((c) => c.v, o.max),
  };
}

export function piGoldStrategy(o: PiGoldOptions): Strategy {
  const base = rootsOn(o, o.budget);
  const perStep = async (start: StepStart): Promise<StepPlan> => {
    if (!isGoldReadable(start.run)) throw new Error('strategy pigold reads the world’s gold paths: it needs env.kind world and the embedded policy');
    const { env, policy } = start.run;
    const prompts = new Map([...env.train, ...env.test].map((p) => [p.id, p]));
    let tokens = 0;
    let unreachable = 0;
    let sum = 0;
    const candidates: RootCandidate[] = [];
    for (const c of start.candidates) {
      const prompt = prompts.get(c.promptId);
      if (!prompt) throw new Error(`pigold: candidate ${c.promptId} is not a question of the run's world`);
      const trace = await goldTrace(env, policy, prompt);
      const v = goldValue(trace, o.score);
      tokens += trace.tokens;
      if (trace.prob === 0) unreachable++;
      sum += v;
      candidates.push({ ...c, v });
    }
    const cap = o.prefillPrice > 0 ? chargedCap(o.budget, o.prefillPrice, tokens) : o.budget;
    return {
      strategy: cap === o.budget ? base : rootsOn(o, cap),
      candidates,
      metrics: {
        pigold_prefill_tokens: tokens,
        pigold_charge: o.prefillPrice * tokens,
        pigold_mean_v: candidates.length ? sum / candidates.length : 0,
        pigold_unreachable: unreachable,
      },
    };
  };
  return { ...base, perStep };
}
