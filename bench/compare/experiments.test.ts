import assert from 'node:assert/strict';
import { test } from 'node:test';
import { arms, DEFAULT_SCALE, EXPERIMENTS, runConfig } from './experiments.ts';
import { parseTrainConfig } from '../../src/train/index.ts';

// bench/compare validates a run's config only when it starts it; a frozen experiment whose arm the schema
// has since come to reject (e.g. a root-solver option beside roots: uniform) would fail hours into a run.
test('every arm of every bench/compare experiment is a valid train configuration; labels are unique per experiment', () => {
  const scale = { ...DEFAULT_SCALE, steps: 12, pool: 32, budget: 48, envQuestions: 2500, cheapPredictorForBaselines: true };
  for (const experiment of EXPERIMENTS) {
    const list = arms(experiment);
    assert.equal(new Set(list.map((a) => a.label)).size, list.length, `${experiment}: duplicate labels`);
    for (const arm of list) assert.doesNotThrow(() => parseTrainConfig(runConfig(arm, 0, scale)), `${experiment}/${arm.label}`);
  }
});
