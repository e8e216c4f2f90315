/**
 * The Tinker training API's wire format (its JSON shapes), as the subset trace-rl speaks: the client
 * (tinker-policy.ts) builds these bodies and `trace-rl serve --tinker` reads them with these schemas.
 * Field names and shapes follow the official Python SDK (thinking-machines-lab/tinker,
 * src/tinker/types/*.py and src/tinker/resources/*.py); docs/tinker.md lists the files.
 *
 * Every call but the session's is answered with a future, `{request_id}`; `POST
 * /api/v1/retrieve_future {request_id}` answers the result, `{type: "try_again"}` while it is not
 * ready, or `{error, category}` when it failed. `forward_backward` and the sample and forward_backward
 * results also travel as the SDK's protobuf (proto-codec.ts converts them to and from these shapes;
 * wire-choice.ts says which an engine gets), so both ends validate one shape whatever the encoding.
 */
import { z } from 'zod';

/** Bounds on what one request may carry (a Datum of a long multi-turn rollout is a few thousand tokens). */
export const WIRE_LIMITS = { tokens: 1 << 17, datums: 4096, samples: 16, spans: 1024, sequenceId: 256 } as const;

const tokenId = z.number().int().min(0);
export const modelInputSchema = z.looseObject({
  chunks: z.array(z.looseObject({ type: z.literal('encoded_text').default('encoded_text'), tokens: z.array(tokenId).max(WIRE_LIMITS.tokens) })).max(64),
});
export type ModelInput = z.infer<typeof modelInputSchema>;

/** A dense 1-D tensor (`TensorData`): flattened values, dtype, optional shape. */
export const tensorSchema = z.looseObject({
  data: z.array(z.number()).max(WIRE_LIMITS.tokens),
  dtype: z.enum(['int64', 'float32']),
  shape: z.array(z.number().int().min(0)).nullish(),
});
export type TensorData = z.infer<typeof tensorSchema>;

/**
 * One provenance claim of a Datum (SDK 0.26+: `PromptProvenanceSpan` / `SampledProvenanceSpan`, protobuf
 * `ProvenanceSpan`): `length` consecutive datum positions are positions `offset…` of the named sampled
 * sequence's request prompt (`prompt_tokens`) or of its sampled tokens (`sampled_tokens`). The SDK sends
 * them in protobuf only; this JSON shape is the two ends' internal form (provenance.ts).
 */
export const provenanceSpanSchema = z.looseObject({
  type: z.enum(['prompt_tokens', 'sampled_tokens']),
  sequence_id: z.string().min(1).max(WIRE_LIMITS.sequenceId),
  offset: z.number().int().min(0),
  length: z.number().int().min(1),
});
export type ProvenanceSpan = z.infer<typeof provenanceSpanSchema>;

export const datumSchema = z.looseObject({
  model_input: modelInputSchema,
  loss_fn_inputs: z.record(z.string(), tensorSchema),
  /** Runs tiling `model_input`'s tokens, and runs tiling `target_tokens`: both or neither. */
  model_input_spans: z.array(provenanceSpanSchema).max(WIRE_LIMITS.spans).nullish(),
  loss_fn_input_spans: z.array(provenanceSpanSchema).max(WIRE_LIMITS.spans).nullish(),
});
export type Datum = z.infer<typeof datumSchema>;

export const LOSS_FNS = ['importance_sampling', 'ppo'] as const;

export const forwardBackwardSchema = z.looseObject({
  model_id: z.string().min(1),
  seq_id: z.number().int().nullish(),
  forward_backward_input: z.looseObject({
    data: z.array(datumSchema).min(1).max(WIRE_LIMITS.datums),
    loss_fn: z.string(),
    loss_fn_config: z.record(z.string(), z.number()).nullish(),
  }),
});
export type ForwardBackwardRequest = z.infer<typeof forwardBackwardSchema>;

export const adamSchema = z.looseObject({
  learning_rate: z.number().nonnegative().default(0.0001),
  beta1: z.number().min(0).lt(1).default(0.9),
  beta2: z.number().min(0).lt(1).default(0.95),
  eps: z.number().positive().default(1e-12),
  weight_decay: z.number().min(0).default(0),
  grad_clip_norm: z.number().min(0).default(0),
});
export type AdamParams = z.infer<typeof adamSchema>;

export const optimStepSchema = z.looseObject({ model_id: z.string().min(1), seq_id: z.number().int().nullish(), adam_params: adamSchema });

export const samplingParamsSchema = z.looseObject({
  max_tokens: z.number().int().min(1).max(WIRE_LIMITS.tokens).nullish(),
  seed: z.number().int().nullish(),
  stop: z.union([z.string(), z.array(z.string()).max(16), z.array(tokenId).max(16)]).nullish(),
  temperature: z.number().min(0).max(2).default(1),
  top_k: z.number().int().min(-1).default(-1),
  top_p: z.number().gt(0).max(1).default(1),
});
export type SamplingParams = z.infer<typeof samplingParamsSchema>;

export const sampleSchema = z.looseObject({
  prompt: modelInputSchema,
  num_samples: z.number().int().min(1).max(WIRE_LIMITS.samples).default(1),
  sampling_params: samplingParamsSchema,
  base_model: z.string().nullish(),
  model_path: z.string().nullish(),
  sampling_session_id: z.string().nullish(),
  seq_id: z.number().int().nullish(),
  prompt_logprobs: z.boolean().nullish(),
  // Asks of SDK 0.26+ that `serve --tinker` refuses when set (routes.ts); the client never sends them.
  topk_prompt_logprobs: z.number().int().min(0).nullish(),
  topk_sample_logprobs: z.number().int().min(0).nullish(),
  target_prompt_logprobs: z.unknown().optional(),
  prompt_alt_tokens_k: z.number().int().min(0).nullish(),
});
export type SampleRequest = z.input<typeof sampleSchema>;

export const sampledSequenceSchema = z.looseObject({
  tokens: z.array(tokenId).max(WIRE_LIMITS.tokens),
  logprobs: z.array(z.number()).max(WIRE_LIMITS.tokens).nullish(),
  stop_reason: z.enum(['length', 'stop']),
  /** The engine's id of this sequence (the SDK stamps the asample future's `sample_sequence_ids` on it). */
  sequence_id: z.string().min(1).max(WIRE_LIMITS.sequenceId).optional(),
});
export const sampleResponseSchema = z.looseObject({
  sequences: z.array(sampledSequenceSchema).min(1).max(WIRE_LIMITS.samples),
  /** The engine's own count of prompt tokens it took from its prefix cache (the SDK's, 0 when absent). */
  prompt_cache_hit_tokens: z.number().int().min(0).nullish(),
});
export type SampleResponse = z.infer<typeof sampleResponseSchema>;

export const createSessionSchema = z.looseObject({ tags: z.array(z.string()).default([]), sdk_version: z.string().default('') });
export const createModelSchema = z.looseObject({
  session_id: z.string().min(1),
  model_seq_id: z.number().int().default(0),
  base_model: z.string().min(1),
  lora_config: z.looseObject({ rank: z.number().int().min(1) }).nullish(),
});
export const modelIdSchema = z.looseObject({ model_id: z.string().min(1), path: z.string().nullish(), seq_id: z.number().int().nullish() });
export const loadWeightsSchema = z.looseObject({
  model_id: z.string().min(1),
  path: z.string().min(1),
  optimizer: z.boolean().default(true),
  seq_id: z.number().int().nullish(),
});
export const retrieveSchema = z.looseObject({ request_id: z.string().min(1), allow_metadata_only: z.boolean().optional() });

/**
 * `asample`'s future (SDK 0.26+'s `UntypedAPIFuture`): one id per sample asked, in the order of the
 * result's sequences, each that sequence's `sequence_id` (what a Datum's provenance names). The SDK
 * refuses a sample whose future carries none; an engine of older SDKs sends none.
 */
export const sampleFutureSchema = z.looseObject({
  request_id: z.string().min(1),
  sample_sequence_ids: z.array(z.string().min(1).max(WIRE_LIMITS.sequenceId)).max(WIRE_LIMITS.samples).nullish(),
});

export const forwardBackwardOutputSchema = z.looseObject({
  loss_fn_output_type: z.string().optional(),
  loss_fn_outputs: z.array(z.record(z.string(), tensorSchema)).max(WIRE_LIMITS.datums),
  metrics: z.record(z.string(), z.number()).default({}),
});
export type ForwardBackwardOutput = z.infer<typeof forwardBackwardOutputSchema>;

/**
 * The SDK release whose wire this client and `serve --tinker` implement, sent as `sdk_version` (the
 * engine resolves its feature flags by it, and a hosted service may refuse old ones).
 */
export const SDK_WIRE_VERSION = '0.32.0';

/** How a client says its session ended (`POST /api/v1/sessions/{id}/finish`). */
export const FINISH_REASONS = ['success', 'errored', 'interrupted'] as const;
export type FinishReason = (typeof FINISH_REASONS)[number];
export const finishSessionSchema = z.looseObject({ reason: z.looseObject({ type: z.enum(FINISH_REASONS) }), detail: z.string().max(2000).nullish() });

/** `retrieve_future`'s answer while the work runs. */
export const TRY_AGAIN = 'try_again';

export const tokensInput = (tokens: readonly number[]): ModelInput => ({ chunks: [{ type: 'encoded_text', tokens: [...tokens] }] });
export const inputTokens = (m: ModelInput): number[] => m.chunks.flatMap((c) => c.tokens);
export const floats = (data: readonly number[]): TensorData => ({ data: [...data], dtype: 'float32', shape: [data.length] });
export const ints = (data: readonly number[]): TensorData => ({ data: [...data], dtype: 'int64', shape: [data.length] });
