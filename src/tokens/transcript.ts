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

  /** The prompt's ids. A template writes its own BOS text (e.g. Llama 3's `bos_token`); without one the tokenizer's BOS is prepended. */
  /** A new array on every call (the caller appends turns to it), whatever the tokenizer returns. */
  promptIds(rendered: string): number[] {
    const ids = this.tokenizer.encode(this.promptText(rendered));
    return !this.template && this.tokenizer.bos !== undefined ? [this.tokenizer.bos, ...ids] : [...ids];
  }

  observationIds(observation: string): number[] {
    return observation === '' ? [] : [...this.tokenizer.encode(this.observationText(observation))];
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
