import assert from 'node:assert/strict';
import { test } from 'node:test';
import { replay } from './guard-replay.ts';

const O = { explore: 0.25, maxShare: 0.75, alpha: 0.05 };

test('replay: an explore arm with twice grpo’s mixed prompts earns the share; a barren one stays at ε and costs ε of grpo’s', () => {
  const grpo = Array.from({ length: 30 }, () => 20);
  const rich = replay(
    grpo,
    grpo.map((x) => 2 * x),
    15_000,
    O,
  );
  assert.equal(rich.shares[0], 0.25);
  assert.equal(rich.shares[rich.shares.length - 1], 0.75);
  assert.ok(rich.guarded.slice(-1)[0]! === 0.25 * 20 + 0.75 * 40);
  const barren = replay(
    grpo,
    grpo.map(() => 0),
    15_000,
    O,
  );
  assert.ok(barren.shares.every((s) => s === 0.25));
  assert.ok(
    barren.guarded.every((g) => g === 15),
    'the worst case: (1 − ε) of grpo’s mixed prompts',
  );
});
