/**
 * A scripted policy for the world that follows the gold search path with noise — for benchmarks and
 * for training/calibrating predictors without a language model. At each turn it targets the first
 * gold entity it has neither read nor mistaken for another; with probability
 *   ε = min(0.9, noise · (0.1 + 0.8 · min(#lookalikes, 3)))
 * it searches a look-alike name instead (or another entity it has seen, when there is none), and half
 * of those times it is fooled: it takes the look-alike for the target (its thought says so), carries on
 * with the wrong entity and ends with a wrong answer. Otherwise it notices and retries next turn, which
 * costs a turn. With every gold passage read it answers the gold answer, except that each of the h
 * passages may be misread: P(wrong answer) = 1 − (1 − noise/6)^h. On its last turn it guesses among the
 * candidates. Difficulty therefore grows with hops, with look-alike names, and with the turn limit
 * (a 4-hop question leaves a single spare turn). Decisions depend only on the turns so far (its own
 * thoughts included), so it can continue from any prefix.
 */
import { titlesIn } from '../env/search/index.ts';
import { candidatesFrom, worldMeta, type WorldEnv } from '../env/world/index.ts';
import type { Policy, PolicyContext, PolicyOutput } from './types.ts';

export interface ScriptedPolicyOptions {
  /** Base noise in [0, 1]. Default 0.35. */
  noise?: number;
}

const FOOLED = /which I take to be (.+)\.$/;

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
    const mistaken = new Set(ctx.turns.map((t) => FOOLED.exec(t.thought)?.[1]).filter((x): x is string => x !== undefined));
    const target = meta.goldPath.find((n) => !seen.has(n) && !mistaken.has(n));
    const lastTurn = ctx.turns.length + 1 >= this.env.maxTurns;
    const cands = candidatesFrom(this.env.world, this.env.restore(ctx.prompt, ctx.turns));
    const rng = ctx.rng;
    const gold = ctx.prompt.answers[0]!;
    const wrong = cands.answer.filter((a) => a !== gold);
    const pickWrong = () => (wrong.length > 0 ? wrong[rng.int(wrong.length)]! : gold);
    if (target === undefined) {
      if (mistaken.size > 0) return out('I followed the entity I found.', 'answer', pickWrong());
      const correct = rng.next() < Math.pow(1 - this.noise / 6, meta.hops);
      return out('I have read every passage I need.', 'answer', correct ? gold : pickWrong());
    }
    if (lastTurn) {
      const guess = cands.answer.length > 0 ? cands.answer[rng.int(cands.answer.length)]! : gold;
      return out('Out of turns; best guess.', 'answer', guess);
    }
    const lookalikes = this.env.world.byName.get(target)?.lookalikes ?? [];
    const eps = Math.min(0.9, this.noise * (0.1 + 0.8 * Math.min(lookalikes.length, 3)));
    if (!ctx.greedy && rng.next() < eps) {
      const astray = lookalikes.length > 0 ? lookalikes : cands.search.filter((n) => n !== target);
      if (astray.length > 0) {
        const name = astray[rng.int(astray.length)]!;
        const fooled = rng.next() < 0.5;
        return out(fooled ? `Searching ${name}, which I take to be ${target}.` : `Looking up ${target}.`, 'search', name);
      }
    }
    return out(`Next I need ${target}.`, 'search', target);
  }
}

function out(thought: string, type: 'search' | 'answer', input: string): PolicyOutput {
  const text = `<think>${thought}</think>\n<${type}>${input}</${type}>`;
  return { text, action: { type, input }, thought, generatedTokens: Math.ceil(text.length / 4) };
}
