/**
 * One suite every estimator must pass (like Hono's shared router tests): invariants on random batches
 * built like TRACE's trees, plus agreement with plain-loop oracles.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildForest, createEstimator, createTreepo, ESTIMATOR_NAMES, type ForestNode, type LeafAdvantage } from '../../src/advantage/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { assertClose, assertSameAdvantages, byId, randomForest, shuffled } from './fixtures.ts';
import { oracleGrpo, oracleTrace, oracleTreeGrpo, oracleTreepo, oracleTreepoDistinct } from './oracle.ts';

const CASES = 60;
const estimate = (name: string, nodes: readonly ForestNode[]): LeafAdvantage[] => createEstimator(name).estimate(buildForest(nodes));
const shift = (nodes: readonly ForestNode[], by: number) => nodes.map((n) => (n.reward === undefined ? n : { ...n, reward: n.reward + by }));

for (const name of ESTIMATOR_NAMES) {
  describe(`estimator ${name}`, () => {
    test('one record per rewarded leaf; turns aligned with the path from the prompt', () => {
      for (let s = 0; s < CASES; s++) {
        const nodes = randomForest(createRng(s).fork('forest'), { failures: true });
        const out = estimate(name, nodes);
        const rewarded = nodes.filter((n) => n.reward !== undefined).map((n) => n.id);
        assert.deepEqual(out.map((l) => l.id), rewarded, `seed ${s}: leaves in input order`);
        const parent = new Map(nodes.map((n) => [n.id, n.parent]));
        for (const l of out) {
          assert.equal(l.turns.length, l.path.length);
          assert.equal(l.path[l.path.length - 1], l.id);
          assert.equal(parent.get(l.path[0]) !== null && parent.get(parent.get(l.path[0])!) === null, true, 'path starts below a prompt');
          assert.ok(l.turns.every(Number.isFinite) && Number.isFinite(l.advantage));
          if (name !== 'trace') assert.ok(l.turns.every((t) => t === l.advantage), 'outcome-only estimators broadcast the scalar');
        }
      }
    });

    test('node order in the input does not matter', () => {
      for (let s = 0; s < CASES; s++) {
        const rng = createRng(s);
        const nodes = randomForest(rng.fork('forest'), { continuous: s % 2 === 0 });
        assertSameAdvantages(estimate(name, shuffled(rng.fork('shuffle'), nodes)), estimate(name, nodes), 1e-9, `seed ${s}`);
      }
    });

    test('failed trajectories (leaves without reward) change nothing', () => {
      for (let s = 0; s < CASES; s++) {
        const withFailures = randomForest(createRng(s).fork('forest'), { failures: true });
        const failed = new Set<string>();
        // Drop every node whose subtree holds no rewarded leaf: those are exactly the failed branches.
        const kids = new Map<string, string[]>();
        for (const n of withFailures) if (n.parent) kids.set(n.parent, [...(kids.get(n.parent) ?? []), n.id]);
        const byIdNode = new Map(withFailures.map((n) => [n.id, n]));
        const hasReward = (id: string): boolean => byIdNode.get(id)!.reward !== undefined || (kids.get(id) ?? []).some(hasReward);
        for (const n of withFailures) if (n.parent !== null && !hasReward(n.id)) failed.add(n.id);
        const clean = withFailures.filter((n) => !failed.has(n.id));
        if (failed.size === 0) continue;
        assertSameAdvantages(estimate(name, withFailures), estimate(name, clean), 1e-9, `seed ${s}`);
      }
    });

    test('all-equal rewards give zero advantages (no one-leaf groups)', () => {
      for (let s = 0; s < CASES; s++) {
        const nodes = randomForest(createRng(s).fork('forest'), { noSingletons: true }).map((n) => (n.reward === undefined ? n : { ...n, reward: 0.3 }));
        for (const l of estimate(name, nodes)) {
          assertClose(l.advantage, 0, 1e-9, `seed ${s} ${l.id}`);
          l.turns.forEach((t, k) => assertClose(t, 0, 1e-9, `seed ${s} ${l.id} turn ${k}`));
        }
      }
    });

    test('a uniform shift of rewards leaves normalised advantages unchanged (no one-leaf groups)', () => {
      for (let s = 0; s < CASES; s++) {
        const nodes = randomForest(createRng(s).fork('forest'), { noSingletons: true, continuous: s % 2 === 1 });
        assertSameAdvantages(estimate(name, shift(nodes, 1000)), estimate(name, nodes), 1e-6, `seed ${s}`);
      }
    });
  });
}

describe('agreement with plain-loop oracles on random batches', () => {
  const scalar = { grpo: oracleGrpo, 'tree-grpo': oracleTreeGrpo, treepo: oracleTreepo } as const;
  for (const [name, oracle] of Object.entries(scalar)) {
    test(name, () => {
      for (let s = 0; s < CASES; s++) {
        const nodes = randomForest(createRng(s).fork('forest'), { failures: true, continuous: s % 3 === 0 });
        const want = oracle(nodes);
        for (const l of estimate(name, nodes)) assertClose(l.advantage, want.get(l.id)!, 1e-9, `seed ${s} ${l.id}`);
      }
    });
  }
  test('treepo, groups: distinct', () => {
    for (let s = 0; s < CASES; s++) {
      const nodes = randomForest(createRng(s).fork('forest'), { failures: true, continuous: s % 3 === 0 });
      const want = oracleTreepoDistinct(nodes);
      for (const l of createTreepo({ groups: 'distinct' }).estimate(buildForest(nodes))) assertClose(l.advantage, want.get(l.id)!, 1e-9, `seed ${s} ${l.id}`);
    }
  });
  test('trace (every turn)', () => {
    for (let s = 0; s < CASES; s++) {
      const nodes = randomForest(createRng(s).fork('forest'), { failures: true, continuous: s % 3 === 0 });
      const want = oracleTrace(nodes);
      for (const l of estimate('trace', nodes)) {
        assert.equal(l.turns.length, want.get(l.id)!.length);
        l.turns.forEach((t, k) => assertClose(t, want.get(l.id)![k], 1e-9, `seed ${s} ${l.id} turn ${k}`));
      }
    }
  });
});

describe('trace-specific properties', () => {
  test('without branch points below the prompts, trace equals grpo', () => {
    for (let s = 0; s < CASES; s++) {
      const rng = createRng(s);
      const nodes: ForestNode[] = [];
      for (let p = 0; p < 3; p++) {
        nodes.push({ id: `q${p}`, parent: null });
        for (let j = 0, m = 1 + rng.int(5); j < m; j++) {
          let parent = `q${p}`;
          for (let t = 0, T = 1 + rng.int(4); t < T; t++) {
            const id = `q${p}/${j}/${t}`;
            nodes.push(t === T - 1 ? { id, parent, reward: rng.int(2) } : { id, parent });
            parent = id;
          }
        }
      }
      const grpo = byId(estimate('grpo', nodes));
      for (const l of estimate('trace', nodes)) {
        l.turns.forEach((t) => assertClose(t, grpo.get(l.id)!.advantage, 1e-12, `seed ${s} ${l.id}`));
      }
    }
  });

  test('credit sums to zero at every anchor: Σ over leaves below a of A(turn just below a) = 0', () => {
    for (let s = 0; s < CASES; s++) {
      const nodes = randomForest(createRng(s).fork('forest'), { failures: true, continuous: true });
      const out = estimate('trace', nodes);
      const parent = new Map(nodes.map((n) => [n.id, n.parent]));
      const kids = new Map<string, number>();
      const live = new Set(out.flatMap((l) => l.path));
      for (const id of live) kids.set(parent.get(id)!, (kids.get(parent.get(id)!) ?? 0) + 1);
      const sums = new Map<string, number>();
      for (const l of out) {
        l.path.forEach((id, k) => {
          const p = parent.get(id)!;
          const anchor = parent.get(p) === null || (kids.get(p) ?? 0) >= 2;
          if (anchor) sums.set(p, (sums.get(p) ?? 0) + l.turns[k]);
        });
      }
      for (const [anchor, total] of sums) {
        // A one-leaf prompt has no comparison (mean 0, std 1), so its single value is r itself.
        const one = out.filter((l) => parent.get(l.path[0]) === anchor);
        if (one.length === 1 && parent.get(anchor) === null) continue;
        assertClose(total, 0, 1e-9, `seed ${s} anchor ${anchor}`);
      }
    }
  });
});
