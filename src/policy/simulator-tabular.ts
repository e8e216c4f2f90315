/**
 * A learnable tabular policy for the {@link Simulator}: one softmax over the branches of every
 * simulator node, π(b | node) = softmax(θ_node)_b, with θ_node initialised at log p_b, so before any
 * update it is exactly the random SimulatorPolicy (a node never updated is served the tree's own p_b).
 * A node is named by its prompt and the branch indices that lead to it, so nothing is shared between
 * prompts: it learns the prompts it trains on, and no others.
 *
 * It is the simulator's SimPlayer: `Simulator.withPlayer(policy)` makes `trueSuccess` the exact
 * success probability of this policy's current π (allocation's true p, the exact J of evaluation).
 */
import { type SimNode, type SimPlayer, type Simulator } from '../env/simulator/index.ts';
import type { Action, Prompt, Turn } from '../tree/types.ts';
import { PolicySnapshotError } from './embedded/embedded-policy.ts';
import { branchEntropy, simulatorTurn } from './simulator-policy.ts';
import { clippedTerm, contributingTurns, SurrogateTally, type Normalise } from './surrogate.ts';
import type { PolicyContext, PolicyOutput, PolicySample, PolicyUpdateOptions, TrainablePolicy, UpdateMetrics } from './types.ts';

export interface SimulatorTabularOptions {
  /** Tokens the policy reports per turn (for budget accounting). Default 8, as SimulatorPolicy. */
  tokensPerTurn?: number;
}

const MAGIC = 'trace-rl/simulator-tabular@1';

/** The key of a node: `<prompt id>/<branch indices joined by .>` (the root is `<prompt id>/`). */
export const nodeKey = (promptId: string, path: readonly number[]) => `${promptId}/${path.join('.')}`;

export class SimulatorTabularPolicy implements TrainablePolicy, SimPlayer {
  readonly name = 'simulator-tabular';
  private readonly tokensPerTurn: number;
  /** θ of the nodes an update has touched; every other node is at log p_b. */
  private readonly logits = new Map<string, Float64Array>();

  constructor(
    private readonly sim: Simulator,
    options: SimulatorTabularOptions = {},
  ) {
    this.tokensPerTurn = options.tokensPerTurn ?? 8;
  }

  /** π(· | node): softmax(θ_node) for an updated node, the tree's p_b otherwise (= softmax(log p_b)). */
  branchProbabilities(promptId: string, path: readonly number[], node: SimNode): readonly number[] {
    const theta = this.logits.get(nodeKey(promptId, path));
    return theta ? softmax(theta) : node.branches.map((b) => b.p);
  }

  /** θ_node: the stored logits, or log p_b for a node no update has touched. */
  nodeLogits(promptId: string, path: readonly number[], node: SimNode): Float64Array {
    return this.logits.get(nodeKey(promptId, path)) ?? Float64Array.from(node.branches, (b) => Math.log(b.p));
  }

  /** The node after `turns` and π there. */
  private at(prompt: Prompt, turns: readonly Turn[]): { node: SimNode; path: readonly number[]; probs: readonly number[] } {
    const state = this.sim.restore(prompt, turns);
    const node = this.sim.node(state);
    return { node, path: state.path, probs: this.branchProbabilities(prompt.id, state.path, node) };
  }

  async act(ctx: PolicyContext): Promise<PolicyOutput> {
    const { node, probs } = this.at(ctx.prompt, ctx.turns);
    // SimulatorPolicy's turn on this node's learned probabilities: an untouched node acts exactly as it does.
    return simulatorTurn(node, probs, ctx, this.tokensPerTurn);
  }

  /** log π(action | prompt, turns), or undefined when the action is not a branch of that node. */
  logprob(prompt: Prompt, turns: readonly Turn[], action: Action): number | undefined {
    const { node, probs } = this.at(prompt, turns);
    const k = branchOf(node, action);
    return k < 0 ? undefined : Math.log(probs[k]!);
  }

  /**
   * Plain gradient ascent on PPO's clipped surrogate, `epochs` passes, each θ ← θ + η·∇L with
   *   L = mean_turns min(ρ·A, clip(ρ, 1 − ε, 1 + ε)·A),  ρ = π(a)/π_old(a),
   * π_old the behaviour log-probability stored on the turn (the current π when absent). For the
   * tabular softmax ∂L/∂θ_node,c = ρ·A·(1[c = a] − π_c) / D for an unclipped turn at that node (0 when
   * clipped), D by options.normalise (default samples: the number of samples). No optimiser state:
   * η = options.learningRate is the step.
   * Turns with an error, zero advantage, or an action that is no branch of its node are skipped.
   */
  update(samples: readonly PolicySample[], options: PolicyUpdateOptions): UpdateMetrics {
    let first: UpdateMetrics | undefined;
    for (let e = 0; e < options.epochs; e++) {
      const { gradient, metrics } = this.surrogate(samples, options.clip, options.normalise);
      for (const [key, g] of gradient) {
        const theta = this.logits.get(key) ?? g.theta;
        for (let c = 0; c < theta.length; c++) theta[c]! += options.learningRate * g.d[c]!;
        this.logits.set(key, theta);
      }
      first ??= metrics;
    }
    return first ?? { turns: 0, loss: 0, clipFraction: 0, approxKl: 0, entropy: 0 };
  }

  /** The surrogate L (as −metrics.loss) and its exact gradient per node key (see `update`). */
  surrogate(
    samples: readonly PolicySample[],
    clip: number,
    normalise: Normalise = 'samples',
  ): { gradient: Map<string, { theta: Float64Array; d: Float64Array }>; metrics: UpdateMetrics } {
    const gradient = new Map<string, { theta: Float64Array; d: Float64Array }>();
    const tally = new SurrogateTally();
    for (const { sample: s, index: i, advantage: A } of contributingTurns(samples)) {
      const turn = s.turns[i]!;
      const state = this.sim.restore(s.prompt, s.turns.slice(0, i));
      if (state.done) continue;
      const node = this.sim.node(state);
      const k = branchOf(node, turn.action);
      if (k < 0) continue;
      const theta = this.nodeLogits(s.prompt.id, state.path, node);
      const probs = this.branchProbabilities(s.prompt.id, state.path, node);
      const logp = Math.log(probs[k]!);
      const old = turn.logprob ?? logp;
      const term = clippedTerm(Math.exp(logp - old), A, clip);
      tally.add(old, logp, branchEntropy(probs), term);
      if (term.clipped) continue;
      const key = nodeKey(s.prompt.id, state.path);
      const g = gradient.get(key) ?? { theta, d: new Float64Array(theta.length) };
      for (let c = 0; c < probs.length; c++) g.d[c]! += term.coef * ((c === k ? 1 : 0) - probs[c]!);
      gradient.set(key, g);
    }
    const D = tally.divisor(normalise, samples);
    if (D > 0) for (const g of gradient.values()) for (let c = 0; c < g.d.length; c++) g.d[c]! /= D;
    const metrics = tally.metrics(D);
    return { gradient, metrics };
  }

  /** The updated nodes' logits (JSON: float64 numbers round-trip exactly); `load` acts and trains exactly as before. */
  save(): Uint8Array {
    const nodes = Object.fromEntries([...this.logits].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => [k, [...v]]));
    return new TextEncoder().encode(JSON.stringify({ format: MAGIC, nodes }));
  }

  load(snapshot: Uint8Array): void {
    let parsed: { format?: unknown; nodes?: unknown };
    try {
      parsed = JSON.parse(new TextDecoder().decode(snapshot)) as typeof parsed;
    } catch {
      throw new PolicySnapshotError('not a simulator-tabular snapshot (not JSON)');
    }
    if (parsed?.format !== MAGIC) throw new PolicySnapshotError(`snapshot format "${String(parsed?.format)}" is not ${MAGIC}`);
    const nodes = parsed.nodes;
    if (typeof nodes !== 'object' || nodes === null) throw new PolicySnapshotError('simulator-tabular snapshot without nodes');
    const next = new Map<string, Float64Array>();
    for (const [k, v] of Object.entries(nodes)) {
      if (!Array.isArray(v) || v.some((x) => typeof x !== 'number' || !Number.isFinite(x)))
        throw new PolicySnapshotError(`simulator-tabular snapshot: node ${k} has no finite logits`);
      next.set(k, Float64Array.from(v as number[]));
    }
    this.logits.clear();
    for (const [k, v] of next) this.logits.set(k, v);
  }
}

/** The index of the node's branch the action takes, or −1. */
function branchOf(node: SimNode, action: Action): number {
  return node.branches.findIndex((b) => b.label === action.input.trim() && b.kind === action.type);
}

/** softmax(θ)_c = exp(θ_c − max θ) / Σ exp(θ − max θ). */
export function softmax(theta: ArrayLike<number>): number[] {
  let max = -Infinity;
  for (let i = 0; i < theta.length; i++) max = Math.max(max, theta[i]!);
  const e = Array.from({ length: theta.length }, (_, i) => Math.exp(theta[i]! - max));
  const z = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / z);
}
