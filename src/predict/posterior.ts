/**
 * Per-prompt posterior over a shared predictor (the shared prediction as the prior of a per-prompt
 * estimate, as in the GPS line of work), because a prompt seen before has evidence of its own that
 * the shared model averages away. Prompt i keeps discounted counts of its own root
 * outcomes from earlier steps: each root sample with target y and leaf count c updates
 *
 *   Sᵢ ← λ·Sᵢ + y·c,   Nᵢ ← λ·Nᵢ + c          (λ = `discount`, applied per new evidence)
 *
 * and a root of prompt i is predicted as the Beta posterior mean with the shared prediction μᵢ as its
 * prior mean and k₀ (`strength`) as its prior pseudo-leaves:
 *
 *   Ṽ(root i) = (k₀·μᵢ + Sᵢ) / (k₀ + Nᵢ).
 *
 * An unseen prompt (Nᵢ = 0) gets μᵢ exactly, so the posterior generalises exactly as the shared model
 * does. Prefixes (`prefixes`):
 *  - 'none' (default): Ṽ(H) = μ(H), the shared prediction unchanged (a prefix's own turns already tell
 *    the shared model much of what the prompt's record would);
 *  - 'shift': the shared prediction moved in logit by the prompt's root residual,
 *      Ṽ(H) = σ(logit μ(H) + logit Ṽ(root i) − logit μᵢ),
 *    so a prompt the shared model under-rates is under-rated at its prefixes too, by the same log-odds.
 *    Measured no better than 'none' (simulator online prefix Brier 0.112 vs 0.108, world 0.149 vs 0.149;
 *    bench/predictor), hence not the default.
 * The shared predictor is trained on every sample as before; the counts come from root samples only.
 */
import type { History, SuccessPredictor, TargetSample } from './types.ts';
import { decodeSnapshot, encodeSnapshot, promptRows, SnapshotError } from './snapshot.ts';
import { PredictorConfigError } from './errors.ts';

export type PrefixRule = 'shift' | 'none';

export interface PosteriorOptions {
  /** k₀: weight of the shared prediction, in leaves. Default 4 (bench/predictor compared 2, 4 and 8 on held-out Brier). */
  strength?: number;
  /** λ ∈ (0, 1]: discount of a prompt's counts each time it gets new evidence. Default 1 (none). */
  discount?: number;
  /** What prefixes get: the shared prediction unchanged ('none', default) or shifted by the root residual ('shift'). */
  prefixes?: PrefixRule;
}

interface Evidence {
  /** Sᵢ: discounted successes (Σ y·c). */
  s: number;
  /** Nᵢ: discounted leaves (Σ c). */
  n: number;
}

const EPS = 1e-6;
const clip = (p: number) => Math.min(1 - EPS, Math.max(EPS, p));
const logit = (p: number) => Math.log(clip(p) / (1 - clip(p)));
const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));
const isRoot = (s: TargetSample) => s.kind === 'root' || (s.kind === undefined && s.history.turns.length === 0);

/** Ṽ(root) = (k₀·μ + S) / (k₀ + N). */
export function posteriorMean(mu: number, e: Evidence | undefined, strength: number): number {
  return e && e.n > 0 ? (strength * mu + e.s) / (strength + e.n) : mu;
}

/** Ṽ(prefix) = σ(logit μ(H) + logit Ṽ(root) − logit μ(root)); μ(H) when the root has no evidence. */
export function shiftedPrefix(muPrefix: number, muRoot: number, vRoot: number, hasEvidence: boolean): number {
  return hasEvidence ? sigmoid(logit(muPrefix) + logit(vRoot) - logit(muRoot)) : muPrefix;
}

export class PosteriorPredictor implements SuccessPredictor {
  readonly name = 'posterior';
  private opts: Required<PosteriorOptions>;
  private evidence = new Map<string, Evidence>();

  constructor(
    /** The shared predictor whose prediction is each prompt's prior (trained here on every sample). */
    readonly base: SuccessPredictor,
    options: PosteriorOptions = {},
  ) {
    this.opts = validate({ strength: options.strength ?? 4, discount: options.discount ?? 1, prefixes: options.prefixes ?? 'none' });
  }

  /** Sᵢ and Nᵢ of a prompt (undefined before its first root sample). */
  evidenceOf(promptId: string): Readonly<Evidence> | undefined {
    return this.evidence.get(promptId);
  }

  async prepare(histories: readonly History[]): Promise<void> {
    await this.base.prepare?.([...histories, ...this.rootsNeeded(histories)]);
  }

  predict(histories: readonly History[]): number[] {
    const roots = this.rootsNeeded(histories);
    const mu = this.base.predict([...histories, ...roots]);
    const muRoot = new Map(roots.map((h, i) => [h.prompt.id, mu[histories.length + i]!]));
    const { strength } = this.opts;
    return histories.map((h, i) => {
      const e = this.evidence.get(h.prompt.id);
      if (h.turns.length === 0) return posteriorMean(mu[i]!, e, strength);
      if (this.opts.prefixes === 'none' || !e || e.n <= 0) return mu[i]!;
      const m = muRoot.get(h.prompt.id)!;
      return shiftedPrefix(mu[i]!, m, posteriorMean(m, e, strength), true);
    });
  }

  train(samples: readonly TargetSample[]): Record<string, number> {
    const λ = this.opts.discount;
    let roots = 0;
    for (const s of samples) {
      if (!isRoot(s)) continue;
      roots++;
      const e = this.evidence.get(s.history.prompt.id) ?? { s: 0, n: 0 };
      e.s = λ * e.s + s.target * s.count;
      e.n = λ * e.n + s.count;
      this.evidence.set(s.history.prompt.id, e);
    }
    return { ...this.base.train(samples), posteriorRoots: roots, posteriorPrompts: this.evidence.size };
  }

  save(): Uint8Array {
    const base = this.base.save();
    const padded = new Uint8Array(Math.ceil(base.length / 4) * 4);
    padded.set(base);
    const ids = [...this.evidence.keys()].sort();
    return encodeSnapshot(
      {
        kind: this.name,
        options: this.opts,
        base: this.base.name,
        baseBytes: base.length,
        evidence: ids.map((id) => [id, this.evidence.get(id)!.s, this.evidence.get(id)!.n]),
      },
      { base: new Int32Array(padded.buffer) },
    );
  }

  load(snapshot: Uint8Array): void {
    const { header, blobs } = decodeSnapshot(snapshot);
    if (header.kind !== this.name) throw new SnapshotError(`snapshot is of a "${String(header.kind)}" predictor, not "${this.name}"`);
    if (header.base !== this.base.name)
      throw new SnapshotError(`snapshot's shared predictor is "${String(header.base)}", this posterior's is "${this.base.name}": build it over the same kind`);
    if (typeof header.options !== 'object' || header.options === null) throw new SnapshotError('posterior snapshot has no options: the snapshot is damaged');
    const opts = validate(header.options as Required<PosteriorOptions>);
    const evidence = evidenceOf(header.evidence);
    const blob = blobs.base;
    if (!blob) throw new SnapshotError('posterior snapshot has no "base" blob: the snapshot is truncated');
    const baseBytes = header.baseBytes;
    if (!Number.isInteger(baseBytes) || (baseBytes as number) < 0 || (baseBytes as number) > blob.byteLength)
      throw new SnapshotError(
        `posterior snapshot's baseBytes ${JSON.stringify(baseBytes)} is not a length within its ${blob.byteLength}-byte "base" blob: the snapshot is damaged`,
      );
    this.base.load(new Uint8Array(blob.buffer, blob.byteOffset, baseBytes as number));
    this.opts = opts;
    this.evidence = evidence;
  }

  dispose(): void {
    this.base.dispose?.();
  }

  /** Root histories of the prompts whose prefixes are asked for and whose root residual is needed. */
  private rootsNeeded(histories: readonly History[]): History[] {
    if (this.opts.prefixes === 'none') return [];
    const out = new Map<string, History>();
    for (const h of histories)
      if (h.turns.length > 0 && !out.has(h.prompt.id) && (this.evidence.get(h.prompt.id)?.n ?? 0) > 0) out.set(h.prompt.id, { prompt: h.prompt, turns: [] });
    return [...out.values()];
  }
}

/** A snapshot's [id, S, N] rows as evidence, refused by name unless 0 ≤ S ≤ N. */
function evidenceOf(rows: unknown): Map<string, Evidence> {
  const checked = promptRows(
    rows,
    'posterior',
    'evidence',
    '[prompt id, successes, outcomes] with 0 ≤ successes ≤ outcomes',
    (s, n) => s >= 0 && n >= 0 && s <= n * (1 + 1e-9),
  );
  return new Map(checked.map(([id, s, n]) => [id, { s, n }]));
}

function validate(o: Required<PosteriorOptions>): Required<PosteriorOptions> {
  const bad = (field: string, value: unknown, want: string) => new PredictorConfigError(`posterior predictor: ${field} = ${JSON.stringify(value)}; ${want}`);
  if (!(o.strength > 0 && Number.isFinite(o.strength)))
    throw bad('strength', o.strength, 'must be a finite number > 0 (pseudo-leaves of the shared prediction)');
  if (!(o.discount > 0 && o.discount <= 1)) throw bad('discount', o.discount, 'must be in (0, 1] (1 = no discount)');
  if (o.prefixes !== 'shift' && o.prefixes !== 'none') throw bad('prefixes', o.prefixes, "use 'shift' or 'none'");
  return { strength: o.strength, discount: o.discount, prefixes: o.prefixes };
}
