/**
 * Prefix features: History → a row of numbers the shared predictor reads.
 *
 * The default {@link HashedFeatures} needs nothing external: signed feature hashing (2^bits buckets)
 * of words and adjacent word pairs, in separate namespaces for the question, all actions so far
 * (typed: "search:paris" ≠ "answer:paris"), all observations so far, all thoughts so far, and the
 * last action, observation and thought; then a dense block of structure features (structure-features.ts). Within a namespace
 * each present feature weighs ±1/√n (n = entries in that namespace), so long observations do not drown
 * the question. Everything is a pure function of the history: stable across runs and processes.
 *
 * {@link createFeatures} can append an embedding block from a {@link HistoryEmbedder}.
 */
import type { FeatureExtractor, History } from './types.ts';
import { concatColumns, FeatureMatrixBuilder, type FeatureMatrix } from './feature-matrix.ts';
import { NS, TurnCache, hashAll, pairs, wordsWithNumbers } from './turn-cache.ts';
import { STRUCTURE_DIM, structureFeatures } from './structure-features.ts';
import { templateTokens, tokenize } from './text.ts';
import type { HistoryEmbedder } from './embeddings.ts';

export interface HashedFeatureOptions {
  /** log2 of the number of hash buckets. Default 11 (2,048). */
  hashBits?: number;
  /** Words read from one question, action or observation (the rest is ignored, for speed). Default 256. */
  maxTokensPerText?: number;
  /** Turn limit T_max for the turns-left features (else the prompt's `meta.maxTurns`, else unknown). */
  maxTurns?: number;
  /** Let structure features look at the prompt's gold answers. Default true. */
  useGold?: boolean;
  /** Hash the words of each turn's thought (all turns, and the last one). Default true. */
  useThoughts?: boolean;
  /**
   * What the question namespaces hash. 'words' (default): its words and word pairs (`q`, `q2`), names
   * included, so pairs cross question words with entity names ("director of kalomer"). 'template': the
   * words and pairs of its template (`templateTokens`: names and numbers replaced by placeholders) in
   * namespaces `qt`, `qt2`, so a root's features say what is asked and not about whom.
   */
  questionFeatures?: QuestionFeatures;
}

export type QuestionFeatures = 'words' | 'template';

/** Raised when an extractor is misconfigured or used out of order. */
export class FeatureError extends Error {
  override name = 'FeatureError';
}

export class HashedFeatures implements FeatureExtractor {
  readonly dim: number;
  readonly signature: string;
  private readonly hashDim: number;
  private readonly mask: number;
  private readonly turns: TurnCache;
  private readonly questions = new Map<string, Uint32Array[]>();
  private readonly opts: Required<Omit<HashedFeatureOptions, 'maxTurns'>> & { maxTurns?: number };

  constructor(options: HashedFeatureOptions = {}) {
    const hashBits = options.hashBits ?? 11;
    if (!Number.isInteger(hashBits) || hashBits < 4 || hashBits > 20) {
      throw new FeatureError(`hashBits must be an integer in [4, 20], got ${hashBits}`);
    }
    this.opts = {
      hashBits,
      maxTokensPerText: options.maxTokensPerText ?? 256,
      useGold: options.useGold ?? true,
      useThoughts: options.useThoughts ?? true,
      questionFeatures: options.questionFeatures ?? 'words',
      maxTurns: options.maxTurns,
    };
    if (this.opts.questionFeatures !== 'words' && this.opts.questionFeatures !== 'template')
      throw new FeatureError(`questionFeatures must be 'words' or 'template', got ${JSON.stringify(this.opts.questionFeatures)}`);
    this.hashDim = 1 << hashBits;
    this.mask = this.hashDim - 1;
    this.dim = this.hashDim + STRUCTURE_DIM;
    this.turns = new TurnCache(this.opts.maxTokensPerText);
    this.signature = `hashed-v1(bits=${hashBits},tokens=${this.opts.maxTokensPerText},maxTurns=${this.opts.maxTurns ?? '-'},gold=${this.opts.useGold},thoughts=${this.opts.useThoughts}${this.opts.questionFeatures === 'words' ? '' : `,question=${this.opts.questionFeatures}`})`;
  }

  encode(histories: readonly History[]): FeatureMatrix {
    const builder = new FeatureMatrixBuilder(this.dim);
    const acc = new Float64Array(this.hashDim);
    const mark = new Uint8Array(this.hashDim);
    const structure = new Float32Array(STRUCTURE_DIM);
    for (const h of histories) {
      const touched: number[] = [];
      const add = (hashes: Uint32Array, weight: number) => {
        for (const x of hashes) {
          const i = x & this.mask;
          if (!mark[i]) {
            mark[i] = 1;
            touched.push(i);
          }
          acc[i] += x >>> 31 ? -weight : weight;
        }
      };
      const addNamespace = (lists: readonly Uint32Array[]) => {
        const n = lists.reduce((s, l) => s + l.length, 0);
        if (n > 0) for (const l of lists) add(l, 1 / Math.sqrt(n));
      };
      const [q, q2] = this.question(h.prompt.question);
      addNamespace([q]);
      addNamespace([q2]);
      const infos = h.turns.map((t) => this.turns.get(t));
      addNamespace(infos.map((i) => i.action));
      addNamespace(infos.map((i) => i.actionPair));
      addNamespace([
        hashAll(
          NS.actionType,
          infos.map((i) => i.type),
        ),
      ]);
      addNamespace([hashAll(NS.actionTypePair, pairs(infos.map((i) => i.type)))]);
      addNamespace(infos.map((i) => i.observation));
      addNamespace(infos.map((i) => i.observationPair));
      const last = infos[infos.length - 1];
      if (last) {
        addNamespace([last.lastAction]);
        addNamespace([last.lastObservation]);
        addNamespace([last.lastObservationPair]);
        if (this.opts.useThoughts) addNamespace([last.lastThought]);
      }
      if (this.opts.useThoughts) addNamespace(infos.map((i) => i.thought));
      structureFeatures(h, this.turns, { maxTurns: this.opts.maxTurns, useGold: this.opts.useGold }, structure);
      const idx: number[] = [];
      const val: number[] = [];
      for (const i of Int32Array.from(touched).sort()) {
        if (acc[i] !== 0) {
          idx.push(i);
          val.push(acc[i]);
        }
        acc[i] = 0;
        mark[i] = 0;
      }
      for (let j = 0; j < STRUCTURE_DIM; j++) {
        if (structure[j] !== 0) {
          idx.push(this.hashDim + j);
          val.push(structure[j]);
        }
      }
      builder.addSortedRow(idx, val);
    }
    return builder.build();
  }

  private question(text: string): Uint32Array[] {
    let q = this.questions.get(text);
    if (!q) {
      if (this.opts.questionFeatures === 'template') {
        const tokens = templateTokens(text, this.opts.maxTokensPerText);
        q = [hashAll(NS.questionTemplate, tokens), hashAll(NS.questionTemplatePair, pairs(tokens))];
      } else {
        const tokens = tokenize(text, this.opts.maxTokensPerText);
        q = [hashAll(NS.question, wordsWithNumbers(tokens)), hashAll(NS.questionPair, pairs(tokens))];
      }
      if (this.questions.size >= 50_000) this.questions.clear();
      this.questions.set(text, q);
    }
    return q;
  }
}

/** Hashed features followed by an embedding block: [hashed | structure | embedding]. */
export class CombinedFeatures implements FeatureExtractor {
  readonly dim: number;
  readonly signature: string;

  constructor(
    private readonly base: FeatureExtractor,
    private readonly embedder: HistoryEmbedder,
  ) {
    this.dim = base.dim + embedder.dim;
    this.signature = `${base.signature}+${embedder.signature}`;
  }

  async prepare(histories: readonly History[]): Promise<void> {
    await this.base.prepare?.(histories);
    await this.embedder.prepare?.(histories);
  }

  encode(histories: readonly History[]): FeatureMatrix {
    const a = this.base.encode(histories);
    const b = new FeatureMatrixBuilder(this.embedder.dim);
    for (const h of histories) {
      const v = this.embedder.embed(h);
      if (v.length !== this.embedder.dim) {
        throw new FeatureError(`embedding of length ${v.length} from "${this.embedder.signature}", expected ${this.embedder.dim}: fix the embedder's dim`);
      }
      const idx: number[] = [];
      const val: number[] = [];
      for (let j = 0; j < v.length; j++) {
        if (v[j] !== 0) {
          idx.push(j);
          val.push(v[j]);
        }
      }
      b.addSortedRow(idx, val);
    }
    return concatColumns(a, b.build());
  }
}

export interface FeatureOptions {
  hashed?: HashedFeatureOptions;
  /** Appends an embedding of each history (OpenAI-compatible endpoint or caller-supplied vectors). */
  embeddings?: HistoryEmbedder;
}

/** The default feature extractor, optionally with embeddings appended. */
export function createFeatures(options: FeatureOptions = {}): FeatureExtractor {
  const hashed = new HashedFeatures(options.hashed);
  return options.embeddings ? new CombinedFeatures(hashed, options.embeddings) : hashed;
}
