/**
 * The parts a worker process of the split scale bench builds (split-client.ts): the same ScaleEnv and
 * OpenAIPolicy in completions mode as the in-process client, against the scripted server's port.
 */
import { OpenAIPolicy } from '../../src/policy/index.ts';
import type { StepParts } from '../../src/rollout/split/index.ts';
import { ScaleEnv } from './script.ts';

export function buildStepParts(args: unknown): StepParts {
  const { port } = args as { port: number };
  const policy = new OpenAIPolicy({ baseURLs: [`http://127.0.0.1:${port}/v1`], model: 'scale', mode: 'completions', extras: 'vllm' });
  return { env: new ScaleEnv() as StepParts['env'], policy };
}
