/**
 * One suite every estimator must pass (like Hono's shared router tests): invariants on random batches
 * built like TRACE's trees, plus agreement with plain-loop oracles.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildForest,
  createEstimator,
  createTrace,
  createTreepo,
  DEFAULT_PROMPT_TERM,
  estimatorNames,
  isPerNodeEstimator,
  TRACE_PROMPT_TERMS,
  type ForestNode,
  type LeafAdvantage,
} from '../../src/advantage/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { assertClose, assertSameAdvantages, byId, randomForest, shuffled } from './fixtures.ts';
import { oracleGrpo, oracleTrace, oracleTreeGrpo, oracleTreepo, oracleTreepoDistinct } from './oracle.ts';

const CASES = 60;
const estimate = (name: string, nodes: readonly ForestNode[]): LeafAdvantage[] => createEstimator(name).estimate(buildForest(nodes));
const shift = (nodes: readonly ForestNode[], by: number) => nodes.map((n) => (n.reward === undefined ? n : { ...n, reward: n.reward + by }));

for (const name of estimatorNames()) {
  describe(`estimator ${name}`, () => {
    test('one record per rewarded leaf; turns aligned with the path from the prompt', () => {
      for (let s = 0; s < CASES; s++) {
        const nodes = randomForest(createRng(s).fork('forest'), { failures: true });
        const out = estimate(name, nodes);
        const rewarded = nodes.filter((n) => n.reward !== undefined).map((n) => n.id);
        assert.deepEqual(
          out.map((l) => l.id),
          rewarded,
          `seed ${s}: leaves in input order`,
        );
        const parent = new Map(nodes.map((n) => [n.id, n.parent]));
        for (const l of out) {
          assert.equal(l.turns.length, l.path.length);
          assert.equal(l.path[l.path.length - 1], l.id);
          assert.equal(parent.get(l.path[0]) !== null && parent.get(parent.get(l.path[0])!) === null, true, 'path starts below a prompt');
          assert.ok(l.turns.every(Number.isFinite) && Number.isFinite(l.advantage));
          if (!isPerNodeEstimator(name))
            assert.ok(
              l.turns.every((t) => t === l.advantage),
              'outcome-only estimators broadcast the scalar',
            );
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
  const perTurn = (
    what: string,
    estimateTurns: (nodes: readonly ForestNode[]) => LeafAdvantage[],
    oracle: (nodes: readonly ForestNode[]) => Map<string, number[]>,
  ) =>
    test(what, () => {
      for (let s = 0; s < CASES; s++) {
        const nodes = randomForest(createRng(s).fork('forest'), { failures: true, continuous: s % 3 === 0 });
        const want = oracle(nodes);
        for (const l of estimateTurns(nodes)) {
          assert.equal(l.turns.length, want.get(l.id)!.length);
          l.turns.forEach((t, k) => assertClose(t, want.get(l.id)![k], 1e-9, `seed ${s} ${l.id} turn ${k}`));
        }
      }
    });
  perTurn(
    'trace-local (every turn)',
    (nodes) => estimate('trace-local', nodes),
    (nodes) => oracleTrace(nodes, 'none'),
  );
  perTurn(
    `trace, the default form (prompt term ${DEFAULT_PROMPT_TERM}; every turn)`,
    (nodes) => estimate('trace', nodes),
    (nodes) => oracleTrace(nodes, DEFAULT_PROMPT_TERM),
  );
  for (const term of TRACE_PROMPT_TERMS)
    perTurn(
      `trace, prompt term ${term} (every turn)`,
      (nodes) => createTrace({ promptTerm: term }).estimate(buildForest(nodes)),
      (nodes) => oracleTrace(nodes, term),
    );
});

describe('trace-specific properties', () => {
  test('without branch points below the prompts, every trace form equals grpo', () => {
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
      for (const term of TRACE_PROMPT_TERMS) {
        for (const l of createTrace({ promptTerm: term }).estimate(buildForest(nodes))) {
          l.turns.forEach((t) => assertClose(t, grpo.get(l.id)!.advantage, 1e-12, `seed ${s} ${term} ${l.id}`));
        }
      }
    }
  });

  /**
   * Σ over the leaves below anchor a of A(turn just below a on the leaf's path). The local comparison
   * sums to zero there (Σ_c n_c (V(c) − mean(G_a)) = 0), so what remains is the prompt term's total:
   * nothing for trace-local; at the prompt itself nothing for every form; below it n_a · z(V(a); prompt)
   * for `node` (z is affine in V and the n_c V(c) sum to n_a V(a)), and n_a · z(V(tree); prompt) for `tree`.
   */
  const anchorSums = (nodes: readonly ForestNode[], out: readonly LeafAdvantage[]) => {
    const parent = new Map(nodes.map((n) => [n.id, n.parent]));
    const kids = new Map<string, number>();
    const live = new Set(out.flatMap((l) => l.path));
    for (const id of live) kids.set(parent.get(id)!, (kids.get(parent.get(id)!) ?? 0) + 1);
    const sums = new Map<string, { total: number; leaves: LeafAdvantage[] }>();
    for (const l of out) {
      l.path.forEach((id, k) => {
        const p = parent.get(id)!;
        if (parent.get(p) !== null && (kids.get(p) ?? 0) < 2) return;
        const entry = sums.get(p) ?? { total: 0, leaves: [] };
        entry.total += l.turns[k];
        entry.leaves.push(l);
        sums.set(p, entry);
      });
    }
    return { parent, sums };
  };

  for (const term of ['none', 'node', 'tree'] as const) {
    test(`prompt term ${term}: credit at every anchor sums to the prompt term's total (zero for the local comparison)`, () => {
      for (let s = 0; s < CASES; s++) {
        const nodes = randomForest(createRng(s).fork('forest'), { failures: true, continuous: true });
        const out = createTrace({ promptTerm: term }).estimate(buildForest(nodes));
        const reward = new Map(nodes.map((n) => [n.id, n.reward]));
        const { parent, sums } = anchorSums(nodes, out);
        const rewardsBelow = (pick: (l: LeafAdvantage) => boolean) => out.filter(pick).map((l) => reward.get(l.id)!);
        for (const [anchor, { total, leaves }] of sums) {
          const atPrompt = parent.get(anchor) === null;
          // A one-leaf prompt has no comparison (mean 0, std 1), so its single value is r itself.
          if (atPrompt && leaves.length === 1) continue;
          let want = 0;
          if (!atPrompt && term !== 'none') {
            const tree = leaves[0].path[0];
            const prompt = rewardsBelow((l) => parent.get(l.path[0]) === parent.get(tree));
            const value = term === 'node' ? mean(leaves.map((l) => reward.get(l.id)!)) : mean(rewardsBelow((l) => l.path[0] === tree));
            want = leaves.length * zOf(value, prompt);
          }
          assertClose(total, want, 1e-9, `seed ${s} anchor ${anchor}`);
        }
      }
    });
  }
});

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
/** GRPO's z (sample std, ε = 1e-6; a one-leaf group has mean 0, std 1). */
function zOf(x: number, group: readonly number[]): number {
  if (group.length === 1) return x / (1 + 1e-6);
  const m = mean(group);
  const sd = Math.sqrt(group.reduce((a, r) => a + (r - m) ** 2, 0) / (group.length - 1));
  return (x - m) / (sd + 1e-6);
}
