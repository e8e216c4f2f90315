/**
 * A run's environment from its configuration: the kind's entry in src/env/registry.ts, built with
 * the run's turn limit. Training, the rollout service, `trace-rl eval` and export all build it here;
 * a rollout worker with the coordinator's prompts (EnvBuildContext.prompts).
 */
import { buildEnvironment as buildFromSettings, type EnvironmentSetup } from '../env/registry.ts';
import type { EnvBuildContext } from '../env/kind.ts';
import type { TrainConfig } from './config.ts';

export type { EnvironmentSetup };

export function buildEnvironment(config: Pick<TrainConfig, 'env' | 'engine'>, prompts?: EnvBuildContext['prompts']): Promise<EnvironmentSetup> {
  return buildFromSettings(config.env, { maxTurns: config.engine.maxTurns, ...(prompts ? { prompts } : {}) });
}
