import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MIGRATIONS, migrateStoredConfig } from '../../src/train/migrations.ts';
import { parseTrainConfig, storedTrainConfig } from '../../src/train/index.ts';

test('stored-config migrations are numbered 1…n in the order they apply, each saying what it reads', () => {
  assert.deepEqual(
    MIGRATIONS.map((m) => m.n),
    MIGRATIONS.map((_, i) => i + 1),
  );
  for (const m of MIGRATIONS) assert.ok(m.reads.length > 20, `migration ${m.n} says what it reads`);
});

test('a config of revision 1 meant trace-local by estimator trace (or by none); revision 2 means trace', () => {
  const store = (config: object, revision: number) => ({ config: () => config, configRevision: () => revision });
  assert.equal(storedTrainConfig(store({ estimator: 'trace' }, 1)).estimator, 'trace-local');
  assert.equal(storedTrainConfig(store({}, 1)).estimator, 'trace-local');
  assert.equal(storedTrainConfig(store({ estimator: 'grpo' }, 1)).estimator, 'grpo');
  assert.equal(storedTrainConfig(store({ estimator: 'trace' }, 2)).estimator, 'trace');
});

test('a stored config without a strategy ran the paper’s trace; a user’s config without one gets today’s default', () => {
  const stored = migrateStoredConfig({}, 2) as { strategy: { name: string; preset: string } };
  assert.equal(stored.strategy.name, 'trace');
  assert.equal(stored.strategy.preset, 'paper');
  assert.equal(parseTrainConfig({}).strategy.name, 'defensive');
  // Migrations leave what is not an object alone: the schema reports it.
  assert.equal(migrateStoredConfig('nonsense', 2), 'nonsense');
});
