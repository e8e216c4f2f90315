/**
 * `policy.kind: tinker`: trace-rl owns the loop and a Tinker-compatible engine trains. Each turn is
 * sampled through the Tinker sampling API from token ids (the prompt and every earlier turn's exact
 * ids, observations from the model's tokenizer), so trees are token-exact; each update sends the
 * step's leaf paths as Datums with per-token advantages (each generated token carries its turn's
 * tree-aware advantage), runs forward_backward + optim_step once per epoch, and saves sampler weights
 * the next rollouts sample from, plus a state checkpoint that `load` restores on resume.
 *
 * The surrogate is Tinker's `ppo` loss, a sum over tokens; the divisor D that the in-process policies
 * apply (policy.normalise) is folded into the advantages sent, so the gradient is the same one
 * `tiny-lm` takes in process.
 */
import { renderQuestion } from '../../env/search/index.ts';
import type { Prompt, Turn } from '../../tree/types.ts';
import type { Transcript } from '../../tokens/index.ts';
import { PolicyCallError } from '../errors.ts';
import type { Normalise } from '../surrogate.ts';
import type { PolicyContext, PolicyOutput, PolicySample, PolicyUpdateOptions, PromptFit, RunOutcome, TrainablePolicy, UpdateMetrics } from '../types.ts';
import { TinkerClient, TinkerHttpError, type TinkerClientOptions } from './client.ts';
import { endOfTurnToken } from './end-of-turn.ts';
import { checkRate, contextLength, scaleForSequenceMean, servedModel, trainsFullWeights } from './engine.ts';
import { TINKER_LORA_RATE } from './settings.ts';
import { ServerTokenizer } from '../../tokens/index.ts';
import { datumProvenance, sequenceProvenance } from './provenance.ts';
import { floats, ints, tokensInput, type Datum } from './wire.ts';

export interface TinkerPolicyOptions {
  /** Server root (the API lives under /api/v1). */
  baseURL: string;
  /** The base model the engine fine-tunes (its name on that engine). */
  baseModel: string;
  loraRank: number;
  apiKey?: string;
  /** The model's tokenizer (and chat template): prompt and observation ids. */
  transcript: Transcript;
  /** rendered: the environment's prompt; question: the question alone, as the world renders it (the tiny LM's format). */
  prompt: 'rendered' | 'question';
  temperature: number;
  maxTokensPerTurn: number;
  stop: readonly string[];
  adam: { beta1: number; beta2: number; eps: number; gradClipNorm: number };
  /** Tokens a sequence may hold at most when the engine does not say (policy.contextLength); never above the engine's. */
  contextLength?: number;
  /** How the engine reduces a loss over tokens (policy.lossReduction; default sum, Tinker's). */
  lossReduction?: 'sum' | 'sequence-mean';
  /** The model's end-of-turn token as text (policy.endOfTurn, else the tokenizer's): sent as a stop, and a sample is cut after it. */
  endOfTurn?: string;
  /** The client's limits (tests make them small). */
  client?: Pick<TinkerClientOptions, 'heartbeatMs' | 'maxChunkDatums' | 'maxChunkBytes' | 'futureTimeoutMs' | 'timeoutMs' | 'retrieveTimeoutMs'>;
}

/** A rollout as the model saw it: ids, which were sampled (mask 1), their log-probabilities, and each token's turn (−1: not the model's). */
export interface TinkerSequence {
  ids: number[];
  mask: number[];
  logprobs: number[];
  turn: number[];
}

const MAGIC = 'trace-rl/tinker@1';

/** What the engine said, once: the model's name there, its context length, and its end-of-turn token. */
interface EngineFacts {
  model: string;
  contextLength: number;
  endOfTurn?: { text: string; id: number };
}

/** Raised when a checkpoint is not a tinker snapshot. */
export class TinkerSnapshotError extends Error {
  override name = 'TinkerSnapshotError';
}

const modelText = (t: Turn): string => t.text ?? `<think>${t.thought}</think>\n<${t.action.type}>${t.action.input}</${t.action.type}>`;

export class TinkerPolicy implements TrainablePolicy {
  readonly name: string;
  readonly client: TinkerClient;
  /** The trainable model, created once on first use however many calls ask at the same time. */
  private modelId?: Promise<string>;
  /** Work every call waits for: a resumed checkpoint's load (chained, never replaced). */
  private loading: Promise<void> = Promise.resolve();
  /** What the engine serves, checked once: the model's name there and its context length. */
  private engine?: Promise<EngineFacts>;
  /** What to sample from: the last sampler weights, else the base model. */
  private samplerPath?: string;
  private statePath?: string;
  private updates = 0;
  /** The environment's prompt text by prompt id, seen by act (an update rebuilds the same sequences). */
  private readonly rendered = new Map<string, string>();
  /**
   * Prompt tokens sent in samples since the last update; of them, those a prefix cache could have kept
   * (the tree's shared prefixes, see `sharedPrefix`); and those the engine said it took from its cache
   * (`prompt_cache_hit_tokens`; undefined while it has never said).
   */
  private sampled = { promptTokens: 0, sharedTokens: 0, cacheHits: undefined as number | undefined, prompts: new Set<string>() };

  constructor(private readonly opts: TinkerPolicyOptions) {
    this.name = `tinker:${opts.baseModel}`;
    this.client = new TinkerClient({ baseURL: opts.baseURL, ...(opts.apiKey ? { apiKey: opts.apiKey } : {}), ...opts.client });
  }

  /**
   * Asks the engine once what it serves: a model name it does not serve is refused (naming what it
   * serves), and the context length every sequence must fit is its `max_context_length`, else its
   * /tokenize's `max_model_len` (a server tokenizer's engine), else `policy.contextLength`. Called
   * when the policy is built, so a wrong name fails before any rollout.
   */
  start(): Promise<EngineFacts> {
    this.engine ??= (async () => {
      const served = servedModel(await this.client.capabilities(), this.opts.baseModel, this.client.root);
      const reported = served.contextLength ?? (this.opts.transcript.tokenizer instanceof ServerTokenizer ? await this.client.tokenizeLimit() : undefined);
      const endOfTurn = this.opts.endOfTurn === undefined ? undefined : await endOfTurnToken(this.opts.endOfTurn, this.opts.transcript.tokenizer);
      return {
        model: served.name,
        contextLength: contextLength(reported, this.opts.contextLength, this.client.root, served.name),
        ...(endOfTurn ? { endOfTurn } : {}),
      };
    })().catch((e: unknown) => {
      this.engine = undefined;
      throw e;
    });
    return this.engine;
  }

  /**
   * Before any rollout of a training run: creates the model and reads what the engine says it is; a
   * full-weights engine with the LoRA default rate is refused (checkRate).
   */
  async checkTraining(learningRate: number): Promise<{ fullWeights: boolean }> {
    const { model } = await this.start();
    const fullWeights = trainsFullWeights(await this.client.modelInfo(await this.created()));
    checkRate(fullWeights, learningRate, TINKER_LORA_RATE, this.client.root, model);
    return { fullWeights };
  }

  /** The trainable model once any resumed state is loaded into it. */
  private async model(): Promise<string> {
    await this.loading;
    return this.created();
  }

  private created(): Promise<string> {
    this.modelId ??= this.start()
      .then(({ model }) => this.client.createModel(model, this.opts.loraRank))
      .catch((e: unknown) => {
        this.modelId = undefined;
        throw e;
      });
    return this.modelId;
  }

  engineCounts(): Record<string, number> {
    const { promptTokens, sharedTokens, cacheHits } = this.sampled;
    this.sampled = { promptTokens: 0, sharedTokens: 0, cacheHits: undefined, prompts: new Set() };
    return {
      tinker_prompt_tokens: promptTokens,
      tinker_prompt_shared_tokens: sharedTokens,
      ...(cacheHits !== undefined ? { tinker_prompt_cache_hit_tokens: cacheHits } : {}),
    };
  }

  /** Stops the session's heartbeat. */
  close(): void {
    this.client.close();
  }

  /** The run is over: the engine is told how (its session's finish), and the heartbeat stops. */
  async dispose(outcome: RunOutcome = 'success'): Promise<void> {
    await this.client.finish(outcome);
  }

  private promptText(prompt: Prompt, rendered: string): string {
    return this.opts.prompt === 'question' ? renderQuestion(prompt.question) : rendered;
  }

  /**
   * The tokens of a sample's prompt that an earlier sample of the tree already put before the engine: a
   * first turn's whole prompt when the question was sampled before since the last update (a sibling
   * rollout), else everything but the observation after the last turn (the previous turn's prompt and
   * its sampled tokens were computed by the call that sampled it). What an ideal prefix cache would
   * keep; `prompt_cache_hit_tokens` says what the engine's did.
   */
  private sharedPrefix(promptId: string, turns: number, seq: TinkerSequence): number {
    if (turns === 0) {
      const seen = this.sampled.prompts.has(promptId);
      this.sampled.prompts.add(promptId);
      return seen ? seq.ids.length : 0;
    }
    let observation = 0;
    while (observation < seq.turn.length && seq.turn[seq.turn.length - 1 - observation] === -1) observation++;
    return seq.ids.length - observation;
  }

  /** The token sequence of a prompt and turns (a turn's own sampled ids, never re-tokenised). */
  async sequence(prompt: Prompt, rendered: string, turns: readonly Turn[]): Promise<TinkerSequence> {
    const t = this.opts.transcript;
    const text = this.promptText(prompt, rendered);
    await t.prepare(
      [text],
      turns.map((x) => x.observation).filter((o) => o !== ''),
      turns.filter((x) => !x.tokens).map(modelText),
    );
    const ids = t.promptIds(text);
    const s: TinkerSequence = { ids, mask: ids.map(() => 0), logprobs: ids.map(() => 0), turn: ids.map(() => -1) };
    turns.forEach((turn, i) => {
      // Ids a server appended without sampling them (mask 0: a cut stop tag) are not the model's.
      const end = turn.tokens ? (turn.tokens.mask.indexOf(0) < 0 ? turn.tokens.ids.length : turn.tokens.mask.indexOf(0)) : 0;
      const own = turn.tokens ? turn.tokens.ids.slice(0, end) : t.tokenizer.encode(modelText(turn));
      own.forEach((id, j) => {
        s.ids.push(id);
        s.mask.push(turn.error ? 0 : 1);
        s.logprobs.push(turn.tokens?.logprobs[j] ?? 0);
        s.turn.push(i);
      });
      for (const id of t.observationIds(turn.observation)) {
        s.ids.push(id);
        s.mask.push(0);
        s.logprobs.push(0);
        s.turn.push(-1);
      }
    });
    return s;
  }

  /** The prompt's tokens as act() sends them, against the context the engine reported (start()). */
  async promptFit(prompt: Prompt, rendered: string): Promise<PromptFit> {
    const { contextLength } = await this.start();
    const seq = await this.sequence(prompt, rendered, []);
    return { tokens: seq.ids.length, context: contextLength, turnTokens: this.opts.maxTokensPerTurn };
  }

  async act(ctx: PolicyContext): Promise<PolicyOutput> {
    const { model, contextLength, endOfTurn } = await this.start();
    await this.model();
    this.rendered.set(ctx.prompt.id, ctx.rendered);
    const seq = await this.sequence(ctx.prompt, ctx.rendered, ctx.turns);
    // As the in-process tiny LM: a trajectory that fills the context ends there (the engine ends it
    // 'context', reward 0), and a turn never samples past it, so no sequence trained on outgrows the model.
    if (seq.ids.length + 1 >= contextLength)
      throw new PolicyCallError(
        'context_overflow',
        `${this.client.root}/api/v1/asample: the trajectory's ${seq.ids.length} tokens fill ${model}'s context of ${contextLength}`,
        false,
      );
    const r = await this.client.sample(
      {
        prompt: tokensInput(seq.ids),
        num_samples: 1,
        sampling_params: {
          max_tokens: Math.max(1, Math.min(ctx.maxTokens, this.opts.maxTokensPerTurn, contextLength - seq.ids.length)),
          seed: ctx.rng.int(2 ** 31),
          temperature: ctx.greedy ? 0 : this.opts.temperature,
          stop: endOfTurn ? [...this.opts.stop, endOfTurn.text] : [...this.opts.stop],
        },
        ...(this.samplerPath ? { model_path: this.samplerPath } : { base_model: model }),
      },
      ctx.signal,
    );
    this.sampled.promptTokens += seq.ids.length;
    this.sampled.sharedTokens += this.sharedPrefix(ctx.prompt.id, ctx.turns.length, seq);
    if (r.prompt_cache_hit_tokens != null) this.sampled.cacheHits = (this.sampled.cacheHits ?? 0) + r.prompt_cache_hit_tokens;
    const s = r.sequences[0]!;
    if (!s.logprobs || s.logprobs.length !== s.tokens.length)
      throw new PolicyCallError('parse_error', `${this.client.root}/api/v1/asample: the sample has no log-probability per token`, false);
    // An engine that ran on past the end-of-turn token: the turn is what came up to it (the rest is spent, not kept).
    const stop = endOfTurn ? s.tokens.indexOf(endOfTurn.id) : -1;
    const ids = stop >= 0 ? s.tokens.slice(0, stop + 1) : s.tokens;
    const logprobs = s.logprobs.slice(0, ids.length);
    const tokenizer = this.opts.transcript.tokenizer;
    if (tokenizer.prepare) await tokenizer.prepare([], [ids]);
    const text = tokenizer.decode(ids);
    return {
      text,
      tokens: { ids: [...ids], logprobs, mask: ids.map(() => 1), prompt: 'ids', ...(s.sequence_id ? { sequenceId: s.sequence_id } : {}) },
      generatedTokens: s.tokens.length,
      logprob: logprobs.reduce((a, b) => a + b, 0),
    };
  }

  /**
   * The step's samples as Datums (longest first, as the in-process trainer packs them), each token's
   * advantage divided by D; samples whose every token has advantage 0 carry no gradient and are left out.
   */
  async datums(
    samples: readonly PolicySample[],
    normalise: Normalise,
  ): Promise<{ data: Datum[]; rows: Array<{ seq: TinkerSequence; adv: number[] }>; divisor: number }> {
    const rows = await Promise.all(
      samples.map(async (s) => {
        const rendered = this.rendered.get(s.prompt.id);
        if (rendered === undefined && this.opts.prompt === 'rendered')
          throw new Error(`TinkerPolicy.update: prompt ${s.prompt.id} was never acted on by this policy, so its rendered text is unknown`);
        const seq = await this.sequence(s.prompt, rendered ?? '', s.turns);
        const ids = s.turns.map((t) => t.tokens?.sequenceId);
        return { seq, ids, adv: seq.turn.map((i, t) => (i < 0 || seq.mask[t] !== 1 ? 0 : s.advantages[i]!)) };
      }),
    );
    const trained = rows.filter((r) => r.adv.some((a) => a !== 0));
    const count = (rs: typeof rows, f: (r: (typeof rows)[number], t: number) => boolean) => rs.reduce((n, r) => n + r.adv.filter((_, t) => f(r, t)).length, 0);
    const divisor =
      normalise === 'samples' ? samples.length : normalise === 'batch' ? count(rows, (r, t) => r.seq.mask[t] === 1) : count(trained, (r, t) => r.adv[t] !== 0);
    // Nothing after the last trained token teaches (the observation after the last turn has no
    // advantage) and it could push a full-context trajectory past the model's limit: cut there.
    const cut = trained.map(({ seq, ids, adv }) => {
      let end = adv.length;
      while (end > 0 && adv[end - 1] === 0) end--;
      return {
        seq: { ids: seq.ids.slice(0, end), mask: seq.mask.slice(0, end), logprobs: seq.logprobs.slice(0, end), turn: seq.turn.slice(0, end) },
        ids,
        adv: adv.slice(0, end),
      };
    });
    const ordered = cut.sort((a, b) => b.seq.ids.length - a.seq.ids.length);
    const data = ordered.map(({ seq, ids, adv }) => ({
      model_input: tokensInput(seq.ids.slice(0, -1)),
      loss_fn_inputs: {
        target_tokens: ints(seq.ids.slice(1)),
        logprobs: floats(seq.logprobs.slice(1)),
        advantages: floats(adv.slice(1).map((a) => a / divisor)),
      },
      // Which tokens the engine sampled and which it was given (when every turn's sample has the engine's id).
      ...datumProvenance(sequenceProvenance(seq.turn, ids), seq.ids.length),
    }));
    return { data, rows: ordered.map(({ seq, adv }) => ({ seq, adv })), divisor };
  }

  async update(samples: readonly PolicySample[], options: PolicyUpdateOptions): Promise<UpdateMetrics> {
    const id = await this.model();
    const { data, rows } = await this.datums(samples, options.normalise ?? 'turns');
    const clip = options.clip;
    const adam = {
      learning_rate: options.learningRate,
      beta1: this.opts.adam.beta1,
      beta2: this.opts.adam.beta2,
      eps: this.opts.adam.eps,
      weight_decay: 0,
      grad_clip_norm: this.opts.adam.gradClipNorm,
    };
    let stats = { loss: 0, clipped: 0, kl: 0, n: 0 };
    if (data.length > 0) {
      for (let e = 0; e < options.epochs; e++) {
        const sent = this.opts.lossReduction === 'sequence-mean' ? scaleForSequenceMean(data) : data;
        const out = await this.client.forwardBackward(id, sent, 'ppo', { clip_low_threshold: 1 - clip, clip_high_threshold: 1 + clip });
        if (e === 0) stats = ratioStats(data, out.loss_fn_outputs, clip);
        await this.client.optimStep(id, adam);
      }
    }
    const n = ++this.updates;
    this.samplerPath = await this.client.saveForSampler(id, `step-${n}`);
    this.statePath = await this.client.saveState(id, `state-${n}`);
    this.rendered.clear();
    let ent = 0;
    let m = 0;
    for (const r of rows)
      r.adv.forEach((a, t) => {
        if (a === 0) return;
        ent -= r.seq.logprobs[t]!;
        m++;
      });
    const turns = samples.reduce((a, s) => a + s.advantages.filter((x, i) => x !== 0 && !s.turns[i]!.error).length, 0);
    return {
      turns,
      loss: stats.loss,
      clipFraction: stats.n ? stats.clipped / stats.n : 0,
      approxKl: stats.n ? stats.kl / stats.n : 0,
      entropy: m ? ent / m : 0,
    };
  }

  /**
   * The engine holds the weights: a snapshot names the model's saved state (weights and optimizer). The
   * path is the engine's choice, stored in the run's checkpoints table: the API key is cut out of it in
   * any encoding first (a path that carried it cannot be loaded on resume; the 404 then names it).
   */
  save(): Uint8Array {
    const state = this.statePath === undefined ? null : this.client.redact(this.statePath);
    return new TextEncoder().encode(JSON.stringify({ format: MAGIC, baseURL: this.client.root, state, updates: this.updates }));
  }

  /** Restores a snapshot: the saved state is loaded into this policy's model before its next call, and sampled from. */
  load(snapshot: Uint8Array): void {
    let v: { format?: string; state?: string | null; updates?: number; baseURL?: string };
    try {
      v = JSON.parse(new TextDecoder().decode(snapshot)) as typeof v;
    } catch {
      throw new TinkerSnapshotError('not a tinker snapshot (not JSON)');
    }
    if (v.format !== MAGIC) throw new TinkerSnapshotError(`snapshot format "${v.format}" is not ${MAGIC}`);
    const state = v.state;
    const saved = typeof v.baseURL === 'string' ? v.baseURL : 'unknown';
    this.updates = v.updates ?? 0;
    this.statePath = state ?? undefined;
    // Chained on `loading`, which every call awaits before it samples or trains: a resumed run never
    // samples the base model while the saved state is still loading, nor saves it as its checkpoint.
    this.loading = this.loading.then(async () => {
      if (!state) {
        // Taken before any update: the base model, sampled as such; training restarts on a new model from it.
        this.modelId = undefined;
        this.samplerPath = undefined;
        return;
      }
      const id = await this.created();
      try {
        await this.client.loadState(id, state);
      } catch (e) {
        if (!(e instanceof TinkerHttpError && e.status === 404)) throw e;
        throw new PolicyCallError(
          'server_error',
          `${e.message}; the checkpoint names ${state}, saved by the engine at ${saved}: resume against an engine that holds it (--base-url)`,
          false,
        );
      }
      this.statePath = state;
      this.samplerPath = await this.client.saveForSampler(id, `step-${this.updates}`);
    });
  }
}

/** The first epoch's surrogate (already divided by D), clip fraction and approximate KL over the tokens with an advantage. */
function ratioStats(data: readonly Datum[], outputs: readonly Record<string, { data: number[] }>[], clip: number) {
  let loss = 0;
  let clipped = 0;
  let kl = 0;
  let n = 0;
  data.forEach((d, i) => {
    const now = outputs[i]!.logprobs?.data;
    if (!now) throw new PolicyCallError('parse_error', `forward_backward output ${i} has no "logprobs"`, false);
    const adv = d.loss_fn_inputs.advantages!.data;
    const old = d.loss_fn_inputs.logprobs!.data;
    adv.forEach((a, t) => {
      if (a === 0) return;
      const diff = now[t]! - old[t]!;
      const ratio = Math.exp(diff);
      loss -= Math.min(ratio * a, Math.min(Math.max(ratio, 1 - clip), 1 + clip) * a);
      if (ratio < 1 - clip || ratio > 1 + clip) clipped++;
      kl -= diff;
      n++;
    });
  });
  return { loss, clipped, kl, n };
}
