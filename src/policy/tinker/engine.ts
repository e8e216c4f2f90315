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
