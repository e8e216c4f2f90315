import type { ChatTemplate } from './chat-template.ts';
import type { Tokenizer } from './tokenizer.ts';

/**
 * How a multi-turn rollout becomes one token sequence: the prompt's ids, then for each turn the
 * model's sampled ids followed by the observation's ids. Plain (no template): the prompt text as the
 * environment rendered it (after the model's BOS, if it has one) and observations as they are. With a
 * chat template: the template's prompt and between-turn text (see ChatTemplate). The OpenAI policy's
 * token mode and export both use this, so exported ids are the ids the server was sent.
 */
export class Transcript {
  constructor(
    readonly tokenizer: Tokenizer,
    readonly template?: ChatTemplate,
  ) {}

  /** For export metadata: the tokenizer, and whether a chat template framed the turns. */
  get name(): string {
    return this.template ? `${this.tokenizer.name}+chat-template` : this.tokenizer.name;
  }

  promptText(rendered: string): string {
    return this.template ? this.template.prompt(rendered) : rendered;
  }

  /** Empty observations (after a final answer) add nothing: the rollout ended there. */
  observationText(observation: string): string {
    return this.template && observation !== '' ? this.template.observation(observation) : observation;
  }

  /**
   * Ids already computed, by text. Token mode sends a trajectory's whole sequence on every call, so
   * without these each call re-encodes its prompt and every earlier observation (a model tokenizer
   * costs about a microsecond per character); with them a call encodes only what is new. Bounded, the
   * least recently used dropped first: a step reuses a prompt across its rollouts and an observation
   * across its trajectory's later turns and continuations, all close together.
   */
  private readonly promptCache = new IdCache(PROMPT_CACHE_ENTRIES);
  private readonly observationCache = new IdCache(OBSERVATION_CACHE_ENTRIES);

  /** The prompt's ids. A template writes its own BOS text (e.g. Llama 3's `bos_token`); without one the tokenizer's BOS is prepended. */
  /** A new array on every call (the caller appends turns to it), whatever the tokenizer returns. */
  promptIds(rendered: string): number[] {
    return [...this.promptIdsView(rendered)];
  }

  observationIds(observation: string): number[] {
    return [...this.observationIdsView(observation)];
  }

  /** As promptIds, without the copy: the cached array itself, which the caller must not change. */
  promptIdsView(rendered: string): readonly number[] {
    return this.promptCache.get(rendered, () => {
      const ids = this.tokenizer.encode(this.promptText(rendered));
      return !this.template && this.tokenizer.bos !== undefined ? [this.tokenizer.bos, ...ids] : [...ids];
    });
  }

  /** As observationIds, without the copy: the cached array itself, which the caller must not change. */
  observationIdsView(observation: string): readonly number[] {
    return observation === '' ? NO_IDS : this.observationCache.get(observation, () => [...this.tokenizer.encode(this.observationText(observation))]);
  }

  /** Fills a server tokenizer's cache for these texts (a no-op for local tokenizers). */
  async prepare(
    prompts: readonly string[],
    observations: readonly string[],
    others: readonly string[] = [],
    idLists: readonly (readonly number[])[] = [],
  ): Promise<void> {
    if (!this.tokenizer.prepare) return;
    const texts = [...prompts.map((p) => this.promptText(p)), ...observations.map((o) => this.observationText(o)), ...others];
    await this.tokenizer.prepare([...new Set(texts)], idLists);
  }
}

const NO_IDS: readonly number[] = Object.freeze([]);
/** Distinct prompts kept: more than a step's prompts. */
const PROMPT_CACHE_ENTRIES = 8192;
/** Distinct observations kept: several per trajectory in flight, with room for continuations. */
const OBSERVATION_CACHE_ENTRIES = 65_536;

/** A bounded map from text to ids; a hit moves the entry to the back, the front is dropped when full. */
class IdCache {
  private readonly map = new Map<string, readonly number[]>();
  constructor(private readonly capacity: number) {}

  get(text: string, compute: () => number[]): readonly number[] {
    const hit = this.map.get(text);
    if (hit) {
      this.map.delete(text);
      this.map.set(text, hit);
      return hit;
    }
    const ids = Object.freeze(compute());
    if (this.map.size >= this.capacity) this.map.delete(this.map.keys().next().value!);
    this.map.set(text, ids);
    return ids;
  }
}
