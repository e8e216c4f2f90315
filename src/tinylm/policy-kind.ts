/**
 * The tiny LM's policy kind (policy.kind tiny-lm), registered into the policy family when this module
 * is imported (train/config.ts does, so every configuration accepts it). Light on purpose:
 * node-llama-cpp and jax-js are loaded only when a policy is built.
 */
import path from 'node:path';
import { z } from 'zod';
import { envKinds } from '../env/registry.ts';
import { tokenTrainingFields } from '../policy/kind-fields.ts';
import { PolicyConfigError, policyKind } from '../policy/kind.ts';
import { policyKinds } from '../policy/registry.ts';
import type { TrainablePolicy } from '../policy/types.ts';
import { sequencesFor } from './sequences.ts';

const tinyLm = z.strictObject({
  kind: z.literal('tiny-lm'),
  model: z
    .string({ error: 'policy.kind tiny-lm needs policy.model: a GGUF file whose vocabulary is the world’s (docs/tinylm.md says how to build one)' })
    .describe('tiny-lm: the GGUF to start from (its vocabulary must be the world’s; docs/tinylm.md says how to build one).'),
  ...tokenTrainingFields(0.0003),
});

export type TinyLmSettings = z.output<typeof tinyLm>;

declare module '../policy/kind.ts' {
  interface PolicyPlugins {
    'tiny-lm': TinyLmSettings;
  }
}

/** The GGUF checked before it is read whole (a device or a header bomb is refused); the error names the file as `label` does. */
async function checkModel(file: string, label: string): Promise<void> {
  const { checkGgufFile, GgufFileError } = await import('./gguf-file.ts');
  try {
    checkGgufFile(file);
  } catch (e) {
    if (e instanceof GgufFileError) throw new PolicyConfigError(`${label} ${file}: ${e.message}`);
    throw e;
  }
}

/** The tiny LM from its GGUF, one llama.cpp sequence per call in flight. */
export async function loadTinyLm(file: string, options: { concurrency: number; temperature?: number }): Promise<TrainablePolicy> {
  await checkModel(file, 'policy.model (--model)');
  const { readFileSync } = await import('node:fs');
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(readFileSync(file));
  } catch {
    throw new PolicyConfigError(`policy.model (--model) ${file}: cannot read that file`);
  }
  const { TinyLmPolicy } = await import('./tiny-lm-policy.ts');
  const { initJax } = await import('../util/jax.ts');
  await initJax();
  return TinyLmPolicy.fromBytes(
    bytes,
    { sequences: sequencesFor(options.concurrency), ...(options.temperature !== undefined ? { temperature: options.temperature } : {}) },
    file,
  );
}

export const tinyLmKind = policyKind('tiny-lm', tinyLm, {
  trainable: true,
  async build(settings, { envKind, concurrency }) {
    const refusal = envKinds.has(envKind) ? envKinds.get(envKind).notForLanguageModels : undefined;
    if (refusal) throw new PolicyConfigError(`policy.kind: ${refusal}`);
    return loadTinyLm(settings.model, { concurrency, temperature: settings.temperature });
  },
  // Before a training run starts: the flag's name alone, as the command line gave it.
  checkBeforeRun: (s) => checkModel(s.model, '--model'),
  evaluatesRuns: true,
  fromFlags(flags, run, sampled) {
    const model = flags.model ?? (run?.policy.model as string | undefined);
    if (!model) throw new PolicyConfigError('--policy tiny-lm needs --model FILE.gguf (or --run DIR of a tiny-lm training run)');
    return { kind: 'tiny-lm', model: path.resolve(model), ...sampled };
  },
  spec: (s, run) => ({ kind: 'tiny-lm', model: s.model, ...(run ? { run: run.dir, step: run.step } : {}) }),
  // Sequences are not part of the spec: the results do not depend on them, so a resumed evaluation may change --concurrency.
  describe: (s, { run, concurrency }) =>
    `${run ? `tiny LM of ${run.dir} after step ${run.step} (shape of ${s.model})` : `tiny LM ${s.model}`} on llama.cpp (${sequencesFor(concurrency)} sequences batched)`,
});

if (!policyKinds.has(tinyLmKind.name)) policyKinds.register(tinyLmKind as never);
