/** The CLI's flag help, allowed values and number conversion come from the schema and the registries. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimatorNames } from '../../src/advantage/index.ts';
import { strategies } from '../../src/allocate/index.ts';
import { evalConfig, type EvalFlags } from '../../src/cli/commands/eval.ts';
import { CONFIG_FLAGS, rawConfig, settingHelp } from '../../src/cli/config-flags.ts';
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
  for (const name of strategies.names()) assert.ok(settingHelp('strategy.name').includes(name), name);
  for (const name of estimatorNames()) assert.ok(settingHelp('estimator').includes(name), name);
});

test('numeric flags become numbers (the schema says which), and a non-number is a usage error naming the flag', () => {
  const raw = rawConfig({ budget: '64', strategy: 'grpo', concurrency: '3' });
  assert.deepEqual(raw, { strategy: { budget: 64, name: 'grpo' }, engine: { concurrency: 3 } });
  assert.throws(
    () => rawConfig({ pool: 'many' }),
    (e: unknown) => e instanceof UsageError && e.message === '--pool "many": expected a whole number in decimal digits',
  );
  // Decimal digits only: Number() would read these as 16, 1000 and 0.
  for (const text of ['0x10', '1e3', '', ' '])
    assert.throws(
      () => rawConfig({ steps: text }),
      (e: unknown) => e instanceof UsageError && e.message.startsWith(`--steps "${text}"`),
    );
});

test('--set pairs: JSON values parsed, other text kept as a string, a later pair wins, no "=" is a usage error', () => {
  const raw = rawConfig({
    strategy: 'grpo',
    set: ['predictor.replaySteps=8', 'env.successRule=em', 'engine.retry={"attempts":2}', 'predictor.replaySteps=4', 'arm=a=b'],
  });
  assert.deepEqual(raw, {
    strategy: { name: 'grpo' },
    predictor: { replaySteps: 4 },
    env: { successRule: 'em' },
    engine: { retry: { attempts: 2 } },
    arm: 'a=b',
  });
  for (const pair of ['predictor.replaySteps', '=8']) {
    assert.throws(
      () => rawConfig({ set: [pair] }),
      (e: unknown) => e instanceof UsageError && e.message === `--set ${pair}: expected path=value, e.g. --set predictor.replaySteps=8`,
    );
  }
});

test('train and eval read --set the same way (one parser)', () => {
  const pairs = ['env.questions=30', 'env.kind=simulator'];
  const viaEval = evalConfig({ policy: 'embedded', seed: '1', samples: '1', split: 'all', set: pairs } as unknown as EvalFlags, { engine: {}, temperature: 0 });
  const viaTrain = rawConfig({ set: pairs });
  assert.deepEqual({ kind: viaEval.env.kind, questions: (viaEval.env as { questions?: number }).questions }, (viaTrain as { env: object }).env);
  assert.throws(
    () => evalConfig({ policy: 'embedded', seed: '1', samples: '1', set: ['env.kind'] } as unknown as EvalFlags, { engine: {}, temperature: 0 }),
    (e: unknown) => e instanceof UsageError && e.message === '--set env.kind: expected path=value, e.g. --set env.successRule=em',
  );
});
