/**
 * A run's environment from its configuration: the kind's entry in src/env/registry.ts, built with
 * the run's turn limit. Training, the rollout service, `trace-rl eval` and export all build it here.
 */
import { buildEnvironment as buildFromSettings, type EnvironmentSetup } from '../env/registry.ts';
import type { TrainConfig } from './config.ts';

export type { EnvironmentSetup };

export function buildEnvironment(config: Pick<TrainConfig, 'env' | 'engine'>): Promise<EnvironmentSetup> {
  return buildFromSettings(config.env, { maxTurns: config.engine.maxTurns });
}
