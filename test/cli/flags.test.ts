/** The CLI's flag help, allowed values and number conversion come from the schema and the registries. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ESTIMATOR_NAMES } from '../../src/advantage/index.ts';
import { STRATEGY_NAMES } from '../../src/allocate/index.ts';
import { CONFIG_FLAGS, rawConfig, settingHelp } from '../../src/cli/commands/train.ts';
import { UsageError } from '../../src/cli/io.ts';
import { configSettings } from '../../src/train/config-docs.ts';

test('every flag sets a schema setting, and its help is the setting’s description with every allowed value', () => {
  const settings = new Map(configSettings().map((s) => [s.path, s]));
  for (const [flag, path] of CONFIG_FLAGS) {
    const s = settings.get(path);
    assert.ok(s, `${flag}: no setting ${path}`);
    const help = settingHelp(path);
    assert.ok(help.startsWith(s.description), flag);
    for (const v of s.values ?? []) assert.ok(help.includes(v), `${flag} help lacks ${v}`);
  }
  for (const name of STRATEGY_NAMES) assert.ok(settingHelp('strategy.name').includes(name), name);
  for (const name of ESTIMATOR_NAMES) assert.ok(settingHelp('estimator').includes(name), name);
});

test('numeric flags become numbers (the schema says which), and a non-number is a usage error naming the flag', () => {
  const raw = rawConfig({ budget: '64', strategy: 'grpo', concurrency: '3' });
  assert.deepEqual(raw, { strategy: { budget: 64, name: 'grpo' }, engine: { concurrency: 3 } });
  assert.throws(() => rawConfig({ pool: 'many' }), (e: unknown) => e instanceof UsageError && e.message === '--pool many: expected a number');
});
