import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Turn } from '../../src/tree/types.ts';
import { pathShare } from './path-share.ts';

const turn = (type: string, input: string): Turn => ({ thought: '', action: { type, input }, observation: '' });
/** A rollout that searched `path` and then answered; only the searches form its path. */
const rollout = (path: string[], reward: number) => ({ reward, turns: [...path.map((q) => turn('search', q)), turn('answer', `a${reward}`)] });

test('path share: 0 when success and failure took the same path, 1 when the path decides', () => {
  const coin = [...Array(6)].map((_, i) => rollout(['A', 'B'], i % 2));
  assert.equal(pathShare(coin), 0, 'a coin flip at the last step');
  const decided = [...[...Array(5)].map(() => rollout(['A'], 1)), ...[...Array(5)].map(() => rollout(['B'], 0))];
  assert.equal(pathShare(decided), 1);
});

test('path share: the ω² correction by hand, and NaN where it cannot be read', () => {
  // Path A: rewards 1, 1, 0; path B: 0, 0, 0. Mean 1/3; SST = 2 · (2/3)² + 4 · (1/3)² = 4/3;
  // SSB = 3 · (2/3 − 1/3)² + 3 · (0 − 1/3)² = 2/3; MSW = (4/3 − 2/3) / (6 − 2) = 1/6;
  // share = (2/3 − 1 · 1/6) / (4/3) = 3/8.
  const rs = [rollout(['A'], 1), rollout(['A'], 1), rollout(['A'], 0), rollout(['B'], 0), rollout(['B'], 0), rollout(['B'], 0)];
  assert.ok(Math.abs(pathShare(rs) - 3 / 8) < 1e-12);
  assert.ok(Number.isNaN(pathShare([rollout(['A'], 1), rollout(['B'], 0), rollout(['C'], 1)])), 'every rollout on its own path');
  assert.ok(Number.isNaN(pathShare([rollout(['A'], 1), rollout(['A'], 1), rollout(['A'], 1)])), 'no variance');
  assert.ok(Number.isNaN(pathShare([rollout(['A'], 1), rollout(['A'], 0)])), 'too few rollouts');
});
