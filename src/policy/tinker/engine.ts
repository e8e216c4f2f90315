/**
 * What a Tinker-compatible engine says about itself, read once before any rollout: the models it
 * serves and their context length (`GET /api/v1/get_server_capabilities`, the official SDK's
 * `SupportedModel.max_context_length`), and what a created model is (`POST /api/v1/get_info`:
 * `is_lora`, `lora_rank`). Everything here is the engine's answer, so it is parsed with bounds.
 */
import { z } from 'zod';
import { PolicyConfigError } from '../kind.ts';

export const capabilitiesSchema = z.looseObject({
  supported_models: z
    .array(
      z.looseObject({
        model_name: z.string().max(512).nullish(),
        max_context_length: z.number().int().positive().nullish(),
      }),
    )
    .max(4096),
});
export type Capabilities = z.infer<typeof capabilitiesSchema>;

export const modelInfoSchema = z.looseObject({
  model_id: z.string().max(512).optional(),
  is_lora: z.boolean().nullish(),
  lora_rank: z.number().int().nullish(),
  // SkyRL answers the LoRA rank inside model_data (rank 0: full weights).
  model_data: z.looseObject({ lora_config: z.looseObject({ rank: z.number().int().nullish() }).nullish() }).nullish(),
});
export type ModelInfo = z.infer<typeof modelInfoSchema>;

/** `policy.model`'s default: the engine's only model, whatever its name. */
export const ANY_MODEL = 'default';

/**
 * The served model `wanted` names (the engine's only one for `default`), refused before any rollout
 * when the engine does not serve it, naming what it serves. An engine that lists no models is taken
 * at its word for any name (its create_model will say).
 */
export function servedModel(caps: Capabilities, wanted: string, where: string): { name: string; contextLength?: number } {
  const models = caps.supported_models.filter((m): m is typeof m & { model_name: string } => typeof m.model_name === 'string' && m.model_name !== '');
  if (models.length === 0) return { name: wanted };
  const names = models.map((m) => m.model_name);
  const hit = wanted === ANY_MODEL && models.length === 1 ? models[0]! : models.find((m) => m.model_name === wanted);
  if (!hit) {
    const list = names.length > 12 ? `${names.slice(0, 12).join(', ')} … (${names.length} in all)` : names.join(', ');
    throw new PolicyConfigError(
      `${where}/api/v1/get_server_capabilities: the engine does not serve policy.model ${wanted}; it serves ${list}. Set policy.model to one of them (--set policy.model=${names[0]})`,
    );
  }
  return { name: hit.model_name, ...(hit.max_context_length ? { contextLength: hit.max_context_length } : {}) };
}

/**
 * The context length every sequence must fit: the engine's where it says (its capabilities, else its
 * /tokenize's max_model_len), else `policy.contextLength`; a setting above the engine's is refused (it
 * would let a trajectory outgrow the model), and an engine that says nothing needs the setting.
 */
export function contextLength(engine: number | undefined, setting: number | undefined, where: string, model: string): number {
  if (engine !== undefined && setting !== undefined && setting > engine)
    throw new PolicyConfigError(
      `policy.contextLength ${setting} is more than the ${engine} tokens the engine at ${where} reports for ${model}; drop the setting or set it to ${engine} or less`,
    );
  const length = setting ?? engine;
  if (length === undefined)
    throw new PolicyConfigError(
      `the engine at ${where} does not report ${model}'s context length (get_server_capabilities has no max_context_length); set policy.contextLength to it (--set policy.contextLength=N)`,
    );
  return length;
}

/** Whether the engine says this model trains its full weights (no LoRA): the SDK's `is_lora: false`, or SkyRL's LoRA rank 0. */
export const trainsFullWeights = (info: ModelInfo): boolean => info.is_lora === false || info.model_data?.lora_config?.rank === 0;

/**
 * A full-weights engine (verl_tinker; trace-rl serve --tinker) trains at the rate given: the LoRA
 * default would wreck a large model, so it must be chosen (refused before any rollout otherwise).
 */
export function checkRate(full: boolean, learningRate: number, loraDefault: number, where: string, model: string): void {
  if (full && learningRate === loraDefault)
    throw new PolicyConfigError(
      `${where}/api/v1/get_info: the engine trains ${model}'s full weights (no LoRA), and policy.learningRate is the LoRA default ${loraDefault}, which would wreck a full fine-tune of a large model; set policy.learningRate for full weights (e.g. 1e-6 for a billion-parameter model; trace-rl serve --tinker's tiny LM learns at 0.003)`,
    );
}

/**
 * Advantages for an engine that averages each datum's loss over its tokens and the step's datums
 * (SkyRL's JAX backend: weights default to 1 on every target token): datum i's are multiplied by its
 * token count n_i and the datum count N, so (1/N)·(1/n_i)·n_i·N·A = A, the sum's gradient.
 */
export function scaleForSequenceMean<D extends { loss_fn_inputs: Record<string, { data: number[] }> }>(data: readonly D[]): D[] {
  return data.map((d) => {
    const adv = d.loss_fn_inputs.advantages!;
    const scale = d.loss_fn_inputs.target_tokens!.data.length * data.length;
    return { ...d, loss_fn_inputs: { ...d.loss_fn_inputs, advantages: { ...adv, data: adv.data.map((a) => a * scale) } } };
  });
}
