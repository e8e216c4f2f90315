/**
 * Episodes outside the rollout engine, for the contract suites and the environment tests: a policy
 * acts, the environment steps, and every intermediate state is kept so restore can be compared with
 * replay. Policies that write text are parsed the way the engine parses them (the environment's own
 * `parse`, else the Search-R1 protocol).
 */
import type { Environment } from '../../src/env/types.ts';
import type { Policy, PolicyOutput } from '../../src/policy/types.ts';
import { searchR1Action } from '../../src/rollout/index.ts';
import type { Action, Prompt, Turn } from '../../src/tree/types.ts';
import type { Rng } from '../../src/util/rng.ts';

export interface Episode<S> {
  turns: Turn[];
  /** states[t] is the state after t turns (states[0] = reset or the restored prefix). */
  states: S[];
  /** The last step's outcome: done, reward, reason. */
  last: { done: boolean; reward?: number; score?: number; reason?: string };
}

/** Thought and action of a policy output, parsed as the engine does. */
export function parsedAction(env: Environment<unknown>, out: PolicyOutput): { thought: string; action: Action } {
  if (out.action) return { thought: out.thought ?? '', action: out.action };
  return env.parse ? env.parse(out.text) : searchR1Action(out.text);
}

/**
 * Plays one episode from `prefix` (default: the start) until the environment says done. The policy's
 * random stream is `rng.fork(turn index)`, so an episode is a function of (prompt, prefix, rng).
 */
export async function playEpisode<S>(
  env: Environment<S>,
  policy: Policy,
  prompt: Prompt,
  rng: Rng,
  options: { prefix?: readonly Turn[]; maxTokens?: number } = {},
): Promise<Episode<S>> {
  const turns = [...(options.prefix ?? [])];
  let state: S = await env.restore(prompt, turns);
  const states = [state];
  const limit = (env.maxTurns ?? 50) + 1;
  for (;;) {
    if (turns.length > limit) throw new Error(`${env.name}: no end after ${turns.length} turns (maxTurns ${env.maxTurns})`);
    const out = await policy.act({ prompt, rendered: env.render(prompt), turns, rng: rng.fork(turns.length), maxTokens: options.maxTokens ?? 64 });
    const { thought, action } = parsedAction(env as Environment<unknown>, out);
    const step = await env.step(state, action);
    // The turn as the engine records it (tokens and log-probabilities are what trainable policies learn from).
    turns.push({
      thought,
      action,
      observation: step.observation,
      text: out.text,
      generatedTokens: out.generatedTokens,
      ...(out.tokens ? { tokens: out.tokens } : {}),
      ...(out.entropy !== undefined ? { entropy: out.entropy } : {}),
      ...(out.logprob !== undefined ? { logprob: out.logprob } : {}),
      ...(step.env !== undefined ? { env: step.env } : {}),
    });
    state = step.state;
    states.push(state);
    if (step.done) {
      // A server session's state is freed when its episode ends, as the engine does (in-process states hold nothing).
      await env.release?.(state);
      return { turns, states, last: { done: true, reward: step.reward, score: step.score, reason: step.reason } };
    }
  }
}

/**
 * A seeded policy for Search-R1 text environments: it searches words of the question or of the latest
 * observation, answers one of them, and sometimes writes an unusable turn — enough to walk every kind
 * of transition (search, answer, invalid, turn limit) without a model.
 */
export class RandomSearchR1Policy implements Policy {
  readonly name = 'random-search-r1';
  async act(ctx: Parameters<Policy['act']>[0]): Promise<PolicyOutput> {
    const last = ctx.turns.at(-1)?.observation ?? '';
    const words = `${ctx.prompt.question} ${last}`.split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 3);
    const word = words.length > 0 ? words[ctx.rng.int(words.length)]! : 'nothing';
    const r = ctx.rng.next();
    const text =
      r < 0.15
        ? 'I am not sure what to do.'
        : r < 0.7
          ? `<think>look up ${word}</think>\n<search>${word}</search>`
          : `<think>maybe ${word}</think>\n<answer>${word}</answer>`;
    return { text, generatedTokens: text.length };
  }
}
