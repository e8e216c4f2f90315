/**
 * The two server-environment kinds, `env.kind: openenv` and `env.kind: agentgym` (docs/environments.md
 * "Your environment as a server"): their settings (settings.ts) and their build (setup.ts, loaded when
 * a run builds one; see EnvKind.build).
 */
import { envKind } from '../kind.ts';
import { agentGymSettings, openEnvSettings, sessionsPerWorker } from './settings.ts';

export const openEnvKind = envKind('openenv', openEnvSettings, {
  forWorkers: sessionsPerWorker,
  build: async (s, context) => (await import('./setup.ts')).openEnvSetup(s, context),
});

export const agentGymKind = envKind('agentgym', agentGymSettings, {
  forWorkers: sessionsPerWorker,
  build: async (s, context) => (await import('./setup.ts')).agentGymSetup(s, context),
});
