import { z } from 'zod';
import { tokenTrainingFields } from '../kind-fields.ts';

/** The official SDK reads its key from TINKER_API_KEY; trace-rl's own variable wins when both are set. */
export const TINKER_API_KEY_VARIABLES = ['TINKER_API_KEY'] as const;

/** The default step size: a LoRA rate (hosted Tinker trains LoRA); an engine that trains full weights needs one chosen for it. */
export const TINKER_LORA_RATE = 0.0003;

/** `policy.kind: tinker`'s settings. */
export const tinkerSettings = z.strictObject({
  kind: z.literal('tinker'),
  baseUrl: z
    .string({
      error: 'policy.kind tinker needs policy.baseUrl (--base-url): the Tinker-compatible server, e.g. http://127.0.0.1:8080 for trace-rl serve --tinker',
    })
    .refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), 'not an http(s) URL; use e.g. http://127.0.0.1:8080')
    .describe('tinker: the server root of a Tinker-compatible training API (hosted Tinker, SkyRL, verl_tinker, trace-rl serve --tinker); /api/v1 is appended.'),
  model: z
    .string()
    .min(1)
    .default('default')
    .describe(
      'tinker: the base model the engine fine-tunes, by its name there (e.g. Qwen/Qwen3-4B-Instruct-2507; trace-rl serve --tinker: the GGUF’s file name without .gguf, or --name). default: the engine’s only model. A name the engine does not serve is refused before any rollout.',
    ),
  loraRank: z.number().int().min(1).default(32).describe('tinker: LoRA rank of the trained adapter (engines that train full weights ignore it).'),
  tokenizer: z
    .string()
    .default('server')
    .describe('tinker: the model’s tokenizer, as --tokenizer takes it: server (the engine’s /tokenize: trace-rl serve), qwen3, hf:DIR.'),
  prompt: z
    .enum(['rendered', 'question'])
    .default('rendered')
    .describe('tinker: the prompt the model sees: rendered (the environment’s, with its instructions) or question (the question alone, the tiny LM’s format).'),
  maxTokensPerTurn: z.number().int().min(1).default(256).describe('tinker: generated tokens per turn at most (below the budget’s cap).'),
  contextLength: z
    .number()
    .int()
    .min(16)
    .optional()
    .describe(
      'tinker: tokens a trajectory may hold at most (prompt, turns, observations); a trajectory whose next turn would not fit ends there (end context, reward 0). Default: what the engine reports (get_server_capabilities’ max_context_length, else its /tokenize’s max_model_len); needed when it reports neither; never above what it reports.',
    ),
  stop: z.array(z.string().min(1)).max(16).default(['</search>', '</answer>']).describe('tinker: stop strings that end a turn (kept in the turn).'),
  endOfTurn: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe(
      'tinker: the model’s end-of-turn token as text, sent as a stop with policy.stop (a sample that runs past it is cut after it). Default: the tokenizer’s eos_token (qwen3: <|im_end|>; hf:DIR: its tokenizer_config.json); none for server.',
    ),
  adam: z
    .strictObject({
      beta1: z.number().min(0).lt(1).default(0.9).describe('tinker: Adam β₁.'),
      beta2: z.number().min(0).lt(1).default(0.999).describe('tinker: Adam β₂.'),
      eps: z.number().positive().default(1e-8).describe('tinker: Adam ε.'),
      gradClipNorm: z.number().min(0).default(1).describe('tinker: the gradient’s global-norm cap (0: none).'),
    })
    .prefault({})
    .describe('tinker: Adam’s constants sent with every optim_step (the step size is policy.learningRate); the defaults are the tiny LM trainer’s.'),
  lossReduction: z
    .enum(['sum', 'sequence-mean'])
    .default('sum')
    .describe(
      'tinker: how the engine reduces a loss over tokens: sum (hosted Tinker, trace-rl serve --tinker) or sequence-mean (SkyRL’s JAX backend: each datum’s mean over its tokens, averaged over the step’s datums); with sequence-mean each datum’s advantages are scaled so the gradient is the sum’s (docs/tinker.md).',
    ),
  apiKeyFile: z
    .string()
    .min(1)
    .optional()
    .describe(
      'tinker: a file whose first line is the API key (sent as X-API-Key). Without it: TRACE_RL_API_KEY, else TINKER_API_KEY; never a flag or this configuration.',
    ),
  ...tokenTrainingFields(TINKER_LORA_RATE),
});

export type TinkerSettings = z.output<typeof tinkerSettings>;
