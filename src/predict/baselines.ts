/**
 * Baseline predictors behind the same SuccessPredictor interface.
 *
 * - {@link BetaBernoulliPredictor} (MoPPS-style, roots only): prompt i keeps a Beta(α_i, β_i)
 *   posterior over its success rate; a step's root sample with target y and leaf count c adds
 *   α_i += y·c, β_i += (1 − y)·c after a discount toward the prior, α_i ← λα_i + (1 − λ)α₀ (same for β),
 *   which lets old evidence fade as the policy changes. Ṽ = α_i / (α_i + β_i). A prefix gets its
 *   prompt's posterior mean; an unseen prompt gets the prior mean α₀ / (α₀ + β₀).
 * - {@link GlobalRatePredictor}: the running leaf success rate over all roots seen (every history gets
 *   the same number); `prior` before any data.
 */
import type { History, SuccessPredictor, TargetSample } from './types.ts';
import { decodeSnapshot, encodeSnapshot, promptRows, SnapshotError } from './snapshot.ts';

const isRoot = (s: TargetSample) => s.kind === 'root' || (s.kind === undefined && s.history.turns.length === 0);

export interface BetaBernoulliOptions {
  /** α₀, β₀: prior pseudo-counts. Default 1, 1. */
  alpha0?: number;
  beta0?: number;
  /** λ: discount applied to a prompt's posterior each time it gets new evidence. Default 1 (none). */
  discount?: number;
}

export class BetaBernoulliPredictor implements SuccessPredictor {
  readonly name = 'beta-bernoulli';
  private posterior = new Map<string, { a: number; b: number }>();
  private opts: Required<BetaBernoulliOptions>;

  constructor(options: BetaBernoulliOptions = {}) {
    this.opts = { alpha0: options.alpha0 ?? 1, beta0: options.beta0 ?? 1, discount: options.discount ?? 1 };
    if (!(this.opts.alpha0 > 0 && this.opts.beta0 > 0))
      throw new RangeError(`beta-bernoulli: alpha0 and beta0 must be > 0, got ${this.opts.alpha0}, ${this.opts.beta0}`);
    if (!(this.opts.discount > 0 && this.opts.discount <= 1)) throw new RangeError(`beta-bernoulli: discount must be in (0, 1], got ${this.opts.discount}`);
  }

  predict(histories: readonly History[]): number[] {
    const { alpha0, beta0 } = this.opts;
    return histories.map((h) => {
      const p = this.posterior.get(h.prompt.id);
      return p ? p.a / (p.a + p.b) : alpha0 / (alpha0 + beta0);
    });
  }

  train(samples: readonly TargetSample[]): Record<string, number> {
    const { alpha0, beta0, discount: λ } = this.opts;
    let roots = 0;
    for (const s of samples) {
      if (!isRoot(s)) continue;
      roots++;
      const p = this.posterior.get(s.history.prompt.id) ?? { a: alpha0, b: beta0 };
      p.a = λ * p.a + (1 - λ) * alpha0 + s.target * s.count;
      p.b = λ * p.b + (1 - λ) * beta0 + (1 - s.target) * s.count;
      this.posterior.set(s.history.prompt.id, p);
    }
    return { roots, prompts: this.posterior.size };
  }

  save(): Uint8Array {
    const ids = [...this.posterior.keys()].sort();
    return encodeSnapshot({ kind: this.name, options: this.opts, posterior: ids.map((id) => [id, this.posterior.get(id)!.a, this.posterior.get(id)!.b]) });
  }

  load(snapshot: Uint8Array): void {
    const { header } = decodeSnapshot(snapshot);
    if (header.kind !== this.name) throw new SnapshotError(`snapshot is of a "${String(header.kind)}" predictor, not "${this.name}"`);
    const o = header.options as Required<BetaBernoulliOptions> | undefined;
    const positive = (x: unknown) => typeof x === 'number' && Number.isFinite(x) && x > 0;
    if (!o || !positive(o.alpha0) || !positive(o.beta0) || !(positive(o.discount) && o.discount <= 1))
      throw new SnapshotError(
        `beta-bernoulli snapshot's options ${JSON.stringify(o)?.slice(0, 80)} are not alpha0, beta0 > 0 and discount in (0, 1]: the snapshot is damaged`,
      );
    const rows = promptRows(header.posterior, 'beta-bernoulli', 'posterior', '[prompt id, α > 0, β > 0]', (a, b) => a > 0 && b > 0);
    this.opts = { alpha0: o.alpha0, beta0: o.beta0, discount: o.discount };
    this.posterior = new Map(rows.map(([id, a, b]) => [id, { a, b }]));
  }
}

export class GlobalRatePredictor implements SuccessPredictor {
  readonly name = 'global-rate';
  private successes = 0;
  private trials = 0;

  constructor(private prior = 0.5) {}

  predict(histories: readonly History[]): number[] {
    const v = this.trials > 0 ? this.successes / this.trials : this.prior;
    return histories.map(() => v);
  }

  train(samples: readonly TargetSample[]): Record<string, number> {
    for (const s of samples) {
      if (!isRoot(s)) continue;
      this.successes += s.target * s.count;
      this.trials += s.count;
    }
    return { rate: this.trials > 0 ? this.successes / this.trials : this.prior, trials: this.trials };
  }

  save(): Uint8Array {
    return encodeSnapshot({ kind: this.name, prior: this.prior, successes: this.successes, trials: this.trials });
  }

  load(snapshot: Uint8Array): void {
    const { header } = decodeSnapshot(snapshot);
    if (header.kind !== this.name) throw new SnapshotError(`snapshot is of a "${String(header.kind)}" predictor, not "${this.name}"`);
    this.prior = header.prior as number;
    this.successes = header.successes as number;
    this.trials = header.trials as number;
  }
}
