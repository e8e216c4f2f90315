/**
 * Predictor quality on one step's nodes, measured BEFORE the predictor trains on them (an honest
 * held-out measure), separately for roots, intermediate prefixes and leaves.
 *
 * A node with target y (success rate of its c leaves) stands for c binary outcomes: y·c successes and
 * (1 − y)·c failures, all with the node's prediction p. Every metric is over these weighted outcomes:
 *   Brier   = Σ w (p − o)² / Σ w
 *   logLoss = −Σ w [o ln p + (1 − o) ln(1 − p)] / Σ w,   p clipped to [1e-6, 1 − 1e-6]
 *   AUROC   = P(p_success > p_failure) + ½ P(tie), over weighted success/failure pairs
 * and the reliability table has 10 equal-width bins of p: mean p, observed success rate, weight.
 */
import type { Prompt, RolloutTree } from '../tree/types.ts';
import { targets, turnsTo } from '../tree/tree.ts';
import type { NodeKind, SuccessPredictor, TargetSample } from './types.ts';

/** One weighted binary outcome: prediction p, outcome o ∈ {0, 1}, weight w ≥ 0. */
export interface Outcome {
  p: number;
  o: number;
  w: number;
}

export function brier(xs: readonly Outcome[]): number {
  let s = 0;
  let w = 0;
  for (const x of xs) {
    s += x.w * (x.p - x.o) ** 2;
    w += x.w;
  }
  return w > 0 ? s / w : NaN;
}

export function logLoss(xs: readonly Outcome[], eps = 1e-6): number {
  let s = 0;
  let w = 0;
  for (const x of xs) {
    const p = Math.min(1 - eps, Math.max(eps, x.p));
    s -= x.w * (x.o * Math.log(p) + (1 - x.o) * Math.log(1 - p));
    w += x.w;
  }
  return w > 0 ? s / w : NaN;
}

/** Weighted AUROC with ties counted ½ (NaN when there are no successes or no failures). */
export function auroc(xs: readonly Outcome[]): number {
  const sorted = xs.filter((x) => x.w > 0).sort((a, b) => a.p - b.p);
  let negBelow = 0;
  let pos = 0;
  let neg = 0;
  let area = 0;
  for (let i = 0; i < sorted.length;) {
    let j = i;
    let gp = 0;
    let gn = 0;
    while (j < sorted.length && sorted[j].p === sorted[i].p) {
      if (sorted[j].o === 1) gp += sorted[j].w;
      else gn += sorted[j].w;
      j++;
    }
    area += gp * (negBelow + 0.5 * gn);
    negBelow += gn;
    pos += gp;
    neg += gn;
    i = j;
  }
  return pos > 0 && neg > 0 ? area / (pos * neg) : NaN;
}

export interface ReliabilityBin {
  /** Bin [lo, hi): the last bin includes 1. */
  lo: number;
  hi: number;
  meanPredicted: number;
  observedRate: number;
  /** Weight (leaf outcomes) in the bin. */
  count: number;
}

export function reliability(xs: readonly Outcome[], bins = 10): ReliabilityBin[] {
  const acc = Array.from({ length: bins }, () => ({ p: 0, o: 0, w: 0 }));
  for (const x of xs) {
    const b = Math.min(bins - 1, Math.max(0, Math.floor(x.p * bins)));
    acc[b].p += x.w * x.p;
    acc[b].o += x.w * x.o;
    acc[b].w += x.w;
  }
  return acc.map((a, b) => ({
    lo: b / bins,
    hi: (b + 1) / bins,
    meanPredicted: a.w > 0 ? a.p / a.w : NaN,
    observedRate: a.w > 0 ? a.o / a.w : NaN,
    count: a.w,
  }));
}

/** Expected calibration error of reliability bins: Σ_b w_b·|mean p_b − observed_b| / Σ_b w_b (0 = calibrated). */
export function ece(bins: readonly ReliabilityBin[]): number {
  let gap = 0;
  let w = 0;
  for (const b of bins) {
    if (b.count <= 0) continue;
    gap += b.count * Math.abs(b.meanPredicted - b.observedRate);
    w += b.count;
  }
  return w > 0 ? gap / w : NaN;
}

export interface QualityMetrics {
  nodes: number;
  /** Leaf outcomes behind the nodes (Σ c). */
  outcomes: number;
  brier: number;
  logLoss: number;
  auroc: number;
  /** Mean prediction and mean observed rate (calibration in the large). */
  meanPredicted: number;
  observedRate: number;
  reliability: ReliabilityBin[];
}

/** A node's (p, y, c) as weighted outcomes. */
export function outcomes(p: number, target: number, count: number): Outcome[] {
  return [
    { p, o: 1, w: target * count },
    { p, o: 0, w: (1 - target) * count },
  ];
}

export function qualityOf(predictions: readonly number[], samples: readonly TargetSample[]): QualityMetrics {
  const xs = samples.flatMap((s, i) => outcomes(predictions[i], s.target, s.count));
  const total = xs.reduce((s, x) => s + x.w, 0);
  return {
    nodes: samples.length,
    outcomes: total,
    brier: brier(xs),
    logLoss: logLoss(xs),
    auroc: auroc(xs),
    meanPredicted: total > 0 ? xs.reduce((s, x) => s + x.w * x.p, 0) / total : NaN,
    observedRate: total > 0 ? xs.reduce((s, x) => s + x.w * x.o, 0) / total : NaN,
    reliability: reliability(xs),
  };
}

/** The kind of a sample (from `kind`, else root when it has no turns, else prefix). */
export function kindOf(s: TargetSample): NodeKind {
  return s.kind ?? (s.history.turns.length === 0 ? 'root' : 'prefix');
}

export type StepQuality = Record<NodeKind, QualityMetrics>;

/** Quality of given predictions on a step's samples, split into roots, prefixes and leaves. */
export function splitQuality(predictions: readonly number[], samples: readonly TargetSample[]): StepQuality {
  const pick = (k: NodeKind) => {
    const idx = samples.map((s, i) => (kindOf(s) === k ? i : -1)).filter((i) => i >= 0);
    return qualityOf(
      idx.map((i) => predictions[i]),
      idx.map((i) => samples[i]),
    );
  };
  return { root: pick('root'), prefix: pick('prefix'), leaf: pick('leaf') };
}

/**
 * One predictor step as TRACE runs it: measure on the step's samples with the current model, then
 * train on them. Returns both (quality first: it never saw these nodes).
 */
export async function evaluateThenTrain(
  predictor: SuccessPredictor,
  samples: readonly TargetSample[],
): Promise<{ quality: StepQuality; training: Record<string, number> }> {
  const histories = samples.map((s) => s.history);
  await predictor.prepare?.(histories);
  const quality = splitQuality(predictor.predict(histories), samples);
  return { quality, training: predictor.train(samples) };
}

/** Prompts by id, from a Map, a record or a list. */
export type PromptLookup = ReadonlyMap<string, Prompt> | Readonly<Record<string, Prompt>> | readonly Prompt[];

export class UnknownPromptError extends Error {
  override name = 'UnknownPromptError';
}

/**
 * Regression samples of every node with a target (tree `targets()`), in tree-walk order per tree:
 * roots (kind 'root'), intermediate prefixes ('prefix') and leaves ('leaf', unless `leaves: false`).
 */
export function samplesFromTrees(trees: readonly RolloutTree[], prompts: PromptLookup, options: { leaves?: boolean } = {}): TargetSample[] {
  const byId = toMap(prompts);
  const out: TargetSample[] = [];
  for (const tree of trees) {
    const prompt = byId.get(tree.promptId);
    if (!prompt) throw new UnknownPromptError(`tree "${tree.promptId}" has no prompt in the lookup: pass the prompts the trees were grown from`);
    for (const [id, t] of targets(tree)) {
      const node = tree.nodes[id];
      const kind: NodeKind = node.parent === null ? 'root' : node.end !== undefined ? 'leaf' : 'prefix';
      if (kind === 'leaf' && options.leaves === false) continue;
      out.push({ history: { prompt, turns: turnsTo(tree, id) }, target: t.target, count: t.count, kind, nodeId: id });
    }
  }
  return out;
}

function toMap(prompts: PromptLookup): ReadonlyMap<string, Prompt> {
  if (prompts instanceof Map) return prompts;
  if (Array.isArray(prompts)) return new Map((prompts as readonly Prompt[]).map((p) => [p.id, p]));
  return new Map(Object.entries(prompts as Record<string, Prompt>));
}
