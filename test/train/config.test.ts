import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { configReference, parseTrainConfig } from '../../src/train/index.ts';

test('docs/configuration.md is the schema’s own reference (regenerate with trace-rl config --docs)', () => {
  const docs = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
  assert.equal(docs, configReference());
});

test('a partial strategy is completed from the defaults; unknown strategy options fail', () => {
  const c = parseTrainConfig({ strategy: { name: 'grpo' } });
  assert.equal(c.strategy.name, 'grpo');
  assert.equal(c.strategy.budget, 192);
  assert.throws(() => parseTrainConfig({ strategy: { name: 'trace', budgte: 3 } }), /budgte/);
});
