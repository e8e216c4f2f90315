/**
 * The environment family: one entry per kind, as the strategy family has one per name
 * (src/allocate/registry.ts). Each kind's folder declares its entry (kind.ts: schema, build, metrics,
 * …; see EnvKind); this module lists the built-in ones and answers the configuration's questions. A
 * setting of another kind fails while parsing, under its own path. Adding a kind is one folder and one
 * line in BUILT_IN below (or `envKinds.register` for a kind outside this package).
 *
 * Policies that belong to an environment (the simulator's, BFCL's and the math world's scripted
 * ones) live in src/policy and declare their kind there (src/policy/env-policies.ts): environments do
 * not depend on policies.
 */
import { z } from 'zod';
import { defineFamily, discriminatedSchema } from '../util/family.ts';
import { hasField, knownFields } from '../util/known-fields.ts';
import { bfclKind } from './bfcl/kind.ts';
import type { EnvBuildContext, EnvironmentSetup, EnvKind } from './kind.ts';
import { mathKind } from './math/kind.ts';
import { mathWorldKind } from './math/world/kind.ts';
import { ACCURACY, type TrajectoryMetrics } from './metrics.ts';
import { qaKind } from './qa/kind.ts';
import { agentGymKind, openEnvKind } from './remote/kind.ts';
import { simulatorKind } from './simulator/kind.ts';
import { worldKind } from './world/kind.ts';

export type { EnvBuildContext, EnvironmentSetup, EnvKind } from './kind.ts';

const BUILT_IN = [worldKind, simulatorKind, qaKind, bfclKind, mathKind, mathWorldKind, openEnvKind, agentGymKind] as const;

/** The settings of a built-in kind, defaults filled (config.env). */
export type EnvConfig = z.output<(typeof BUILT_IN)[number]['schema']>;
export type EnvKindName = EnvConfig['kind'];
export const ENV_KIND_NAMES = BUILT_IN.map((k) => k.name) as EnvKindName[];
export const DEFAULT_ENV_KIND: EnvKindName = 'world';

/** Every environment kind; `register` adds one defined outside src/env (an example, a plugin), before configurations are parsed. */
export const envKinds = defineFamily<EnvKind>('environment kind', BUILT_IN as unknown as EnvKind[]);

/**
 * `env:` of a run configuration: one kind's settings (kind world when not given), discriminated by
 * `kind`.
 */
export const envConfigSchema = z.preprocess(
  (v) => (v === undefined ? { kind: DEFAULT_ENV_KIND } : typeof v === 'object' && v !== null && !('kind' in v) ? { kind: DEFAULT_ENV_KIND, ...v } : v),
  discriminatedSchema(envKinds, 'kind'),
) as unknown as z.ZodType<EnvConfig, unknown>;

/** The environment a configuration's `env:` names, built for a run with `maxTurns` turns. */
export async function buildEnvironment(settings: { kind: string }, context: EnvBuildContext): Promise<EnvironmentSetup> {
  return envKinds.get(settings.kind).build(settings, context);
}

/** What evaluation measures per trajectory in environments of `kind` (any other name: accuracy). */
export function trajectoryMetricsOf(kind: string): TrajectoryMetrics {
  return (envKinds.has(kind) ? envKinds.get(kind).metrics : undefined) ?? ACCURACY;
}

/** The kind's settings of a stored run: fields it does not take (older runs stored every kind's) dropped. */
export function storedEnvSettings(settings: unknown): unknown {
  const kind = (settings as { kind?: unknown } | null)?.kind;
  if (typeof kind !== 'string' || !envKinds.has(kind)) return settings;
  return knownFields(envKinds.get(kind).schema, settings);
}

/** The kinds that take a setting (a dotted path inside `env`): for the message when another kind is given it. */
export function envKindsTaking(field: string): string[] {
  return envKinds
    .entries()
    .filter((k) => hasField(k.schema, field))
    .map((k) => k.name);
}
