import { test } from 'node:test';
import { buildForest, createEstimator, createTrace, createTreepo, DEFAULT_PROMPT_TERM, type TracePromptTerm } from '../../src/advantage/index.ts';
import { assertClose, byId, E1, E2 } from './fixtures.ts';

// Hand values ignore ε = 1e-6 in (std + ε), which moves them by ~2e-6; 1e-5 still separates every
// alternative convention (population std, other groupings) by orders of magnitude.
const TOL = 1e-5;
/** Runs the named estimator on a fixture; results keyed by leaf id. */
function run(name: string, nodes = E1) {
  return byId(createEstimator(name).estimate(buildForest(nodes)));
}

/*
 * E1's prompt group: rewards {1,0,1,0,1}, mean 0.6, deviations ±: 0.4 (×3), −0.6 (×2),
 * Σ dev² = 3·0.16 + 2·0.36 = 1.2, sample variance 1.2/4 = 0.3, std √0.3 = 0.5477226.
 *   success: 0.4 / 0.5477226 = 0.7302967      failure: −0.6 / 0.5477226 = −1.0954451
 */
test('grpo on E1: one z over the prompt, broadcast to every turn', () => {
  const r = run('grpo');
  assertClose(r.get('a1')!.advantage, 0.7302967, TOL, 'a1');
  assertClose(r.get('a21')!.advantage, -1.0954451, TOL, 'a21');
  assertClose(r.get('a3')!.advantage, 0.7302967, TOL, 'a3');
  assertClose(r.get('b1')!.advantage, -1.0954451, TOL, 'b1');
  assertClose(r.get('c')!.advantage, 0.7302967, TOL, 'c');
  const a21 = r.get('a21')!;
  if (a21.path.join() !== 'a,a2,a21' || a21.turns.some((t) => t !== a21.advantage)) throw new Error(`a21 turns ${a21.turns}`);
});

/*
 * Tree-GRPO on E1: trees are the prompt's children a, b, c.
 * tree a = {1,0,1}: mean 2/3, Σ dev² = 1/9 + 4/9 + 1/9 = 2/3, variance 1/3, std 0.5773503;
 *   z(1) = (1/3)/0.5773503 = 0.5773503, z(0) = −(2/3)/0.5773503 = −1.1547005.
 * tree b = {0} and tree c = {1} are one-leaf groups: mean 0, std 1, so z = r (0 and 1).
 * a1 = 0.7302967 + 0.5773503 = 1.3076470; a21 = −1.0954451 − 1.1547005 = −2.2501456;
 * b1 = −1.0954451 + 0 = −1.0954451;        c = 0.7302967 + 1 = 1.7302967.
 */
test('tree-grpo on E1: z over the prompt plus z over the leaf’s tree', () => {
  const r = run('tree-grpo');
  assertClose(r.get('a1')!.advantage, 1.307647, TOL, 'a1');
  assertClose(r.get('a3')!.advantage, 1.307647, TOL, 'a3');
  assertClose(r.get('a21')!.advantage, -2.2501456, TOL, 'a21');
  assertClose(r.get('b1')!.advantage, -1.0954451, TOL, 'b1');
  assertClose(r.get('c')!.advantage, 1.7302967, TOL, 'c');
});

/*
 * TreePO on E1. Raw = mean over distinct ancestor groups of (r − group mean):
 *   a1: prompt 1 − 0.6 = 0.4; group a (3 leaves, mean 2/3): 1/3        → 0.3666667
 *   a3: same as a1                                                       → 0.3666667
 *   a21: prompt −0.6; group a −2/3; group a2 has one leaf (skipped)     → −0.6333333
 *   b1: prompt −0.6; group b has one leaf (skipped)                     → −0.6
 *   c: prompt 0.4 only                                                   → 0.4
 * Whitening with token weights 4, 6, 2, 2, 3 (N = 17):
 *   mean = (4·0.3666667 − 6·0.6333333 + 2·0.3666667 − 2·0.6 + 3·0.4)/17 = −1.6/17 = −0.0941176
 *   Σ w (x − mean)² = 4·0.2123222 + 6·0.2907535 + 2·0.2123222 + 2·0.2559170 + 3·0.2441522 = 4.2627447
 *   variance = 4.2627447/17 · 17/16 = 0.2664215, std 0.5161603
 *   a1, a3: 0.4607843/0.5161603 = 0.8927153;  a21: −0.5392157/0.5161603 = −1.0446669
 *   b1: −0.5058824/0.5161603 = −0.9800875;     c: 0.4941176/0.5161603 = 0.9572947
 */
test('treepo on E1: ancestor-group average, then token-weighted whitening', () => {
  const r = run('treepo');
  assertClose(r.get('a1')!.advantage, 0.8927153, TOL, 'a1');
  assertClose(r.get('a3')!.advantage, 0.8927153, TOL, 'a3');
  assertClose(r.get('a21')!.advantage, -1.0446669, TOL, 'a21');
  assertClose(r.get('b1')!.advantage, -0.9800875, TOL, 'b1');
  assertClose(r.get('c')!.advantage, 0.9572947, TOL, 'c');
});

/*
 * TRACE on E1. Anchors: q (the prompt) and a (three live children). a2 and b have one child each.
 *   turn a   : anchor q, branch a,  V = 2/3 → (2/3 − 0.6)/0.5477226 = 0.1217161
 *   turn a1  : anchor a, branch a1, V = 1   → (1 − 2/3)/0.5773503   = 0.5773503
 *   turn a2  : anchor a, branch a2, V = 0   → −(2/3)/0.5773503      = −1.1547005
 *   turn a21 : anchor a (a2 is no anchor), branch a2 → −1.1547005
 *   turn b, b1: anchor q, branch b, V = 0   → −0.6/0.5477226       = −1.0954451
 *   turn c   : anchor q, branch c, V = 1    → 0.4/0.5477226        = 0.7302967
 */
test('trace-local on E1: each turn is compared at the deepest anchor above it', () => {
  const r = run('trace-local');
  const expect: Record<string, number[]> = {
    a1: [0.1217161, 0.5773503],
    a21: [0.1217161, -1.1547005, -1.1547005],
    a3: [0.1217161, 0.5773503],
    b1: [-1.0954451, -1.0954451],
    c: [0.7302967],
  };
  for (const [id, turns] of Object.entries(expect)) {
    const l = r.get(id)!;
    turns.forEach((t, k) => assertClose(l.turns[k], t, TOL, `${id} turn ${k}`));
    assertClose(l.advantage, turns[turns.length - 1], TOL, `${id} scalar`);
  }
});

/*
 * E2, two prompts. p1 = {1,0}: mean 0.5, std √0.5 = 0.7071068 → x1 0.7071068, x2 −0.7071068.
 * p2 = {1}: one-leaf group, mean 0, std 1 → y = 1.
 * tree-grpo: x1's tree is {x1} alone → +1; x2's → +0; y's tree {y} → +1:
 *   x1 = 1.7071068, x2 = −0.7071068, y = 2.
 * treepo raw: x1 0.5, x2 −0.5, y 1 (one-leaf prompt: r − 0). Lengths 1, N = 3, mean 1/3,
 *   Σ dev² = 1/36 + 25/36 + 16/36 = 7/6, variance 7/6/2 = 7/12, std 0.7637626:
 *   x1 0.2182179, x2 −1.0910895, y 0.8728716.
 * trace: p1 is an anchor → x1 ±0.7071068; p2's only path y0 → y is compared at p2 with mean 0, std 1 → 1, 1.
 */
test('E2: groups never mix prompts; one-leaf prompts follow verl (mean 0, std 1)', () => {
  const g = run('grpo', E2);
  assertClose(g.get('x1')!.advantage, 0.7071068, TOL, 'grpo x1');
  assertClose(g.get('x2')!.advantage, -0.7071068, TOL, 'grpo x2');
  assertClose(g.get('y')!.advantage, 1, TOL, 'grpo y');
  const t = run('tree-grpo', E2);
  assertClose(t.get('x1')!.advantage, 1.7071068, TOL, 'tree-grpo x1');
  assertClose(t.get('x2')!.advantage, -0.7071068, TOL, 'tree-grpo x2');
  assertClose(t.get('y')!.advantage, 2, TOL, 'tree-grpo y');
  const p = run('treepo', E2);
  assertClose(p.get('x1')!.advantage, 0.2182179, TOL, 'treepo x1');
  assertClose(p.get('x2')!.advantage, -1.0910895, TOL, 'treepo x2');
  assertClose(p.get('y')!.advantage, 0.8728716, TOL, 'treepo y');
  const c = run('trace', E2);
  assertClose(c.get('x1')!.advantage, 0.7071068, TOL, 'trace x1');
  const y = c.get('y')!;
  assertClose(y.turns[0], 1, TOL, 'trace y0');
  assertClose(y.turns[1], 1, TOL, 'trace y');
});

/*
 * E3, a chain above a branch point: q ── a ── b ─┬─ b1 [1]     and   q ── c [0]   (lengths 1)
 *                                               └─ b2 [0]
 * Nodes a and b hold the same two leaves. With `groups: 'distinct'` the group {b1, b2} counts once,
 * not once per turn. Prompt {1,0,0}: mean 1/3.  Raw b1 = ((1 − 1/3) + (1 − 0.5))/2 = 0.5833333,
 * b2 = ((0 − 1/3) + (0 − 0.5))/2 = −0.4166667, c = −1/3 (prompt group only).
 * Whitening (N = 3): mean −0.0555556, variance (0.6388889² + 0.3611111² + 0.2777778²)/2 = 0.3078704,
 * std 0.5548607 → b1 1.1514402, b2 −0.6508140, c −0.5006262.
 * (Counting the group once per turn, TreePO's rule, gives other values: the next test.)
 */
const E3 = [
  { id: 'q', parent: null },
  { id: 'a', parent: 'q' },
  { id: 'b', parent: 'a' },
  { id: 'b1', parent: 'b', reward: 1 },
  { id: 'b2', parent: 'b', reward: 0 },
  { id: 'c', parent: 'q', reward: 0 },
];

test('treepo (groups: distinct) on E3: a group repeated along a chain of turns counts once', () => {
  const r = byId(createTreepo({ groups: 'distinct' }).estimate(buildForest(E3)));
  assertClose(r.get('b1')!.advantage, 1.1514402, TOL, 'b1');
  assertClose(r.get('b2')!.advantage, -0.650814, TOL, 'b2');
  assertClose(r.get('c')!.advantage, -0.5006262, TOL, 'c');
});

/*
 * E3 with TreePO's released rule (the default): depths 0 (q), 1 (a), 2 (b) each give a term; depth 3
 * is the leaf alone (skipped). Raw b1 = ((1 − 1/3) + (1 − 0.5) + (1 − 0.5))/3 = 0.5555556,
 * b2 = ((0 − 1/3) + (0 − 0.5) + (0 − 0.5))/3 = −0.4444444, c = −1/3.
 * Whitening (N = 3): mean −0.0740741, deviations 0.6296296, −0.3703704, −0.2592593,
 * variance (0.3964335 + 0.1371742 + 0.0672154)/2 = 0.3004115, std 0.5480981
 * → b1 1.1487535, b2 −0.6757374, c −0.4730162 (distinct: 1.1514402, −0.6508140, −0.5006262).
 */
test("treepo on E3: TreePO's rule counts the chain's group once per turn, unlike groups: distinct", () => {
  const r = run('treepo', E3);
  assertClose(r.get('b1')!.advantage, 1.1487535, TOL, 'b1');
  assertClose(r.get('b2')!.advantage, -0.6757374, TOL, 'b2');
  assertClose(r.get('c')!.advantage, -0.4730162, TOL, 'c');
});

/*
 * advantageScale none (Dr. GRPO) on E1: the same deviations, never divided by a std.
 *   grpo: success 1 − 0.6 = 0.4, failure −0.6.
 *   tree-grpo: a1, a3 = 0.4 + 1/3 = 0.7333333; a21 = −0.6 − 2/3 = −1.2666667; b1 = −0.6 + 0 (one-leaf
 *     tree: mean 0, so r = 0); c = 0.4 + 1 = 1.4 (one-leaf tree c: r − 0 = 1).
 *   trace-local: turn a 2/3 − 0.6 = 0.0666667; a1 1 − 2/3 = 0.3333333; a2, a21 −0.6666667; b, b1 −0.6; c 0.4.
 *   trace (prompt term tree): below a, + (V(a) − 0.6) = +0.0666667: a1 0.4, a2 and a21 −0.6.
 * A lopsided group is where the two scales part: E1's failures weigh −1.10 with the std, −0.6 without.
 */
test('advantageScale none on E1: deviations from the group mean, unscaled, for grpo, tree-grpo, trace-local and trace', () => {
  const none = (name: string) => byId(createEstimator(name, { scale: 'none' }).estimate(buildForest(E1)));
  const grpo = none('grpo');
  for (const [id, v] of Object.entries({ a1: 0.4, a21: -0.6, a3: 0.4, b1: -0.6, c: 0.4 })) assertClose(grpo.get(id)!.advantage, v, 1e-12, `grpo ${id}`);
  const treeGrpo = none('tree-grpo');
  for (const [id, v] of Object.entries({ a1: 0.7333333, a21: -1.2666667, a3: 0.7333333, b1: -0.6, c: 1.4 }))
    assertClose(treeGrpo.get(id)!.advantage, v, 1e-6, `tree-grpo ${id}`);
  const expect: Record<string, Record<string, number[]>> = {
    'trace-local': { a1: [0.0666667, 0.3333333], a21: [0.0666667, -0.6666667, -0.6666667], a3: [0.0666667, 0.3333333], b1: [-0.6, -0.6], c: [0.4] },
    trace: { a1: [0.0666667, 0.4], a21: [0.0666667, -0.6, -0.6], a3: [0.0666667, 0.4], b1: [-0.6, -0.6], c: [0.4] },
  };
  for (const [name, leaves] of Object.entries(expect)) {
    const r = none(name);
    for (const [id, turns] of Object.entries(leaves)) turns.forEach((t, k) => assertClose(r.get(id)!.turns[k], t, 1e-6, `${name} ${id} turn ${k}`));
  }
});

test('advantageScale none is refused for treepo, which whitens by definition', () => {
  let message = '';
  try {
    createEstimator('treepo', { scale: 'none' });
  } catch (e) {
    message = (e as Error).message;
  }
  if (!/treepo whitens/.test(message)) throw new Error(`expected a refusal naming treepo, got "${message}"`);
});

/*
 * The prompt-level term of issue 33 on E1. Only turns below the branch point a differ between forms;
 * turns a, b, b1 and c hang below the prompt's own comparison and keep their trace-local values.
 * Prompt group: mean 0.6, std 0.5477226; group a = {1, 0, 1}: mean 2/3, std 0.5773503.
 *   local L: a1, a3 (1 − 2/3)/0.5773503 = 0.5773503;  a2, a21 −(2/3)/0.5773503 = −1.1547005
 *   tree      + z(V(a) = 2/3; prompt) = 0.1217161:      a1, a3 0.6990664;  a2, a21 −1.0329844
 *   node      + z(V(c); prompt), c = a1 / a2 / a3:      a1, a3 0.5773503 + 0.7302967 = 1.3076470;
 *                                                       a2, a21 −1.1547005 − 1.0954451 = −2.2501456
 *   ancestors mean of the comparisons at q and at a:    a1, a3 (0.1217161 + 0.5773503)/2 = 0.3495332;
 *                                                       a2, a21 (0.1217161 − 1.1547005)/2 = −0.5164922
 */
const E1_ABOVE = { a: 0.1217161, b: -1.0954451, c: 0.7302967 };
const E1_BELOW: Record<string, { a1: number; a2: number }> = {
  none: { a1: 0.5773503, a2: -1.1547005 },
  tree: { a1: 0.6990664, a2: -1.0329844 },
  node: { a1: 1.307647, a2: -2.2501456 },
  ancestors: { a1: 0.3495332, a2: -0.5164922 },
};

test('trace prompt terms on E1: only turns below a branch point differ', () => {
  for (const [term, below] of Object.entries(E1_BELOW)) {
    const r = byId(createTrace({ promptTerm: term as TracePromptTerm }).estimate(buildForest(E1)));
    const expect: Record<string, number[]> = {
      a1: [E1_ABOVE.a, below.a1],
      a21: [E1_ABOVE.a, below.a2, below.a2],
      a3: [E1_ABOVE.a, below.a1],
      b1: [E1_ABOVE.b, E1_ABOVE.b],
      c: [E1_ABOVE.c],
    };
    for (const [id, turns] of Object.entries(expect)) turns.forEach((t, k) => assertClose(r.get(id)!.turns[k], t, TOL, `${term} ${id} turn ${k}`));
  }
});

/*
 * E4, a branch point below a branch point, where `node` and tree-grpo part:
 *
 *   q ─┬─ a ─┬─ a1 ─┬─ a11 [1]
 *      │     │      └─ a12 [0]
 *      │     └─ a2 [0]
 *      └─ b [1]
 *
 * Prompt {1, 0, 0, 1}: mean 0.5, std √(1/3) = 0.5773503. Anchors q, a (a1 and a2 live), a1.
 *   a  : at q, V(a) = 1/3  → −0.1666667/0.5773503 = −0.2886751     b : at q, V = 1 → 0.8660254
 *   a1 : at a ({1,0,0}: mean 1/3, std 0.5773503), V = 0.5 → 0.2886751
 *   a2 : at a, V = 0 → −0.5773503
 *   a11, a12: at a1 ({1, 0}: mean 0.5, std 0.7071068) → ±0.7071068
 * Forms below the first branch point (a1, a11, a12, a2):
 *   tree:      + z(V(a); prompt) = −0.2886751 → a1 0, a11 0.4184317, a12 −0.9957819, a2 −0.8660254
 *   node:      + z(V(c); prompt): a1 + 0 = 0.2886751; a11 + 0.8660254 = 1.5731322; a12 − 0.8660254 = −1.5731322;
 *              a2 − 0.8660254 = −1.4433757
 *   ancestors: a1 (−0.2886751 + 0.2886751)/2 = 0; a11 (−0.2886751 + 0.2886751 + 0.7071068)/3 = 0.2357023;
 *              a12 −0.2357023; a2 (−0.2886751 − 0.5773503)/2 = −0.4330127
 * tree-grpo gives a11 z(1; prompt) + z(1; tree a) = 0.8660254 + 1.1547005 = 2.0207259 on every turn,
 * node 1.5731322 on the last turn and −0.2886751 on the first: per-turn credit, not a broadcast.
 */
const E4 = [
  { id: 'q', parent: null },
  { id: 'a', parent: 'q' },
  { id: 'a1', parent: 'a' },
  { id: 'a11', parent: 'a1', reward: 1 },
  { id: 'a12', parent: 'a1', reward: 0 },
  { id: 'a2', parent: 'a', reward: 0 },
  { id: 'b', parent: 'q', reward: 1 },
];

test('trace prompt terms on E4: nested branch points', () => {
  const expect: Record<string, Record<string, number[]>> = {
    none: { a11: [-0.2886751, 0.2886751, 0.7071068], a12: [-0.2886751, 0.2886751, -0.7071068], a2: [-0.2886751, -0.5773503], b: [0.8660254] },
    tree: { a11: [-0.2886751, 0, 0.4184317], a12: [-0.2886751, 0, -0.9957819], a2: [-0.2886751, -0.8660254], b: [0.8660254] },
    node: { a11: [-0.2886751, 0.2886751, 1.5731322], a12: [-0.2886751, 0.2886751, -1.5731322], a2: [-0.2886751, -1.4433757], b: [0.8660254] },
    ancestors: { a11: [-0.2886751, 0, 0.2357023], a12: [-0.2886751, 0, -0.2357023], a2: [-0.2886751, -0.4330127], b: [0.8660254] },
  };
  for (const [term, leaves] of Object.entries(expect)) {
    const r = byId(createTrace({ promptTerm: term as TracePromptTerm }).estimate(buildForest(E4)));
    for (const [id, turns] of Object.entries(leaves)) {
      turns.forEach((t, k) => assertClose(r.get(id)!.turns[k], t, TOL, `${term} ${id} turn ${k}`));
      assertClose(r.get(id)!.advantage, turns[turns.length - 1], TOL, `${term} ${id} scalar`);
    }
  }
  assertClose(run('tree-grpo', E4).get('a11')!.advantage, 2.0207259, TOL, 'tree-grpo a11');
});

test('trace-local is the local rule and trace is the chosen form (prompt term tree), by name', () => {
  assertClose(run('trace', E4).get('a11')!.advantage, 0.4184317, TOL, 'trace a11 (tree form, hand-worked above)');
  const local = run('trace-local', E4);
  const chosen = byId(createTrace({ promptTerm: DEFAULT_PROMPT_TERM }).estimate(buildForest(E4)));
  const named = run('trace', E4);
  assertClose(local.get('a11')!.advantage, 0.7071068, TOL, 'trace-local a11');
  assertClose(named.get('a11')!.advantage, chosen.get('a11')!.advantage, 1e-15, 'trace a11');
  if (createEstimator('trace-local').name !== 'trace-local' || createEstimator('trace').name !== 'trace') throw new Error('estimator names');
});
