/**
 * The random policy that matches the {@link Simulator}: at each node it samples a branch with the
 * tree's probabilities p_b, so `Simulator.trueSuccess` is exactly its success probability. Needs no
 * model, which makes oracle comparisons and predictor calibration cheap.
 */
import type { Simulator } from '../env/simulator.ts';
import type { Policy, PolicyContext, PolicyOutput } from './types.ts';

export interface SimulatorPolicyOptions {
  /** Tokens the policy reports per turn (for budget accounting). Default 8. */
  tokensPerTurn?: number;
}

export class SimulatorPolicy implements Policy {
  readonly name = 'simulator-random';
  private readonly tokensPerTurn: number;

  constructor(
    private readonly sim: Simulator,
    options: SimulatorPolicyOptions = {},
  ) {
    this.tokensPerTurn = options.tokensPerTurn ?? 8;
  }

  async act(ctx: PolicyContext): Promise<PolicyOutput> {
    const state = this.sim.restore(ctx.prompt, ctx.turns);
    const { branches } = this.sim.node(state);
    let index = 0;
    if (ctx.greedy) {
      for (let i = 1; i < branches.length; i++) if (branches[i]!.p > branches[index]!.p) index = i;
    } else {
      let u = ctx.rng.next();
      index = branches.length - 1;
      for (let i = 0; i < branches.length; i++) {
        u -= branches[i]!.p;
        if (u < 0) {
          index = i;
          break;
        }
      }
    }
    const b = branches[index]!;
    const entropy = -branches.reduce((h, x) => h + (x.p > 0 ? x.p * Math.log(x.p) : 0), 0);
    const thought = `Taking option ${b.label}.`;
    return {
      text: `<think>${thought}</think>\n<${b.kind}>${b.label}</${b.kind}>`,
      action: { type: b.kind, input: b.label },
      thought,
      generatedTokens: this.tokensPerTurn,
      logprob: Math.log(b.p),
      entropy,
    };
  }
}
