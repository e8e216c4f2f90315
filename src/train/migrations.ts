/**
 * What a stored run's configuration meant when it was made, read today: numbered migrations, applied in
 * order to the stored JSON before it is parsed. Each reads one older stored form; a stored field whose
 * meaning changes gets a new migration here (and CONFIG_REVISION a new number when only the revision
 * tells the forms apart). A user's config never passes through them: there the old forms are errors.
 */
import { optionsFor, strategyOptionSchemas, type StrategyName } from '../allocate/options.ts';
import { storedEnvSettings } from '../env/registry.ts';
import { storedPolicySettings } from '../policy/registry.ts';

type Config = Record<string, unknown>;

interface Migration {
  n: number;
  /** The stored form it reads. */
  reads: string;
  apply(config: Config, revision: number): Config;
}

/** Every run stored so far that names no strategy was made while trace was the default. */
const STORED_DEFAULT_STRATEGY_NAME = 'trace';

const strategyOf = (c: Config): Record<string, unknown> | undefined =>
  typeof c.strategy === 'object' && c.strategy !== null ? (c.strategy as Record<string, unknown>) : c.strategy === undefined ? {} : undefined;

export const MIGRATIONS: readonly Migration[] = [
  {
    n: 1,
    reads: 'every env and policy kind’s settings, stored before each kind had a schema of its own',
    apply: (c) => ({
      ...c,
      ...('env' in c ? { env: storedEnvSettings(c.env) } : {}),
      ...('policy' in c ? { policy: storedPolicySettings(c.policy) } : {}),
    }),
  },
  {
    n: 2,
    reads: 'no strategy, or a strategy without a name: the default of its day, trace',
    apply: (c) => {
      const s = strategyOf(c);
      return s && s.name === undefined ? { ...c, strategy: { ...s, name: STORED_DEFAULT_STRATEGY_NAME } } : c;
    },
  },
  {
    n: 3,
    reads: 'every strategy’s defaults, stored before each strategy had its own options (grpo’s groupSize then was dapo’s)',
    apply: (c) => {
      const s = strategyOf(c);
      // Only the built-in strategies' configs were stored before they had their own options.
      if (!s || typeof s.name !== 'string' || !(s.name in strategyOptionSchemas)) return c;
      const name = s.name as StrategyName;
      const own = optionsFor(name, s) as Record<string, unknown>;
      if (name === 'grpo' && Object.keys(s).some((k) => k !== 'name' && !(k in own))) delete own.groupSize;
      return { ...c, strategy: { name, ...own } };
    },
  },
  {
    n: 4,
    reads: 'trace without a preset, stored before presets existed: the paper’s method',
    apply: (c) => {
      const s = strategyOf(c);
      return s && s.name === 'trace' && s.preset === undefined ? { ...c, strategy: { ...s, preset: 'paper' } } : c;
    },
  },
  {
    n: 5,
    reads: 'config revision 1: estimator trace (or none: its default) meant today’s trace-local',
    apply: (c, revision) => (revision < 2 && (c.estimator ?? 'trace') === 'trace' ? { ...c, estimator: 'trace-local' } : c),
  },
];

/** `stored` (a run's configuration of config revision `revision`) as today's configuration means it. */
export function migrateStoredConfig(stored: unknown, revision: number): unknown {
  if (typeof stored !== 'object' || stored === null || Array.isArray(stored)) return stored;
  return MIGRATIONS.reduce((c, m) => m.apply(c, revision), stored as Config);
}
