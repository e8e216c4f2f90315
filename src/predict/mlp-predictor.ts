/**
 * The shared success predictor Ṽ(H) (TRACE-SPEC §2–3): one small network for every prompt and depth,
 * reading prefix features (features.ts) and trained online on bottom-up tree targets.
 *
 * Training schedule, per `train(samples)` call (one RL step):
 *  1. encode the step's samples and append them to a replay window of the last `replaySteps` steps;
 *  2. run clamp(⌈epochs · N / batchSize⌉, minUpdatesPerStep, maxUpdatesPerStep) Adam updates on minibatches drawn by
 *     shuffled passes over the N window samples (seeded: stream `train:<step>` of `seed`);
 *  3. weights: a sample weighs its leaf count c (`weighting: 'count'`): c·(Ṽ − target)² equals, up to
 *     a constant, the squared error against each of its c leaf outcomes, so well-estimated targets
 *     count more than single noisy leaves; `'uniform'` weighs nodes equally.
 * Cold start: until the first `train`, `predict` returns `prior` for every history (uniform first
 * allocation); the network's output layer also starts at bias logit(prior).
 */
import type { FeatureExtractor, History, SuccessPredictor, TargetSample } from './types.ts';
import { createFeatures } from './features.ts';
import { concatRows, densify, type FeatureMatrix } from './feature-matrix.ts';
import { forward, fromParams, initParams, makeAdamStep, toParams, zerosLike, type MlpShape, type Params } from './mlp-network.ts';
import { initJax } from '../util/jax.ts';
import { PredictorConfigError } from './errors.ts';
import { decodeSnapshot, encodeSnapshot, SnapshotError } from './snapshot.ts';
import { createRng, shuffled } from '../util/rng.ts';
import { jit, numpy as np, tree } from '../util/jax.ts';

export interface MlpPredictorOptions {
  /** Feature extractor. Default: hashed features (features.ts). */
  features?: FeatureExtractor;
  /** Hidden layer widths. Default [64, 32]. */
  hidden?: number[];
  /** Adam learning rate α. Default 0.003. */
  lr?: number;
  /** λ: L2 penalty on weight matrices. Default 1e-3 (held-out Brier best among 1e-6, 1e-4, 1e-3, 3e-3 in bench/predictor). */
  l2?: number;
  /** Minibatch size. Default 256. */
  batchSize?: number;
  /** Passes over the replay window per step (before the cap). Default 1. */
  epochs?: number;
  /** Cap on Adam updates per step (bounds training time). Default 300. */
  maxUpdatesPerStep?: number;
  /** Floor on Adam updates per step (small steps still learn). Default 20. */
  minUpdatesPerStep?: number;
  /** Steps kept in the replay window (this step included). Default 4. */
  replaySteps?: number;
  /** Sample weights: leaf count (default) or one per node. */
  weighting?: 'count' | 'uniform';
  /** Prediction before any training. Default 0.5. */
  prior?: number;
  /** Seed of weight initialisation and minibatch order. Default 0. */
  seed?: number;
  /**
   * Store the replay window in snapshots (default true): a resumed run then also trains exactly as
   * before. Without it snapshots are much smaller (the window is ~8 bytes per non-zero feature: tens
   * of MB for 40,000 nodes) and predictions still match, but the next steps train on a shorter window.
   */
  snapshotReplay?: boolean;
}

type Config = Required<Omit<MlpPredictorOptions, 'features'>>;

interface ReplayStep {
  x: FeatureMatrix;
  y: Float32Array;
  w: Float32Array;
}

/** Row counts jit compiles for prediction; a request is cut into chunks of these sizes (last one padded). */
const CHUNKS = [64, 512, 2048];

/** Builds the predictor (starts jax-js's wasm backend first; `predict` itself stays synchronous). */
export async function createMlpPredictor(options: MlpPredictorOptions = {}): Promise<MlpPredictor> {
  await initJax();
  return new MlpPredictor(options);
}

export class MlpPredictor implements SuccessPredictor {
  readonly name = 'mlp';
  readonly features: FeatureExtractor;
  private config: Config;
  private params!: Params;
  private m!: Params;
  private v!: Params;
  private adamT = 0;
  private steps = 0;
  private replay: ReplayStep[] = [];
  private successes = 0;
  private trials = 0;
  private adamStep!: ReturnType<typeof makeAdamStep>;
  private readonly predictFn = jit((p: Params, x: np.Array) => forward(p, x));

  /** Use {@link createMlpPredictor}, which initialises jax-js first. */
  constructor(options: MlpPredictorOptions = {}) {
    this.features = options.features ?? createFeatures();
    this.config = validate({
      hidden: options.hidden ?? [64, 32],
      lr: options.lr ?? 0.003,
      l2: options.l2 ?? 1e-3,
      batchSize: options.batchSize ?? 256,
      epochs: options.epochs ?? 1,
      maxUpdatesPerStep: options.maxUpdatesPerStep ?? 300,
      minUpdatesPerStep: options.minUpdatesPerStep ?? 20,
      replaySteps: options.replaySteps ?? 4,
      weighting: options.weighting ?? 'count',
      prior: options.prior ?? 0.5,
      seed: options.seed ?? 0,
      snapshotReplay: options.snapshotReplay ?? true,
    });
    this.reset(initParams(this.shape(), this.config.prior, createRng(this.config.seed).fork('init')));
  }

  /** Steps trained so far, and the running leaf success rate seen at roots. */
  get state(): { steps: number; runningRate: number | undefined; replaySamples: number } {
    return {
      steps: this.steps,
      runningRate: this.trials > 0 ? this.successes / this.trials : undefined,
      replaySamples: this.replay.reduce((s, r) => s + r.y.length, 0),
    };
  }

  async prepare(histories: readonly History[]): Promise<void> {
    await this.features.prepare?.(histories);
  }

  predict(histories: readonly History[]): number[] {
    if (this.steps === 0) return histories.map(() => this.config.prior);
    return this.predictMatrix(this.features.encode(histories));
  }

  /** Ṽ for already-encoded rows. */
  predictMatrix(x: FeatureMatrix): number[] {
    const out: number[] = [];
    for (let start = 0; start < x.rows;) {
      const left = x.rows - start;
      const size = CHUNKS.find((c) => c >= left) ?? CHUNKS[CHUNKS.length - 1];
      const rows = Array.from({ length: size }, (_, i) => (i < left ? start + i : -1));
      const xb = np.array(densify(x, rows, undefined, this.width)).reshape([size, this.width]);
      const p = this.predictFn(tree.ref(this.params), xb).dataSync() as Float32Array;
      for (let i = 0; i < Math.min(size, left); i++) out.push(p[i]);
      start += size;
    }
    return out;
  }

  train(samples: readonly TargetSample[]): Record<string, number> {
    if (samples.length === 0) return { samples: 0, updates: 0 };
    const x = this.features.encode(samples.map((s) => s.history));
    const y = Float32Array.from(samples, (s) => s.target);
    const w = Float32Array.from(samples, (s) => (this.config.weighting === 'count' ? s.count : 1));
    for (const s of samples) {
      if (s.kind === 'root' || (s.kind === undefined && s.history.turns.length === 0)) {
        this.successes += s.target * s.count;
        this.trials += s.count;
      }
    }
    this.replay.push({ x, y, w });
    while (this.replay.length > this.config.replaySteps) this.replay.shift();
    const result = this.fit();
    this.steps++;
    return { samples: samples.length, ...result };
  }

  private fit(): { updates: number; loss: number; windowSamples: number } {
    const { batchSize: B, epochs, maxUpdatesPerStep, minUpdatesPerStep, lr } = this.config;
    const X = concatRows(
      this.replay.map((r) => r.x),
      this.features.dim,
    );
    const Y = concatFloat(this.replay.map((r) => r.y));
    const W = concatFloat(this.replay.map((r) => r.w));
    const N = X.rows;
    const updates = Math.min(maxUpdatesPerStep, Math.max(minUpdatesPerStep, Math.ceil((epochs * N) / B)));
    const rng = createRng(this.config.seed).fork(`train:${this.steps}`);
    const all = Array.from({ length: N }, (_, i) => i);
    let order: number[] = [];
    const xbuf = new Float32Array(B * this.width);
    let lossSum = 0;
    for (let u = 0; u < updates; u++) {
      if (order.length < Math.min(B, N)) order = order.concat(shuffled(all, rng));
      const rows = order.splice(0, Math.min(B, N));
      while (rows.length < B) rows.push(-1);
      const yb = new Float32Array(B);
      const wb = new Float32Array(B);
      let wsum = 0;
      rows.forEach((r, i) => {
        if (r >= 0) {
          yb[i] = Y[r];
          wb[i] = W[r];
          wsum += W[r];
        }
      });
      if (wsum > 0) for (let i = 0; i < B; i++) wb[i] /= wsum;
      this.adamT++;
      const { beta1, beta2 } = ADAM;
      const alpha = (lr * Math.sqrt(1 - beta2 ** this.adamT)) / (1 - beta1 ** this.adamT);
      const xb = np.array(densify(X, rows, xbuf, this.width)).reshape([B, this.width]);
      const [p, m, v, value] = this.adamStep(this.params, this.m, this.v, xb, np.array(yb), np.array(wb), np.array(alpha));
      this.params = p;
      this.m = m;
      this.v = v;
      lossSum += (value.dataSync() as Float32Array)[0];
    }
    return { updates, loss: lossSum / updates, windowSamples: N };
  }

  save(): Uint8Array {
    const blobs: Record<string, Float32Array | Int32Array> = {};
    fromParams(this.params).forEach((b, i) => (blobs[`p${i}`] = b));
    fromParams(this.m).forEach((b, i) => (blobs[`m${i}`] = b));
    fromParams(this.v).forEach((b, i) => (blobs[`v${i}`] = b));
    const replay = this.config.snapshotReplay ? this.replay : [];
    replay.forEach((r, i) => {
      blobs[`r${i}.indptr`] = r.x.indptr;
      blobs[`r${i}.idx`] = r.x.idx;
      blobs[`r${i}.val`] = r.x.val;
      blobs[`r${i}.y`] = r.y;
      blobs[`r${i}.w`] = r.w;
    });
    const header = {
      kind: 'mlp',
      features: this.features.signature,
      dim: this.features.dim,
      config: this.config,
      adamT: this.adamT,
      steps: this.steps,
      successes: this.successes,
      trials: this.trials,
      replay: replay.map((r) => r.y.length),
    };
    return encodeSnapshot(header, blobs);
  }

  load(snapshot: Uint8Array): void {
    const { header, blobs } = decodeSnapshot(snapshot);
    if (header.kind !== 'mlp') throw new SnapshotError(`snapshot is of a "${String(header.kind)}" predictor, not "mlp"`);
    if (header.features !== this.features.signature) {
      throw new SnapshotError(
        `snapshot features "${String(header.features)}" differ from this predictor's "${this.features.signature}": build the predictor with the same feature options`,
      );
    }
    this.config = validate(header.config as Config);
    const layers = 2 * (this.config.hidden.length + 1);
    const take = (prefix: string) => Array.from({ length: layers }, (_, i) => blobs[`${prefix}${i}`] as Float32Array);
    tree.dispose([this.params, this.m, this.v]);
    this.params = toParams(take('p'), this.shape());
    this.m = toParams(take('m'), this.shape());
    this.v = toParams(take('v'), this.shape());
    this.adamStep = makeAdamStep({ ...ADAM, lr: this.config.lr, l2: this.config.l2 });
    this.adamT = header.adamT as number;
    this.steps = header.steps as number;
    this.successes = header.successes as number;
    this.trials = header.trials as number;
    this.replay = (header.replay as number[]).map((rows, i) => ({
      x: {
        rows,
        dim: this.features.dim,
        indptr: blobs[`r${i}.indptr`] as Int32Array,
        idx: blobs[`r${i}.idx`] as Int32Array,
        val: blobs[`r${i}.val`] as Float32Array,
      },
      y: blobs[`r${i}.y`] as Float32Array,
      w: blobs[`r${i}.w`] as Float32Array,
    }));
  }

  /** Network input width: the feature dim rounded up to a multiple of 32 (zero columns). */
  private get width(): number {
    return Math.ceil(this.features.dim / 32) * 32;
  }

  private shape(): MlpShape {
    return { input: this.width, hidden: this.config.hidden };
  }

  dispose(): void {
    tree.dispose([this.params, this.m, this.v]);
    (this.predictFn as unknown as { dispose(): void }).dispose();
    (this.adamStep as unknown as { dispose?(): void }).dispose?.();
  }

  private reset(flat: Float32Array[]): void {
    this.params = toParams(flat, this.shape());
    this.m = zerosLike(this.params);
    this.v = zerosLike(this.params);
    this.adamStep = makeAdamStep({ ...ADAM, lr: this.config.lr, l2: this.config.l2 });
  }
}

const ADAM = { beta1: 0.9, beta2: 0.999, eps: 1e-8 };

function concatFloat(parts: readonly Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((s, p) => s + p.length, 0));
  let k = 0;
  for (const p of parts) {
    out.set(p, k);
    k += p.length;
  }
  return out;
}

function validate(c: Config): Config {
  const bad = (field: string, value: unknown, want: string) => new PredictorConfigError(`mlp predictor: ${field} = ${JSON.stringify(value)}; ${want}`);
  if (!Array.isArray(c.hidden) || c.hidden.length === 0 || c.hidden.some((h) => !Number.isInteger(h) || h < 1))
    throw bad('hidden', c.hidden, 'give one or more positive integer widths, e.g. [64, 32]');
  if (!(c.lr > 0)) throw bad('lr', c.lr, 'must be > 0');
  if (!(c.l2 >= 0)) throw bad('l2', c.l2, 'must be ≥ 0');
  if (c.minUpdatesPerStep > c.maxUpdatesPerStep) throw bad('minUpdatesPerStep', c.minUpdatesPerStep, `must be ≤ maxUpdatesPerStep (${c.maxUpdatesPerStep})`);
  for (const k of ['batchSize', 'maxUpdatesPerStep', 'minUpdatesPerStep', 'replaySteps'] as const)
    if (!Number.isInteger(c[k]) || c[k] < 1) throw bad(k, c[k], 'must be a positive integer');
  if (!(c.epochs > 0)) throw bad('epochs', c.epochs, 'must be > 0');
  if (c.weighting !== 'count' && c.weighting !== 'uniform') throw bad('weighting', c.weighting, "use 'count' or 'uniform'");
  if (!(c.prior > 0 && c.prior < 1)) throw bad('prior', c.prior, 'must be in (0, 1)');
  if (!Number.isInteger(c.seed)) throw bad('seed', c.seed, 'must be an integer');
  return c;
}
