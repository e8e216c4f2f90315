/**
 * A scripted policy for the world that follows the gold search path with noise — for benchmarks and
 * for training/calibrating predictors without a language model. At each turn it searches the first
 * gold entity whose passage it has not seen yet; with probability
 *   ε = min(0.9, noise · (0.5 + 0.5 · #lookalikes))
 * it searches a look-alike name (or another entity it has seen) instead. Once every gold passage has
 * been seen it answers the gold answer, except with probability noise/3 a wrong candidate. On its last
 * turn it answers its best guess. Difficulty therefore grows with hops and with look-alike names.
 */
import type { Policy, PolicyContext, PolicyOutput } from '../../policy/types.ts';
import { titlesIn } from '../search-r1.ts';
import { candidatesFrom, worldMeta, type WorldEnv } from './world-env.ts';

export interface ScriptedPolicyOptions {
  /** Base noise in [0, 1]. Default 0.35. */
  noise?: number;
}

export class ScriptedWorldPolicy implements Policy {
  readonly name = 'world-scripted';
  private readonly noise: number;

  constructor(
    private readonly env: WorldEnv,
    options: ScriptedPolicyOptions = {},
  ) {
    this.noise = options.noise ?? 0.35;
  }

  async act(ctx: PolicyContext): Promise<PolicyOutput> {
    const meta = worldMeta(ctx.prompt);
    const seen = new Set(ctx.turns.flatMap((t) => titlesIn(t.observation)));
    const target = meta.goldPath.find((n) => !seen.has(n));
    const lastTurn = ctx.turns.length + 1 >= this.env.maxTurns;
    const state = this.env.restore(ctx.prompt, ctx.turns);
    const cands = candidatesFrom(this.env.world, state);
    const rng = ctx.rng;
    if (target === undefined || lastTurn) {
      const gold = ctx.prompt.answers[0]!;
      const wrong = cands.answer.filter((a) => a !== gold);
      // With every gold passage seen it knows the answer (up to noise); otherwise it guesses among candidates.
      const answer =
        target === undefined
          ? rng.next() >= this.noise / 3 || wrong.length === 0
            ? gold
            : wrong[rng.int(wrong.length)]!
          : cands.answer.length > 0
            ? cands.answer[rng.int(cands.answer.length)]!
            : gold;
      return out(target === undefined ? 'I have read every passage I need.' : 'Out of turns; best guess.', 'answer', answer);
    }
    const entity = this.env.world.byName.get(target);
    const lookalikes = entity?.lookalikes ?? [];
    const eps = Math.min(0.9, this.noise * (0.5 + 0.5 * lookalikes.length));
    if (!ctx.greedy && rng.next() < eps) {
      const astray = lookalikes.length > 0 ? lookalikes : cands.search.filter((n) => n !== target);
      if (astray.length > 0) return out(`Looking up ${target}.`, 'search', astray[rng.int(astray.length)]!);
    }
    return out(`Next I need ${target}.`, 'search', target);
  }
}

function out(thought: string, type: 'search' | 'answer', input: string): PolicyOutput {
  const text = `<think>${thought}</think>\n<${type}>${input}</${type}>`;
  return { text, action: { type, input }, thought, generatedTokens: Math.ceil(text.length / 4) };
}
