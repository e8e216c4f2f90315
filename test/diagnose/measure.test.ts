/**
 * The diagnosis measure: hand-worked trees with known outcomes (exact V(1 − V), share, entropy and
 * cost per depth), and the real simulator through the rollout engine, checked against a plain
 * recomputation from its trees, against the spend it must have, and for determinism.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { contrastEstimate, depthRows, diagnose, shareNote, treeSamples } from '../../src/diagnose/index.ts';
import { Simulator } from '../../src/env/index.ts';
import { SimulatorPolicy } from '../../src/policy/index.ts';
import { addTurn, createTree, endTrajectory, getNode, root, type RolloutTree } from '../../src/tree/index.ts';
import { createRng } from '../../src/util/rng.ts';

const close = (a: number | null | undefined, b: number, what: string) =>
  assert.ok(a !== null && a !== undefined && Math.abs(a - b) < 1e-12, `${what}: ${a} ≠ ${b}`);

/** One trajectory below `from` in child slot `slot`: `turns` turns of `tokens` generated tokens each, then its reward. */
function trajectory(
  tree: RolloutTree,
  from: string,
  slot: number,
  origin: 'bare' | 'continuation',
  o: { turns: number; reward: number; tokens?: number; entropy?: number },
): string[] {
  const ids: string[] = [];
  let parent = from;
  for (let t = 0; t < o.turns; t++) {
    const turn = {
      thought: '',
      action: { type: 'search', input: '' },
      observation: '',
      generatedTokens: o.tokens ?? 10,
      ...(t === 0 && o.entropy !== undefined ? { entropy: o.entropy } : {}),
    };
    const n = addTurn(tree, parent, turn, { origin, slot: t === 0 ? slot : 0 });
    ids.push(n.id);
    parent = n.id;
  }
  endTrajectory(tree, parent, 'answer', o.reward);
  return ids;
}

test('V(1 − V) is estimated without bias: s(n − s)/(n(n − 1))', () => {
  close(contrastEstimate([1, 1, 0, 0]), 1 / 3, '2 of 4');
  close(contrastEstimate([1, 0]), 0.5, '1 of 2');
  close(contrastEstimate([1, 1, 1]), 0, 'all succeed');
  // E over Bernoulli(v) samples of n = 3: Σ_s C(3,s) v^s (1−v)^(3−s) · s(3−s)/6 = v(1 − v).
  const v = 0.3;
  const e = [0, 1, 2, 3].reduce((a, s) => a + [1, 3, 3, 1][s]! * v ** s * (1 - v) ** (3 - s) * ((s * (3 - s)) / 6), 0);
  close(e, v * (1 - v), 'unbiased');
  assert.throws(() => contrastEstimate([1]), RangeError);
});

test('hand-worked trees: per-depth V(1 − V), ended rollouts, open share, entropy and cost', () => {
  // Prompt p, k = 4. Bare rollout p/0 takes 3 turns (reward 1); the root's other rollouts: 1, 0, 0.
  const p = createTree('p', 'P?');
  const [p1, p2] = trajectory(p, 'p', 0, 'bare', { turns: 3, reward: 1, entropy: 1 });
  trajectory(p, 'p', 1, 'bare', { turns: 1, reward: 1, entropy: 1 });
  trajectory(p, 'p', 2, 'bare', { turns: 2, reward: 0, entropy: 1 });
  trajectory(p, 'p', 3, 'bare', { turns: 1, reward: 0, entropy: 1 });
  // After turn 1 of p/0: continuations 1, 0, 0, 0 of 2, 1, 1, 1 turns (entropy 0.5 at their first decision).
  [
    [1, 2],
    [0, 1],
    [0, 1],
    [0, 1],
  ].forEach(([reward, turns], i) => trajectory(p, p1!, i + 1, 'continuation', { turns: turns!, reward: reward!, tokens: 5, entropy: 0.5 }));
  // After turn 2: four successes of one turn each.
  for (let i = 0; i < 4; i++) trajectory(p, p2!, i + 1, 'continuation', { turns: 1, reward: 1, tokens: 7 });
  // Prompt q, k = 4: its expanded rollout q/0 ends after one turn (reward 0), so it has no prefix; the others succeed.
  const q = createTree('q', 'Q?');
  trajectory(q, 'q', 0, 'bare', { turns: 1, reward: 0 });
  for (let i = 1; i < 4; i++) trajectory(q, 'q', i, 'bare', { turns: 2, reward: 1 });

  const a = treeSamples(p, 1);
  const b = treeSamples(q, 1);
  assert.deepEqual([...a.endedAt], [[3, 1]]);
  assert.deepEqual([...b.endedAt], [[1, 1]]);
  const rows = depthRows(
    [...a.samples, ...b.samples],
    new Map([
      [3, 1],
      [1, 1],
    ]),
  );
  assert.deepEqual(
    rows.map((r) => [r.depth, r.prefixes, r.ended]),
    [
      [0, 2, 0],
      [1, 1, 1],
      [2, 1, 1],
      [3, 0, 2],
    ],
  );
  const [d0, d1, d2, d3] = rows as [(typeof rows)[0], (typeof rows)[0], (typeof rows)[0], (typeof rows)[0]];
  // Depth 0: p has 2 of 4 (1/3), q 3 of 4 (3·1/12 = 1/4): mean 7/24; plug-in (1/4 + 3/16)/2 = 7/32.
  close(d0.contrast, 7 / 24, 'depth 0 V(1−V)');
  close(d0.contrastPlugIn, 7 / 32, 'depth 0 plug-in');
  close(d0.meanV, (0.5 + 0.75) / 2, 'depth 0 mean V');
  close(d0.share, 1, 'depth 0 share');
  close(d0.entropy, 1, 'depth 0 entropy (q reports none)');
  close(d0.cost.turns, (3 + 1 + 2 + 1 + 1 + 2 + 2 + 2) / 8, 'depth 0 turns');
  close(d0.cost.tokens, 10 * (14 / 8), 'depth 0 tokens');
  // Depth 1: p/0's prefix has 1 of 4 (1·3/12 = 1/4); q/0 has ended (0): share (1/4 + 0)/2 ÷ 7/24 = 3/7.
  close(d1.contrast, 0.25, 'depth 1 V(1−V)');
  close(d1.share, 3 / 7, 'depth 1 share');
  close(d1.entropy, 0.5, 'depth 1 entropy');
  close(d1.cost.turns, 5 / 4, 'depth 1 turns');
  close(d1.cost.tokens, 25 / 4, 'depth 1 tokens');
  // Depth 2: all four continuations succeed: nothing open; depth 3: every expanded rollout has ended.
  close(d2.contrast, 0, 'depth 2');
  close(d2.share, 0, 'depth 2 share');
  assert.equal(d2.entropy, null);
  close(d2.cost.tokens, 7, 'depth 2 tokens');
  assert.equal(d3.contrast, null);
  close(d3.share, 0, 'depth 3 share');
});

test('the simulator through the engine: rows agree with a plain recomputation; spend and determinism', async () => {
  const run = async (concurrency: number) => {
    const env = new Simulator({ seed: 3, maxTurns: 5 });
    const prompts = env.prompts(6);
    const d = await diagnose({ prompts, env, policy: new SimulatorPolicy(env), k: 5, rollouts: 2, rng: createRng(11), settings: { maxTurns: 5, concurrency } });
    return { d, prompts };
  };
  const { d, prompts } = await run(8);
  // Plain loop: per prompt, the root's bare children; per expanded rollout, each node but the leaf.
  const at = new Map<number, { c: number[]; closed: number }>();
  const get = (t: number) => at.get(t) ?? (at.set(t, { c: [], closed: 0 }), at.get(t)!);
  const outcome = (tree: RolloutTree, id: string): number | undefined => {
    let n = getNode(tree, id);
    while (n.children.length) n = getNode(tree, n.children[0]!);
    return n.reward;
  };
  const vv = (rs: number[]) => {
    const s = rs.reduce((a, b) => a + b, 0);
    const n = rs.length;
    return (s * (n - s)) / (n * (n - 1));
  };
  let expectedTrajectories = 0;
  for (const tree of d.trees) {
    const bare = root(tree).children;
    assert.equal(bare.length, 5);
    get(0).c.push(vv(bare.map((id) => outcome(tree, id)!)));
    expectedTrajectories += 5;
    for (const first of bare.slice(0, 2)) {
      let n = getNode(tree, first);
      while (n.children.length) {
        const conts = n.children.filter((c) => getNode(tree, c).origin === 'continuation');
        assert.equal(conts.length, 5, `k continuations at ${n.id}`);
        expectedTrajectories += 5;
        get(n.depth).c.push(vv(conts.map((c) => outcome(tree, c)!)));
        n = getNode(tree, n.children[0]!);
      }
      for (let t = n.depth; t <= 5; t++) get(t).closed++;
    }
  }
  assert.equal(d.trees.length, prompts.length);
  assert.equal(d.spend.bare + d.spend.continuation, expectedTrajectories);
  const root0 = get(0).c.reduce((a, b) => a + b, 0) / get(0).c.length;
  for (const row of d.rows) {
    const e = get(row.depth);
    assert.equal(row.prefixes, e.c.length, `depth ${row.depth} prefixes`);
    assert.equal(row.ended, row.depth === 0 ? 0 : e.closed, `depth ${row.depth} ended`);
    if (e.c.length) close(row.contrast, e.c.reduce((a, b) => a + b, 0) / e.c.length, `depth ${row.depth} V(1−V)`);
    close(row.share, e.c.reduce((a, b) => a + b, 0) / (e.c.length + (row.depth ? e.closed : 0)) / root0, `depth ${row.depth} share`);
    // The simulator knows V exactly and its policy reports entropy.
    if (row.prefixes) assert.ok(row.trueContrast !== undefined && row.trueContrast !== null && row.entropy !== null);
  }
  close(d.rows[0]!.share, 1, 'depth-0 share');
  // Same seed, other concurrency: the same trees, so the same rows.
  const again = await run(1);
  assert.deepEqual(again.d.rows, d.rows);
});

test('an open share above 1 is explained (sampling noise: the true share is at most 1); none when every share is ≤ 1', () => {
  const rows = (shares: Array<number | null>) => ({ rows: shares.map((share, depth) => ({ depth, share })) }) as unknown as Parameters<typeof shareNote>[0];
  assert.deepEqual(shareNote(rows([1, 0.9, 0.4, null]), { k: 8, prompts: 20 }), []);
  const [note, ...rest] = shareNote(rows([1, 1.0412, 0.97, 1.2]), { k: 8, prompts: 20 });
  assert.equal(rest.length, 0);
  assert.match(
    note!,
    /^open share above 1 \(t = 1: 1\.041, t = 3: 1\.200\) is sampling noise: the true share is at most 1 .*k = 8 trajectories over 20 prompts/,
  );
});
