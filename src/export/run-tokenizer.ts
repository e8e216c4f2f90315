/**
 * The tokenizer a stored run's token ids came from, read from the run itself, so that `export RUN`
 * needs no tokenizer flags for it: a tinker run's `policy.tokenizer` (with the engine's address for
 * `server`), a rollout run's note of the tokenizer options it was given (with its first server's
 * address). Other runs (the embedded policy's, bytes by default) have none.
 */
import { RunStore } from '../store/index.ts';

export interface RunTokenizer {
  /** A tokenizer spec as `--tokenizer` takes it: bytes, codepoints, hf:DIR, qwen3, server. */
  tokenizer: string;
  chatTemplate?: boolean;
  thinking?: string;
  system?: string;
  tools?: string;
  /** The server for `server`: the run's engine or first policy server. */
  serverURL?: string;
  /** Where in the run this was read, for messages: `policy.tokenizer`, `rollout --tokenizer`. */
  from: string;
}

type Json = Record<string, unknown>;

/** The note a rollout run keeps of how it was made (`trace-rl rollout` writes it, `--resume` and `export` read it). */
export const ROLLOUT_NOTE = 'rollout';

/** What that note holds: what `--resume` and `export` need besides the configuration. */
export interface RolloutNote {
  format: string;
  /** The tokenizer options as given (`--tokenizer`, `--chat-template`, `--thinking`, `--system`, `--tools` as an absolute path). */
  tokenizer: Record<string, unknown>;
  checkServerIds: boolean;
  /** With --atropos: the layout the groups were made in. */
  atroposLayout?: string;
}

/** The run's own tokenizer settings, or undefined when the run did not record any. */
export function runTokenizer(dir: string): RunTokenizer | undefined {
  const store = RunStore.open(dir, { readonly: true });
  try {
    const policy = ((store.config<Json>() ?? {}).policy ?? {}) as Json;
    if (policy.kind === 'tinker' && typeof policy.tokenizer === 'string')
      return { tokenizer: policy.tokenizer, ...(typeof policy.baseUrl === 'string' ? { serverURL: policy.baseUrl } : {}), from: 'policy.tokenizer' };
    // Read from a file: each field is checked before it is used.
    const note = store.note<Partial<RolloutNote>>(ROLLOUT_NOTE);
    const t = note?.tokenizer;
    if (!t || typeof t.tokenizer !== 'string') return undefined;
    const servers = Array.isArray(policy.baseUrls) ? policy.baseUrls.filter((u): u is string => typeof u === 'string') : [];
    return {
      tokenizer: t.tokenizer,
      ...(t.chatTemplate === true ? { chatTemplate: true } : {}),
      ...(typeof t.thinking === 'string' ? { thinking: t.thinking } : {}),
      ...(typeof t.system === 'string' ? { system: t.system } : {}),
      ...(typeof t.tools === 'string' ? { tools: t.tools } : {}),
      ...(servers[0] ? { serverURL: servers[0] } : {}),
      from: 'rollout --tokenizer',
    };
  } finally {
    store.close();
  }
}
