/**
 * The random policy that matches the {@link Simulator}: at each node it samples a branch with the
 * tree's probabilities p_b, so `Simulator.trueSuccess` is exactly its success probability. Needs no
 * model, which makes oracle comparisons and predictor calibration cheap.
 */
import type { SimNode, Simulator } from '../env/simulator/index.ts';
import type { EnvPolicies } from './kind.ts';
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
    const node = this.sim.node(state);
    return simulatorTurn(
      node,
      node.branches.map((x) => x.p),
      ctx,
      this.tokensPerTurn,
    );
  }
}

/**
 * One simulator turn with branch probabilities `probs` (the tree's p_b, or a learned policy's): the
 * likeliest branch when greedy, else an inverse-CDF draw of one uniform, so a policy whose probs equal
 * p_b acts exactly as this one; its log-probability and the node's entropy.
 */
export function simulatorTurn(node: SimNode, probs: readonly number[], ctx: PolicyContext, tokensPerTurn: number): PolicyOutput {
  let index = 0;
  if (ctx.greedy) {
    for (let i = 1; i < probs.length; i++) if (probs[i]! > probs[index]!) index = i;
  } else {
    let u = ctx.rng.next();
    index = probs.length - 1;
    for (let i = 0; i < probs.length; i++) {
      u -= probs[i]!;
      if (u < 0) {
        index = i;
        break;
      }
    }
  }
  const b = node.branches[index]!;
  const thought = `Taking option ${b.label}.`;
  return {
    text: `<think>${thought}</think>\n<${b.kind}>${b.label}</${b.kind}>`,
    action: { type: b.kind, input: b.label },
    thought,
    generatedTokens: tokensPerTurn,
    logprob: Math.log(probs[index]!),
    entropy: branchEntropy(probs),
  };
}

/** −Σ p log p over a node's branch probabilities, in nats. */
export function branchEntropy(probs: readonly number[]): number {
  let h = 0;
  for (const x of probs) if (x > 0) h -= x * Math.log(x);
  return h;
}

/**
 * What the simulator brings: its random policy, whose success probabilities are the simulator's known
 * ones, acts there whatever is configured, unless the learnable tabular policy replaces it.
 */
export const simulatorPolicies: EnvPolicies = {
  name: 'simulator',
  fixed: (s) => new SimulatorPolicy(s.env as unknown as Simulator),
  replacedBy: ['simulator-tabular'],
};
