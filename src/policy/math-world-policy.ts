/**
 * A scripted noisy policy for the math world (benchmarks and predictor studies without a language
 * model). It follows the solution program: at code turn t it runs ops[t] with numbers[t + 1] on the
 * running value; with probability ε = min(0.9, noise · (0.5 + 0.25 · s)) for an s-step problem it runs
 * another candidate instead (a wrong operation or number), carries on from the wrong value and so ends
 * with a wrong answer. After s code turns it answers the running value. Decisions depend only on the
 * turns so far and the call's random stream, so it can continue from any prefix.
 */
import type { EnvPolicies } from './kind.ts';
import type { Policy, PolicyContext, PolicyOutput } from './types.ts';
import { CODE_ACTION, mathWorldMeta, worldCandidates } from '../env/math/index.ts';

export class ScriptedMathWorldPolicy implements Policy {
  readonly name = 'math-world-scripted';
  private readonly noise: number;

  constructor(options: { noise?: number } = {}) {
    this.noise = options.noise ?? 0.3;
  }

  async act(ctx: PolicyContext): Promise<PolicyOutput> {
    const { numbers, ops } = mathWorldMeta(ctx.prompt);
    const done = ctx.turns.filter((t) => t.action.type === CODE_ACTION).length;
    const c = worldCandidates(ctx.prompt, ctx.turns);
    if (done >= ops.length) return out(`The result is ${c.answer}.`, 'answer', c.answer);
    const gold = c.code.find((x) => x.op === ops[done] && x.operand === numbers[done + 1])!;
    const eps = Math.min(0.9, this.noise * (0.5 + 0.25 * ops.length));
    const pick = !ctx.greedy && ctx.rng.next() < eps ? c.code.filter((x) => x !== gold)[ctx.rng.int(c.code.length - 1)]! : gold;
    return out(`Step ${done + 1}.`, CODE_ACTION, pick.input);
  }
}

function out(thought: string, type: string, input: string): PolicyOutput {
  const text = type === 'answer' ? `${thought} \\boxed{${input}}` : `${thought}\n\`\`\`python\n${input}\n\`\`\``;
  return { text, thought, action: { type, input }, generatedTokens: Math.ceil(text.length / 4) };
}

/** What the math world brings: its noisy scripted solver is `policy.kind: scripted` there, with env.math.noise. */
export const mathWorldPolicies: EnvPolicies = {
  name: 'math-world',
  scripted: (_s, env) => new ScriptedMathWorldPolicy({ noise: (env.math as { noise: number }).noise }),
};
