import type { Action, Prompt, Turn } from '../../tree/types.ts';
import type { PolicyContext, PolicyOutput, PolicySample, TrainablePolicy, UpdateMetrics } from '../types.ts';
import { candidateActions, type CandidateSource } from './candidates.ts';
import type { ActionFeatures } from '../../env/types.ts';
import { featureContext, featureIndices } from './features.ts';
import { LinearScorer } from './linear-scorer.ts';
import { clippedTerm, contributingTurns, SurrogateTally, type Normalise } from '../surrogate.ts';

export interface EmbeddedPolicyOptions {
  /** Where the choice set at each turn comes from (for the world: `worldCandidateSource(env)`). */
  candidates: CandidateSource;
  /** The environment's own features of a candidate (its kind's `features`), beside the generic ones. */
  features?: ActionFeatures;
  /** Hashed feature space size. Default 2^16. */
  dim?: number;
}

export interface UpdateOptions {
  /** Adam step size. Default 0.02. */
  learningRate?: number;
  /** PPO clip ε: the ratio π/π_old is clipped to [1 − ε, 1 + ε]. Default 0.2. */
  clip?: number;
  /** Passes over the samples (each pass is one Adam step). Default 1. */
  epochs?: number;
  /** Weight of the entropy bonus. Default 0. */
  entropyCoef?: number;
  /** What the surrogate's sum is divided by (see {@link Normalise}). Default turns. */
  normalise?: Normalise;
}

/** One recorded decision: the candidates' feature indices and which one was taken. */
export interface Choice {
  features: Int32Array[];
  chosen: number;
}

interface Distribution {
  actions: Action[];
  features: Int32Array[];
  probs: Float64Array;
}

/** Raised when a snapshot cannot be loaded. */
export class PolicySnapshotError extends Error {
  override name = 'PolicySnapshotError';
}

const MAGIC = 'trace-rl/embedded-policy@1';

/**
 * The embedded trainable policy: at each turn it lists candidate actions (entities to search, spans
 * to answer) read from the question and the observations, scores them with a linear model over hashed
 * features, and samples from π(c) = softmax(logit(c)) at temperature 1 (argmax when greedy). It writes
 * Search-R1 turns (`<think>…</think>\n<search>X</search>`), so its trees look like an LLM's; the
 * action's exact log π(a) and the entropy H = −Σ π log π are returned with each turn.
 * Starting from zero weights it picks uniformly, which solves some easy questions and few hard ones.
 */
export class EmbeddedPolicy implements TrainablePolicy {
  readonly name = 'embedded-linear';
  readonly dim: number;
  private readonly scorer: LinearScorer;
  private readonly source: CandidateSource;
  private readonly own?: ActionFeatures;

  constructor(options: EmbeddedPolicyOptions) {
    this.dim = options.dim ?? 1 << 16;
    this.scorer = new LinearScorer(this.dim);
    this.source = options.candidates;
    if (options.features) this.own = options.features;
  }

  /** π over the candidate actions after `turns`. */
  distribution(prompt: Prompt, turns: readonly Turn[]): Distribution {
    const actions = candidateActions(this.source(prompt, turns));
    const ctx = featureContext(prompt, turns);
    const features = actions.map((a) => featureIndices(ctx, a, this.dim, this.own?.(prompt, turns, a)));
    const logits = features.map((f) => this.scorer.logit(f));
    const max = Math.max(...logits);
    const probs = new Float64Array(logits.length);
    let z = 0;
    for (let i = 0; i < logits.length; i++) z += probs[i] = Math.exp(logits[i]! - max);
    for (let i = 0; i < logits.length; i++) probs[i]! /= z;
    return { actions, features, probs };
  }

  async act(ctx: PolicyContext): Promise<PolicyOutput> {
    if (ctx.signal?.aborted) throw ctx.signal.reason;
    const d = this.distribution(ctx.prompt, ctx.turns);
    if (d.actions.length === 0) return write({ type: 'answer', input: 'unknown' }, 0, 0, ctx.maxTokens);
    let k = 0;
    if (ctx.greedy) {
      for (let i = 1; i < d.probs.length; i++) if (d.probs[i]! > d.probs[k]!) k = i;
    } else {
      let u = ctx.rng.next();
      k = d.probs.length - 1;
      for (let i = 0; i < d.probs.length; i++) {
        u -= d.probs[i]!;
        if (u < 0) {
          k = i;
          break;
        }
      }
    }
    return write(d.actions[k]!, Math.log(d.probs[k]!), entropy(d.probs), ctx.maxTokens);
  }

  /** log π(action | prompt, turns), or undefined when the action is not among the candidates. */
  logprob(prompt: Prompt, turns: readonly Turn[], action: Action): number | undefined {
    const d = this.distribution(prompt, turns);
    const k = d.actions.findIndex((a) => a.type === action.type && a.input === action.input);
    return k < 0 ? undefined : Math.log(d.probs[k]!);
  }

  /**
   * Policy-gradient update with PPO's clipped surrogate, maximising
   *   L = (1/D) Σ_turns [min(ρ·A, clip(ρ, 1 − ε, 1 + ε)·A) + β·H],  ρ = π(a)/π_old(a),
   * D by `options.normalise` (the contributing turns by default),
   * where π_old is the behaviour log-probability stored on the turn (Turn.logprob; the current policy
   * when absent, i.e. plain REINFORCE). Only the policy's choices carry gradient: observations are
   * inputs, never targets. ∇ log π(a) = φ(a) − Σ_c π(c) φ(c) for the linear softmax. Turns with an
   * error, zero advantage, or an action outside the candidate set are skipped.
   */
  update(samples: readonly PolicySample[], options: UpdateOptions = {}): UpdateMetrics {
    const lr = options.learningRate ?? 0.02;
    let first: UpdateMetrics | undefined;
    for (let e = 0; e < (options.epochs ?? 1); e++) {
      const { gradient, metrics } = this.surrogate(samples, options);
      if (metrics.turns > 0) this.scorer.adamStep(gradient, lr);
      first ??= metrics;
    }
    return first!;
  }

  /**
   * The objective L (as `-metrics.loss`) and its exact gradient ∂L/∂w at the current weights.
   * Per turn, ∂/∂logit_c of min(ρA, clip(ρ)A) is ρ·A·(1[c = a] − π_c) when unclipped, 0 when clipped;
   * of the entropy bonus β·H it is −β·π_c(log π_c + H). Both are divided by D (`normalise`); the
   * loss is −L with that same D, the other metrics are means over contributing turns.
   */
  surrogate(
    samples: readonly PolicySample[],
    options: Pick<UpdateOptions, 'clip' | 'entropyCoef' | 'normalise'> = {},
  ): { gradient: Float64Array; metrics: UpdateMetrics } {
    const eps = options.clip ?? 0.2;
    const beta = options.entropyCoef ?? 0;
    const g = new Float64Array(this.dim);
    const tally = new SurrogateTally();
    for (const { sample: s, index: i, advantage: A } of contributingTurns(samples)) {
      const turn = s.turns[i]!;
      const d = this.distribution(s.prompt, s.turns.slice(0, i));
      const k = d.actions.findIndex((a) => a.type === turn.action.type && a.input === turn.action.input);
      if (k < 0) continue;
      const logp = Math.log(d.probs[k]!);
      const old = turn.logprob ?? logp;
      const H = entropy(d.probs);
      const term = clippedTerm(Math.exp(logp - old), A, eps);
      tally.add(old, logp, H, term, beta * H);
      for (let c = 0; c < d.actions.length; c++) {
        const pc = d.probs[c]!;
        let dl = term.coef * ((c === k ? 1 : 0) - pc);
        if (beta > 0 && pc > 0) dl -= beta * pc * (Math.log(pc) + H);
        if (dl === 0) continue;
        const f = d.features[c]!;
        for (let j = 0; j < f.length; j++) g[f[j]!]! += dl;
      }
    }
    const D = tally.divisor(options.normalise ?? 'turns', samples);
    if (D > 0) for (let i = 0; i < g.length; i++) g[i]! /= D;
    const metrics = tally.metrics(D);
    return { gradient: g, metrics };
  }

  /**
   * Supervised maximum likelihood on recorded choices (behaviour cloning): `steps` full-batch Adam
   * ascent steps on mean log π(chosen). Each choice set's features are extracted once by `choice`,
   * so a step costs only the sparse dot products. Returns the mean negative log-likelihood per choice
   * at the last step's start.
   */
  fitChoices(choices: readonly Choice[], steps: number, learningRate: number): number {
    // The choice sets are laid end to end once (all feature indices in one array, each candidate's end
    // offset in another): every step then walks two flat arrays instead of thousands of small ones.
    // The sums and their order are those of a walk over `choices` itself, so the fit is bit-identical.
    let entries = 0;
    let candidates = 0;
    let widest = 0;
    for (const { features } of choices) {
      candidates += features.length;
      widest = Math.max(widest, features.length);
      for (const f of features) entries += f.length;
    }
    const index = new Int32Array(entries);
    const ends = new Int32Array(candidates);
    let at = 0;
    let k = 0;
    for (const { features } of choices) {
      for (const f of features) {
        index.set(f, at);
        ends[k++] = at += f.length;
      }
    }
    const w = this.scorer.w;
    const logits = new Float64Array(widest);
    const exps = new Float64Array(widest);
    let nll = NaN;
    const g = new Float64Array(this.dim);
    for (let s = 0; s < steps && choices.length > 0; s++) {
      g.fill(0);
      nll = 0;
      let cand = 0;
      let p = 0;
      for (const { features, chosen } of choices) {
        const n = features.length;
        let max = -Infinity;
        for (let c = 0, q = p; c < n; c++) {
          let sum = 0;
          for (const end = ends[cand + c]!; q < end; q++) sum += w[index[q]!]!;
          logits[c] = sum;
          max = Math.max(max, sum);
        }
        let z = 0;
        for (let c = 0; c < n; c++) z += exps[c] = Math.exp(logits[c]! - max);
        nll -= logits[chosen]! - max - Math.log(z);
        for (let c = 0; c < n; c++) {
          const dl = (c === chosen ? 1 : 0) - exps[c]! / z;
          for (const end = ends[cand + c]!; p < end; p++) g[index[p]!]! += dl;
        }
        cand += n;
      }
      for (let i = 0; i < g.length; i++) g[i]! /= choices.length;
      nll /= choices.length;
      this.scorer.adamStep(g, learningRate);
    }
    return nll;
  }

  /** The choice set at a recorded turn and the index of the action taken, or undefined when it is not a candidate. */
  choice(prompt: Prompt, turns: readonly Turn[], action: Action): Choice | undefined {
    const d = this.distribution(prompt, turns);
    const chosen = d.actions.findIndex((a) => a.type === action.type && a.input === action.input);
    return chosen < 0 ? undefined : { features: d.features, chosen };
  }

  /** Direct access to one weight (tests: finite differences). */
  weight(i: number, value?: number): number {
    if (value !== undefined) this.scorer.w[i] = value;
    return this.scorer.w[i]!;
  }

  /** Keeps the weights, zeroes Adam's moments (after a warm start, RL begins with a fresh optimiser). */
  resetOptimiser(): void {
    this.scorer.resetOptimiser();
  }

  /** Weights and optimiser state; `load` of it acts and trains exactly as before. */
  save(): Uint8Array {
    const header = new TextEncoder().encode(JSON.stringify({ format: MAGIC, dim: this.dim }) + '\n');
    const body = this.scorer.toBytes();
    const out = new Uint8Array(header.length + body.length);
    out.set(header);
    out.set(body, header.length);
    return out;
  }

  load(snapshot: Uint8Array): void {
    const nl = snapshot.indexOf(10);
    let header: { format?: string; dim?: number };
    try {
      header = JSON.parse(new TextDecoder().decode(snapshot.subarray(0, nl))) as typeof header;
    } catch {
      throw new PolicySnapshotError('not an embedded-policy snapshot (no JSON header line)');
    }
    if (header.format !== MAGIC) throw new PolicySnapshotError(`snapshot format "${header.format}" is not ${MAGIC}`);
    if (header.dim !== this.dim) throw new PolicySnapshotError(`snapshot has dim ${header.dim}; construct the policy with dim: ${header.dim}`);
    this.scorer.fromBytes(snapshot.subarray(nl + 1));
  }
}

/** H = −Σ π log π (nats). */
function entropy(p: Float64Array): number {
  let h = 0;
  for (const x of p) if (x > 0) h -= x * Math.log(x);
  return h;
}

/** The turn's text; its token count (≈ 4 characters per token) is capped by the call's budget. */
function write(action: Action, logprob: number, H: number, maxTokens: number): PolicyOutput {
  const thought = action.type === 'search' ? `I need to look up ${action.input}.` : `The answer is ${action.input}.`;
  const text = `<think>${thought}</think>\n<${action.type}>${action.input}</${action.type}>`;
  return { text, action, thought, generatedTokens: Math.min(maxTokens, Math.ceil(text.length / 4)), logprob, entropy: H };
}
