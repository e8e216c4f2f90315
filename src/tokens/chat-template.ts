import { Template } from '@huggingface/jinja';
import { TokenizerError } from './tokenizer.ts';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
}

export interface ChatTemplateOptions {
  /** A system message before the prompt. */
  system?: string;
  /** Tool (function) schemas passed to the template as `tools` (OpenAI `{type: 'function', function: {...}}` shape). */
  tools?: readonly unknown[];
  /** Qwen3's thinking switch (`enable_thinking`); unset leaves the template's default. */
  thinking?: boolean;
  /** Role of the environment's observations: 'user' (default) or 'tool'. */
  observationRole?: 'user' | 'tool';
  /** Strings the template references (`bos_token`, `eos_token`). */
  specialTokens?: { bos_token?: string; eos_token?: string };
}

/** A marker for the model's turn while rendering: it never occurs in templates, prompts or observations. */
const MODEL_TURN = '\u0000trace-rl-model-turn\u0000';

/**
 * A model's own chat template (Jinja, rendered with `@huggingface/jinja`, the engine transformers.js
 * uses), reduced to the two pieces of text a token-exact multi-turn rollout needs:
 *  - `prompt(rendered)`: system + user message + the generation prompt (`<|im_start|>assistant\n`);
 *  - `observation(obs)`: what follows a sampled model turn — the end of the assistant message, the
 *    observation as a user (or tool) message, and the next generation prompt.
 * A rollout's ids are prompt ids, then per turn the sampled ids and the observation's ids: the earlier
 * turns are never re-rendered (templates such as Qwen3's rewrite past assistant turns, e.g. drop
 * their reasoning, which would change the tokens the model was trained on).
 */
export class ChatTemplate {
  private readonly template: Template;

  constructor(
    readonly source: string,
    readonly options: ChatTemplateOptions = {},
  ) {
    try {
      this.template = new Template(source);
    } catch (e) {
      throw new TokenizerError(`chat template does not parse: ${(e as Error).message}`);
    }
  }

  /** Renders a conversation with the model's template (tools and the thinking switch applied). */
  render(messages: readonly ChatMessage[], addGenerationPrompt: boolean): string {
    const o = this.options;
    return this.template.render({
      messages: messages.map((m) => ({ ...m })),
      add_generation_prompt: addGenerationPrompt,
      ...(o.tools ? { tools: o.tools } : {}),
      ...(o.thinking !== undefined ? { enable_thinking: o.thinking } : {}),
      ...(o.specialTokens ?? {}),
    });
  }

  private head(user: string): ChatMessage[] {
    return [...(this.options.system !== undefined ? [{ role: 'system' as const, content: this.options.system }] : []), { role: 'user', content: user }];
  }

  /** The first prompt: the rendered question as the user message, then the generation prompt. */
  prompt(rendered: string): string {
    return this.render(this.head(rendered), true);
  }

  /** The text between a sampled model turn and the next one: closes the turn, adds the observation, opens the next. */
  observation(observation: string): string {
    const full = this.render(
      [...this.head('question'), { role: 'assistant', content: MODEL_TURN }, { role: this.options.observationRole ?? 'user', content: observation }],
      true,
    );
    const at = full.indexOf(MODEL_TURN);
    if (at < 0) throw new TokenizerError('chat template dropped the assistant message; it cannot be used for multi-turn rollouts');
    return full.slice(at + MODEL_TURN.length);
  }
}
