/**
 * A simulated environment whose success probability is known exactly at every prefix.
 *
 * Each prompt owns a stochastic decision tree, generated deterministically from (seed, prompt id).
 * A node offers 2–3 branches; a branch is a `search` (moves to a child node) or an `answer` (ends the
 * episode with reward 0 or 1) and has a probability p_b under the matching random policy. The exact
 * success probability after a prefix is
 *   V(node, L) = Σ_b p_b · (answer ? r_b : [L > 1] · V(child_b, L − 1)),
 * where L is the number of turns left before the turn limit. Rewards at leaves are drawn from a latent
 * logit ℓ that random-walks down the tree (ℓ_child = ℓ + σ·ε), so a prefix is far more informative than
 * the root alone (the regime where prefix expansion matters); the root logit is drawn from a mixture
 * that puts some prompts near 0, some near 1 and many in between.
 *
 * Observations carry a noisy "clue" of the value below the branch taken, so learned predictors have a
 * signal to calibrate; `trueSuccess` is exact for SimulatorPolicy's (src/policy) branch probabilities,
 * or, on a view made by `withPlayer`, for that player's (a learnable policy's current ones).
 */
import type { Action, Prompt, Turn } from '../../tree/types.ts';
import { checkAction } from '../search/search-env.ts';
import { parseTurn } from '../search/search-r1.ts';
import { createRng, type Rng } from '../../util/rng.ts';
import { EnvError } from '../errors.ts';
import type { Environment, KnowsTruth, StepOutcome } from '../types.ts';

export interface SimBranch {
  label: string;
  kind: 'search' | 'answer';
  /** Probability the matching random policy takes this branch. */
  p: number;
  /** For answers: the reward. */
  reward?: 0 | 1;
  /** For searches: the node reached. */
  child?: SimNode;
  /** Noisy clue of the value below this branch, shown in the observation (in [0, 1]); defaults to the exact value. */
  clue?: number;
}

export interface SimNode {
  branches: SimBranch[];
}

/**
 * What the simulator needs of a player to know its exact success probability: the chance π_b of each
 * branch at a node, named by its prompt and the branch indices that lead to it (src/policy's
 * learnable tabular policy is one). Probabilities must sum to 1 over the node's branches.
 */
export interface SimPlayer {
  branchProbabilities(promptId: string, path: readonly number[], node: SimNode): readonly number[];
}

export interface SimulatorOptions {
  seed: number;
  /** Deepest turn index at which a search branch may still appear; later turns only answer. Default 4. */
  maxDepth?: number;
  /** Turn limit (≥ maxDepth + 1 so the random policy never hits it). Default 6. */
  maxTurns?: number;
  /** σ: spread of the latent logit per turn (larger = more informative prefixes). Default 2.0. */
  stepSpread?: number;
  /** Standard deviation of the noise on clues. Default 0.15. */
  clueNoise?: number;
  /** Given decision trees by prompt id, used instead of generated ones (branch p's must sum to 1). */
  trees?: ReadonlyMap<string, SimNode>;
}

export interface SimState {
  readonly promptId: string;
  /** Branch indices taken by valid searches. */
  readonly path: readonly number[];
  /** Turns taken, invalid ones included. */
  readonly turn: number;
  readonly done: boolean;
  readonly reward?: number;
  readonly reason?: string;
}

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));
const clamp01 = (x: number) => Math.min(1, Math.max(0, x));

/** Standard normal draw (Box–Muller) from a seeded stream. */
export function gaussian(rng: Rng): number {
  const u = Math.max(rng.next(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.next());
}

/** Root logit ℓ₀: 20% hard (≈ −4), 20% easy (≈ +4), 60% mixed (N(0, 1.5²)). */
function rootLogit(rng: Rng): number {
  const u = rng.next();
  if (u < 0.2) return -4 + 0.8 * gaussian(rng);
  if (u < 0.4) return 4 + 0.8 * gaussian(rng);
  return 1.5 * gaussian(rng);
}

/** Value of a subtree with L turns left (formula in the module comment). */
export function nodeValue(node: SimNode, turnsLeft: number): number {
  if (turnsLeft <= 0) return 0;
  let v = 0;
  for (const b of node.branches) {
    if (b.kind === 'answer') v += b.p * (b.reward ?? 0);
    else if (turnsLeft > 1 && b.child) v += b.p * nodeValue(b.child, turnsLeft - 1);
  }
  return v;
}

/**
 * Value of a subtree under a player's branch probabilities π_b (L turns left, `path` the node's branch indices):
 *   V_π(node, L) = Σ_b π_b · (answer ? r_b : [L > 1] · V_π(child_b, L − 1)).
 */
export function playerValue(node: SimNode, turnsLeft: number, promptId: string, path: readonly number[], player: SimPlayer): number {
  if (turnsLeft <= 0) return 0;
  const pi = player.branchProbabilities(promptId, path, node);
  let v = 0;
  node.branches.forEach((b, i) => {
    if (b.kind === 'answer') v += pi[i]! * (b.reward ?? 0);
    else if (turnsLeft > 1 && b.child) v += pi[i]! * playerValue(b.child, turnsLeft - 1, promptId, [...path, i], player);
  });
  return v;
}

export class Simulator implements Environment<SimState>, KnowsTruth {
  readonly name = 'simulator';
  readonly maxTurns: number;
  private readonly opts: Required<Omit<SimulatorOptions, 'trees'>>;
  private trees = new Map<string, SimNode>();
  /** Whose success `trueSuccess` is: absent = the matching random policy (the tree's p_b). */
  private player?: SimPlayer;

  constructor(options: SimulatorOptions) {
    const maxDepth = options.maxDepth ?? 4;
    const maxTurns = options.maxTurns ?? 6;
    if (maxTurns < 1) throw new EnvError(`simulator: maxTurns must be ≥ 1, got ${maxTurns}`);
    this.opts = { maxDepth, maxTurns, stepSpread: options.stepSpread ?? 2.0, clueNoise: options.clueNoise ?? 0.15, seed: options.seed };
    this.maxTurns = maxTurns;
    for (const [id, tree] of options.trees ?? []) {
      checkTree(tree, id);
      this.trees.set(id, tree);
    }
  }

  /** Search-R1 text → action (the random policy writes `<search>label</search>` / `<answer>label</answer>`). */
  parse(text: string): { thought: string; action: Action } {
    const p = parseTurn(text);
    return { thought: p.thought, action: p.action };
  }

  /** `count` prompts with ids `sim-<seed>-<i>`; each question shows the root's noisy clue. */
  prompts(count: number, prefix = `sim-${this.opts.seed}`): Prompt[] {
    return Array.from({ length: count }, (_, i) => {
      const id = `${prefix}-${i}`;
      return { id, question: `Simulated task ${id}.`, answers: ['(simulated)'], meta: { simulator: true } };
    });
  }

  /** The prompt's decision tree (generated once, deterministically, from seed and prompt id). */
  tree(promptId: string): SimNode {
    let t = this.trees.get(promptId);
    if (!t) {
      const rng = createRng(this.opts.seed).fork(`sim-tree:${promptId}`);
      t = this.grow(rng, rootLogit(rng), 0);
      this.trees.set(promptId, t);
    }
    return t;
  }

  private grow(rng: Rng, logit: number, depth: number): SimNode {
    const k = 2 + rng.int(2);
    const weights = Array.from({ length: k }, () => -Math.log(Math.max(rng.next(), 1e-12)));
    const total = weights.reduce((a, b) => a + b, 0);
    // Answering becomes likelier with depth; at maxDepth every branch answers.
    const pAnswer = depth >= this.opts.maxDepth ? 1 : Math.min(0.85, 0.1 + 0.2 * depth);
    const branches: SimBranch[] = weights.map((w, i) => {
      const l = logit + this.opts.stepSpread * gaussian(rng);
      const p = w / total;
      if (rng.next() < pAnswer) {
        const reward: 0 | 1 = rng.next() < sigmoid(l) ? 1 : 0;
        return { label: `a${depth}${i}`, kind: 'answer', p, reward, clue: 0 };
      }
      return { label: `s${depth}${i}`, kind: 'search', p, child: this.grow(rng, l, depth + 1), clue: 0 };
    });
    for (const b of branches) {
      const v = b.kind === 'answer' ? (b.reward ?? 0) : nodeValue(b.child!, Infinity);
      b.clue = clamp01(v + this.opts.clueNoise * gaussian(rng));
    }
    return { branches };
  }

  /** The node a state sits at. */
  node(state: SimState): SimNode {
    let n = this.tree(state.promptId);
    for (const i of state.path) n = n.branches[i]!.child!;
    return n;
  }

  render(prompt: Prompt): string {
    const root = this.tree(prompt.id);
    return `${prompt.question} Options: ${describe(root)}.`;
  }

  reset(prompt: Prompt): SimState {
    return Object.freeze({ promptId: prompt.id, path: Object.freeze([]), turn: 0, done: false });
  }

  async step(state: SimState, action: Action): Promise<StepOutcome<SimState>> {
    return this.transition(state, action);
  }

  restore(prompt: Prompt, turns: readonly Turn[]): SimState {
    let s = this.reset(prompt);
    for (const [i, t] of turns.entries()) {
      if (s.done) throw new EnvError(`simulator: turn ${i + 1} of ${prompt.id} follows the end of the episode`);
      s = this.transition(s, t.action).state;
    }
    return s;
  }

  /** Exact success probability after `turns` under the matching random policy, or this view's player. */
  trueSuccess(prompt: Prompt, turns: readonly Turn[]): number {
    const s = this.restore(prompt, turns);
    if (s.done) return s.reward ?? 0;
    if (this.player) return playerValue(this.node(s), this.opts.maxTurns - s.turn, s.promptId, s.path, this.player);
    return nodeValue(this.node(s), this.opts.maxTurns - s.turn);
  }

  /**
   * The same simulator (same trees, shared, same rules) whose `trueSuccess` is exact for `player`:
   * what allocation's true p and the exact held-out J read when the policy is learnable. The
   * environment only knows the player by its own type (SimPlayer), never a policy.
   */
  withPlayer(player: SimPlayer): Simulator {
    const view = new Simulator({ ...this.opts });
    view.trees = this.trees;
    view.player = player;
    return view;
  }

  private transition(state: SimState, action: Action): StepOutcome<SimState> {
    if (state.done) throw new EnvError(`simulator: step called on a finished episode (${state.promptId})`);
    const node = this.node(state);
    const turn = state.turn + 1;
    const index = node.branches.findIndex((b) => b.label === action.input.trim() && b.kind === action.type);
    const limit = turn >= this.opts.maxTurns;
    if (index < 0) {
      const rule = checkAction(action)?.rule ?? 'unknown_option';
      const observation = `Invalid action (${rule}): "${action.type}: ${action.input}" is not an option here. Options: ${describe(node)}.`;
      const done = limit;
      const reason = limit ? 'turn_limit' : rule;
      return {
        state: freeze({ ...state, turn, done, ...(limit ? { reward: 0, reason } : {}) }),
        observation,
        done,
        invalid: true,
        reason,
        ...(limit ? { reward: 0, score: 0 } : {}),
      };
    }
    const b = node.branches[index]!;
    if (b.kind === 'answer') {
      const reward = b.reward ?? 0;
      const observation = `<information>Answer ${b.label} submitted.</information>`;
      return { state: freeze({ ...state, turn, done: true, reward, reason: 'answer' }), observation, done: true, reward, score: reward, reason: 'answer' };
    }
    const path = Object.freeze([...state.path, index]);
    const child = b.child!;
    const clue = b.clue ?? nodeValue(child, Infinity);
    const observation = `<information>Result of ${b.label}: clue ${clue.toFixed(2)}. Options: ${describe(child)}.</information>`;
    if (limit) {
      return {
        state: freeze({ ...state, path, turn, done: true, reward: 0, reason: 'turn_limit' }),
        observation,
        done: true,
        reward: 0,
        score: 0,
        reason: 'turn_limit',
      };
    }
    return { state: freeze({ ...state, path, turn, done: false }), observation, done: false };
  }
}

/** A given tree must have branch probabilities summing to 1, answers with rewards and searches with children. */
function checkTree(node: SimNode, where: string): void {
  const total = node.branches.reduce((a, b) => a + b.p, 0);
  if (node.branches.length === 0 || Math.abs(total - 1) > 1e-9) throw new EnvError(`simulator tree ${where}: branch probabilities sum to ${total}, expected 1`);
  for (const b of node.branches) {
    if (b.p < 0) throw new EnvError(`simulator tree ${where}/${b.label}: negative probability`);
    if (b.kind === 'answer' && b.reward !== 0 && b.reward !== 1) throw new EnvError(`simulator tree ${where}/${b.label}: an answer needs reward 0 or 1`);
    if (b.kind === 'search') {
      if (!b.child) throw new EnvError(`simulator tree ${where}/${b.label}: a search needs a child node`);
      checkTree(b.child, `${where}/${b.label}`);
    }
  }
}

function describe(node: SimNode): string {
  return node.branches.map((b) => `${b.kind} ${b.label}`).join(', ');
}

function freeze(s: SimState): SimState {
  return Object.freeze(s);
}
