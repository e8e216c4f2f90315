/**
 * What one key holder can take of `serve --tinker`; each has a flag of `serve` (docs/tinker.md). Kept
 * apart from the routes, which load the trainer, so `serve`'s flags know the defaults without it.
 */
export interface TinkerLimits {
  /** Trainable models at once (`--tinker-max-models`; `unload_model` frees one). */
  models: number;
  /** Datums one model holds between optim_steps (`--tinker-max-pending-datums`). */
  pendingDatums: number;
  /** Results not yet retrieved (`--tinker-max-futures`). */
  futures: number;
  /** llama.cpp engines loaded for sampling, the base model's included (`--tinker-max-samplers`). */
  samplers: number;
  /** Saves kept per model and kind (`--tinker-keep-saves`). */
  savesPerModel: number;
  /** Saves kept on the server, every model and kind together (`--tinker-max-saves`); an unloaded model's go first. */
  saves: number;
  /** Tokens one forward_backward carries, and one model holds for its next optim_step (`--tinker-max-call-tokens`). */
  callTokens: number;
  /** What a forward_backward body may decode to after zstd (`--max-decoded-bytes`). */
  decodedBytes: number;
}

export const DEFAULT_TINKER_LIMITS: TinkerLimits = {
  models: 64,
  pendingDatums: 16_384,
  futures: 4096,
  samplers: 4,
  savesPerModel: 8,
  saves: 256,
  callTokens: 1 << 18,
  decodedBytes: 64 << 20,
};
