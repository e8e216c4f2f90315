/**
 * Policy flags of `trace-rl eval` and `rollout` checked by the policy kind's schema
 * (src/policy/registry.ts), so the allowed values live in one place; a bad value is reported under its
 * flag, e.g. `--base-url notaurl: not an http(s) URL; …`.
 */
import { policyConfigSchema, type PolicyConfig } from '../policy/registry.ts';
import { UsageError } from './io.ts';

/** `settings` parsed; `flags` names the flag of each settings field, for the message. */
export function policyFromFlags(settings: Record<string, unknown>, flags: Record<string, string>): PolicyConfig {
  const parsed = policyConfigSchema.safeParse(settings);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const field = String(issue.path[0] ?? 'kind');
  const flag = flags[field] ?? `policy.${field}`;
  const value = issue.path.reduce<unknown>((o, k) => (o as Record<PropertyKey, unknown> | undefined)?.[k], settings);
  const shown = value === undefined || Array.isArray(value) ? '' : ` ${String(value)}`;
  throw new UsageError(`${flag}${shown}: ${issue.message}`);
}
