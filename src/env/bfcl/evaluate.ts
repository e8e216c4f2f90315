/**
 * BFCL-style accuracy: each prompt played once by a policy, the checker's verdict as success, reported
 * per category (the leaderboard's multi-turn table) and overall. Ready for `trace-rl eval` to call;
 * `parseAction` reads text for policies that return text only (default: BFCL's prompt format).
 */
import type { Action, Prompt, Turn } from '../../tree/types.ts';
import type { Rng } from '../../util/rng.ts';
import type { PlayerContext } from '../types.ts';
import type { Category } from './data.ts';
import { type BfclEnv, parseBfclText } from './env.ts';

export interface BfclAccuracy {
  /** Per category: entries played, entries passed, accuracy. */
  categories: Partial<Record<Category, { n: number; passed: number; accuracy: number }>>;
  overall: { n: number; passed: number; accuracy: number };
  /** Error types of the failures (BFCL's names; `turn_limit` / `step_limit` when an episode was cut). */
  errors: Record<string, number>;
}

/**
 * What plays an entry: any policy (src/policy) fits. Its context is env/types.ts's PlayerContext, which
 * the policies' own context extends, so the environment does not depend on the policy family (policies
 * depend on environments, not the other way).
 */
export interface BfclPlayer {
  act(ctx: PlayerContext): Promise<{ text: string; thought?: string; action?: Action }>;
}

export async function evaluateBfcl(
  env: BfclEnv,
  policy: BfclPlayer,
  prompts: readonly Prompt[],
  options: { rng: Rng; greedy?: boolean; maxTokens?: number; parseAction?: (text: string) => { thought: string; action: Action } },
): Promise<BfclAccuracy> {
  const parse = options.parseAction ?? parseBfclText;
  const categories: BfclAccuracy['categories'] = {};
  const errors: Record<string, number> = {};
  let passed = 0;
  for (const prompt of prompts) {
    const turns: Turn[] = [];
    let state = env.reset(prompt);
    const rng = options.rng.fork(prompt.id);
    let reward = 0;
    let reason = 'turn_limit';
    for (let t = 0; t < env.maxTurns; t++) {
      const out = await policy.act({
        prompt,
        rendered: env.render(prompt),
        turns,
        rng: rng.fork(t),
        greedy: options.greedy,
        maxTokens: options.maxTokens ?? 512,
      });
      const { thought, action } = out.action ? { thought: out.thought ?? '', action: out.action } : parse(out.text);
      const step = await env.step(state, action);
      turns.push({ thought, action, observation: step.observation, text: out.text });
      state = step.state;
      if (step.done) {
        reward = step.reward ?? 0;
        reason = step.reason ?? 'answer';
        break;
      }
    }
    const category = env.entry(prompt).category;
    const c = (categories[category] ??= { n: 0, passed: 0, accuracy: 0 });
    c.n += 1;
    if (reward === 1) {
      c.passed += 1;
      passed += 1;
    } else errors[reason] = (errors[reason] ?? 0) + 1;
  }
  for (const c of Object.values(categories)) c.accuracy = c.passed / c.n;
  return { categories, overall: { n: prompts.length, passed, accuracy: prompts.length > 0 ? passed / prompts.length : 0 }, errors };
}
