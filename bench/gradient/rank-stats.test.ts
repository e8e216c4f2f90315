import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pearson, ranks, spearman, topHalfShare } from './rank-stats.ts';

test('ranks: ties share their mean rank', () => {
  assert.deepEqual(ranks([10, 30, 20, 30]), [0, 2.5, 1, 2.5]);
});

test('spearman: 1 for any increasing map, −1 reversed, the textbook value with ties', () => {
  const x = [0.1, 0.4, 0.2, 0.9, 0.5];
  assert.equal(
    spearman(
      x,
      x.map((v) => v ** 3),
    ),
    1,
  );
  assert.equal(
    spearman(
      x,
      x.map((v) => -Math.exp(v)),
    ),
    -1,
  );
  // Ranks [0, 1.5, 1.5, 3] against [0, 1, 2, 3]: deviations [−1.5, 0, 0, 1.5] and [−1.5, −0.5, 0.5, 1.5], so 4.5 / √(4.5 · 5) = 0.948…
  assert.ok(Math.abs(spearman([1, 2, 2, 3], [1, 2, 3, 4]) - 4.5 / Math.sqrt(4.5 * 5)) < 1e-12);
  assert.ok(Number.isNaN(pearson([1, 1, 1], [1, 2, 3])), 'a constant side has no correlation');
});

test('topHalfShare: the share of Σ t in the half the value ranks highest, ties by position', () => {
  assert.equal(topHalfShare([4, 3, 2, 1], [1, 1, 1, 1]), 0.5);
  assert.equal(topHalfShare([1, 2, 3, 4], [0, 0, 1, 3]), 1);
  assert.equal(topHalfShare([1, 1, 1, 1], [3, 1, 0, 0]), 1, 'equal values: the first positions');
});
