/**
 * The policies environment kinds bring, one entry per environment kind that has any, declared next to
 * each policy (simulator-policy.ts, bfcl-scripted-policy.ts, math-world-policy.ts). They are kept at
 * the policy level, not in the environment's entry, because environments do not depend on policies.
 */
import { defineFamily } from '../util/family.ts';
import type { EnvironmentSetup, EnvKind } from '../env/kind.ts';
import { envKinds } from '../env/registry.ts';
import { bfclPolicies } from './bfcl-scripted-policy.ts';
import type { EnvPolicies } from './kind.ts';
import { mathWorldPolicies } from './math-world-policy.ts';
import { simulatorPolicies } from './simulator-policy.ts';
import type { Policy } from './types.ts';

export const envPolicies = defineFamily<EnvPolicies>('environment with policies of its own', [simulatorPolicies, bfclPolicies, mathWorldPolicies]);

const own = (envKind: string) => (envPolicies.has(envKind) ? envPolicies.get(envKind) : undefined);

/** The environment's fixed policy, unless the configured kind is one written to replace it there. */
export function envFixedPolicy(envKind: string, setup: EnvironmentSetup, configured: string): Policy | undefined {
  const policies = own(envKind);
  return policies?.replacedBy?.includes(configured) ? undefined : policies?.fixed?.(setup);
}

/** The environment's own policy (fixed, else scripted), when it has one: what `policy.kind: scripted` means. */
export function envOwnPolicy(envKind: string, setup: EnvironmentSetup, envSettings: Record<string, unknown>): Policy | undefined {
  const policies = own(envKind);
  return policies?.fixed?.(setup) ?? policies?.scripted?.(setup, envSettings);
}

/**
 * Adds an environment kind defined outside this package (an example, a plugin) with the policies it
 * brings, in one call; before configurations are parsed.
 */
export function registerEnvKind(kind: EnvKind, policies?: Omit<EnvPolicies, 'name'>): void {
  envKinds.register(kind);
  if (policies) envPolicies.register({ name: kind.name, ...policies });
}
