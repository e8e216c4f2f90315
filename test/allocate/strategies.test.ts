import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ZodError } from 'zod';
import {
  strategies,
  budgetProblem,
  createStrategy,
  evenPrefixes,
  optionsFor,
  parseStrategyConfig,
  strategyFromConfig,
  type StrategyName,
} from '../../src/allocate/index.ts';
import type { PrefixCandidate, RootCandidate, StepStart, Strategy } from '../../src/allocate/types.ts';
import { createRng, type Rng } from '../../src/util/rng.ts';

/** A pool with everything any strategy may read: v, true p, history. */
function pool(n: number, rng: Rng): RootCandidate[] {
  return Array.from({ length: n }, (_, i) => {
    const p = rng.next();
    const trials = rng.int(5);
    let successes = 0;
    for (let t = 0; t < trials; t++) successes += rng.next() < p ? 1 : 0;
    return { promptId: `q${i}`, v: Math.min(1, Math.max(0, p + (rng.next() - 0.5) * 0.3)), p, history: { successes, trials } };
  });
}

function prefixesFor(promptId: string, m: number, rng: Rng): PrefixCandidate[] {
  const out: PrefixCandidate[] = [];
  for (let j = 0; j < m; j++) {
    const r = rng.next() < 0.5 ? 1 : 0;
    for (let t = 1; t <= 3; t++) out.push({ id: `${promptId}/${j}/${t}`, q: rng.next(), r, depth: t, entropy: rng.next() * 3, p: rng.next() });
  }
  return out;
}

interface StepTrace {
  rounds: Array<Array<[string, number]>>;
  prefixes: Array<Array<[string, number]>>;
  bare: number;
  continuations: number;
}

/** Drives a strategy through one step the way the engine does, with simulated Bernoulli(p) outcomes. */
function simulateStep(strategy: Strategy, candidates: RootCandidate[], seed: number): StepTrace {
  const rng = createRng(seed);
  const results = new Map<string, number[]>();
  const trace: StepTrace = { rounds: [], prefixes: [], bare: 0, continuations: 0 };
  const firstM = new Map<string, number>();
  const cap = strategy.cap;
  const rounds = strategy.roots.rounds === 'until-empty' ? 100 : 1;
  for (let round = 0; round < rounds; round++) {
    const plan = strategy.roots.plan({ candidates, round, remaining: cap - trace.bare, results, rng: rng.fork(`roots/${round}`) });
    if (plan.size === 0) break;
    trace.rounds.push([...plan]);
    for (const [id, m] of plan) {
      const c = candidates.find((x) => x.promptId === id);
      assert.ok(c, `planRoots returned unknown prompt ${id}`);
      assert.ok(Number.isInteger(m) && m >= 1, `m = ${m} for ${id}`);
      trace.bare += m;
      const rewards = results.get(id) ?? [];
      for (let k = 0; k < m; k++) rewards.push(rng.next() < c.p! ? 1 : 0);
      results.set(id, rewards);
      if (!firstM.has(id)) firstM.set(id, m);
    }
  }
  for (const [id, m] of firstM) {
    const budget = strategy.prefixes?.continuationBudget(m) ?? 0;
    const prefixes = prefixesFor(id, m, rng.fork(`cands/${id}`));
    // As the engine: a prefix planner is asked only when there is something to place.
    const plan =
      strategy.prefixes && budget > 0
        ? strategy.prefixes.plan({ promptId: id, m, prefixes, budget, rng: rng.fork(`prefix/${id}`) })
        : new Map<string, number>();
    let total = 0;
    for (const [pid, K] of plan) {
      assert.ok(
        prefixes.some((c) => c.id === pid),
        `unknown prefix ${pid}`,
      );
      assert.ok(Number.isInteger(K) && K >= 1, `K = ${K}`);
      total += K;
    }
    assert.ok(total <= budget, `${total} continuations > budget ${budget}`);
    trace.continuations += total;
    trace.prefixes.push([...plan]);
  }
  return trace;
}

const base = { budget: 150, continuations: 2, min: 2, max: 8, groupSize: 4 };

/** The options of `base` (and `extra`) that strategy `name` takes. */
const make = (name: StrategyName, options: Record<string, unknown> = base) => createStrategy(name, optionsFor(name, options));

/** Round 0 of a strategy's roots with its whole budget left. */
function rootsOf(strategy: Strategy, candidates: readonly RootCandidate[]): Map<string, number> {
  return strategy.roots.plan({ candidates, round: 0, remaining: strategy.cap, results: new Map(), rng: createRng(0) });
}

/** Every strategy, plus the ablation variants of trace (uniform roots and/or uniform prefixes). */
const VARIANTS: Array<{ name: StrategyName; label: string; extra: object }> = [
  ...(strategies.names() as StrategyName[]).map((name) => ({ name, label: name, extra: {} })),
  { name: 'trace', label: 'trace roots=uniform', extra: { roots: 'uniform' } },
  { name: 'trace', label: 'trace prefixes=uniform', extra: { prefixes: 'uniform' } },
  { name: 'trace', label: 'trace roots=uniform prefixes=uniform', extra: { roots: 'uniform', prefixes: 'uniform' } },
  { name: 'oracle', label: 'oracle roots=uniform', extra: { roots: 'uniform' } },
];

for (const { name, label, extra } of VARIANTS) {
  test(`shared suite: ${label} stays within budget, respects bounds, is deterministic`, () => {
    for (const [n, budget] of [
      [40, 150],
      [5, 150],
      [100, 31],
      [1, 7],
      [0, 20],
    ] as const) {
      const options = { ...base, ...extra, budget };
      const strategy = make(name, options);
      const cap = strategy.cap;
      const candidates = pool(n, createRng(n * 1000 + budget));
      const a = simulateStep(strategy, candidates, 99);
      assert.ok(a.bare + a.continuations <= cap, `${name}: spent ${a.bare}+${a.continuations} > cap ${cap}`);
      if (name !== 'dapo') assert.ok(cap <= budget, `${name}: cap ${cap} above B`);
      if (['trace', 'oracle', 'pcl', 'knapsack'].includes(name) && !('roots' in extra)) {
        for (const [, m] of a.rounds.flat()) assert.ok(m >= options.min && m <= options.max, `${name}: m = ${m} outside bounds`);
      }
      const b = simulateStep(make(name, options), candidates, 99);
      assert.deepEqual(b, a, `${name} is not deterministic for a seed`);
    }
  });
}

test('tree strategies spend (1 + N) · M ≤ B; root-only strategies spend all of B when they can', () => {
  const candidates = pool(40, createRng(1));
  for (const [name, extra] of [
    ['trace', {}],
    ['oracle', {}],
    ['random-tree', {}],
    ['entropy', {}],
    ['trace', { roots: 'uniform', prefixes: 'uniform' }],
    ['trace', { prefixes: 'uniform' }],
  ] as const) {
    const s = make(name, { ...base, ...extra });
    const t = simulateStep(s, candidates, 3);
    assert.equal(t.bare, Math.floor(150 / 3), `${name} roots`);
    assert.equal(t.continuations, 2 * t.bare, `${name} continuations (every prompt has prefixes here)`);
  }
  for (const name of ['grpo', 'pcl', 'knapsack'] as const) {
    const t = simulateStep(make(name), candidates, 3);
    assert.equal(t.bare, 150, name);
    assert.equal(t.continuations, 0, name);
  }
});

test('grpo: uniform group sizes over the batch, the remainder to the first prompts', () => {
  const candidates = pool(10, createRng(2));
  const plan = rootsOf(createStrategy('grpo', { budget: 43 }), candidates);
  assert.deepEqual([...plan.values()], [5, 5, 5, 4, 4, 4, 4, 4, 4, 4]);
  const batch = rootsOf(createStrategy('grpo', { budget: 43, batchSize: 4 }), candidates);
  assert.deepEqual([...batch.keys()], ['q0', 'q1', 'q2', 'q3']);
});

test('grpo groupSize: G rollouts on ⌊B / G⌋ prompts of a larger pool; a pool too small gets the rest round-robin', () => {
  const candidates = pool(40, createRng(3));
  const plan = rootsOf(createStrategy('grpo', { budget: 43, groupSize: 8 }), candidates);
  assert.deepEqual([...plan.keys()], ['q0', 'q1', 'q2', 'q3', 'q4']);
  assert.deepEqual([...plan.values()], [9, 9, 9, 8, 8]);
  assert.equal(simulateStep(createStrategy('grpo', { budget: 43, groupSize: 8 }), candidates, 1).bare, 43);
  // Three prompts cannot hold 43 in groups of 8: every trajectory is still spent, none silently saved.
  const small = rootsOf(createStrategy('grpo', { budget: 43, groupSize: 8 }), candidates.slice(0, 3));
  assert.deepEqual([...small.values()], [15, 14, 14]);
  // Without groupSize the plan is the one the default always gave (G = ⌊B / pool⌋).
  assert.deepEqual(rootsOf(createStrategy('grpo', { budget: 120 }), candidates), rootsOf(createStrategy('grpo', { budget: 120, groupSize: 3 }), candidates));
  assert.match(budgetProblem(parseStrategyConfig({ name: 'grpo', budget: 6, groupSize: 8 }), 64) ?? '', /below one grpo group \(groupSize 8\)/);
});

test('dapo: rounds continue until enough mixed groups, never past its cap', () => {
  const candidates = Array.from({ length: 30 }, (_, i) => ({ promptId: `q${i}`, v: 0.5, p: i % 3 === 0 ? 0.5 : 1 }));
  const s = createStrategy('dapo', { budget: 40, groupSize: 4, batchSize: 5, dapoRoundPrompts: 5, dapoMaxTrajectories: 100 });
  const t = simulateStep(s, candidates, 7);
  assert.ok(t.rounds.length > 1, 'needed more than one round');
  assert.ok(t.bare <= 100);
  // p = 1 prompts never mix; only every third prompt can, so it needs about 15 prompts (60 rollouts) for 5 mixed.
  const tight = simulateStep(createStrategy('dapo', { budget: 40, groupSize: 4, batchSize: 5, dapoMaxTrajectories: 22 }), candidates, 7);
  assert.equal(tight.bare, 20, 'a round that would pass the cap is cut to whole groups that fit');
});

test('trace follows the predictor; oracle follows the truth', () => {
  const candidates: RootCandidate[] = [
    { promptId: 'easy', v: 0.5, p: 0.99 },
    { promptId: 'hard', v: 0.02, p: 0.5 },
  ];
  const opts = { budget: 6, continuations: 2, min: 2, max: 2 };
  assert.deepEqual([...rootsOf(createStrategy('trace', opts), candidates)], [['easy', 2]]);
  assert.deepEqual([...rootsOf(createStrategy('oracle', opts), candidates)], [['hard', 2]]);
  assert.throws(() => rootsOf(createStrategy('oracle', opts), [{ promptId: 'x', v: 0.5 }]), /true success probability/);
});

test('oracle truthSamples: k: the root solver sees p through k fresh outcomes, v = (1 + s) / (2 + k)', () => {
  // 'solved' (p = 1) is always seen as v = 3/4 with k = 2; 'close' (p = 0.9) as 3/4 when both outcomes
  // succeed (0.81 of steps: a tie, and ties go to the lower index), else 1/2 or 1/4, whose mixed chance
  // beats 3/4's or ties it. The exact oracle always picks 'close' (p = 1 never mixes).
  const candidates: RootCandidate[] = [
    { promptId: 'solved', v: 0.5, p: 1 },
    { promptId: 'close', v: 0.5, p: 0.9 },
  ];
  const opts = { budget: 2, continuations: 0, min: 2, max: 2 };
  const plan = (s: Strategy, seed: number) => [...s.roots.plan({ candidates, round: 0, remaining: 2, results: new Map(), rng: createRng(seed) }).keys()];
  const exact = createStrategy('oracle', opts);
  const seen = createStrategy('oracle', { ...opts, truthSamples: 2 });
  const steps = 4000;
  let solved = 0;
  for (let seed = 0; seed < steps; seed++) {
    assert.deepEqual(plan(exact, seed), ['close']);
    const picked = plan(seen, seed);
    assert.deepEqual(picked, plan(seen, seed), 'the same step draws the same outcomes');
    if (picked[0] === 'solved') solved++;
  }
  // P(both succeed) = 0.81, or one fails and 'close' is seen at 1/4 (v = 1/4 and 3/4 tie on mixed chance): 0.01.
  const expected = 0.81 + 0.01;
  assert.ok(
    Math.abs(solved / steps - expected) < 4 * Math.sqrt((expected * (1 - expected)) / steps),
    `picked the solved prompt in ${solved} of ${steps} steps, expected about ${expected * steps}`,
  );
  // Many outcomes: the seen p is the truth to within sampling error, and the plan is the exact oracle's.
  const many = createStrategy('oracle', { ...opts, truthSamples: 100_000 });
  for (let seed = 0; seed < 20; seed++) assert.deepEqual(plan(many, seed), ['close']);
  assert.throws(() => strategyFromConfig({ name: 'oracle', budget: 10, truthSamples: 0 }), /truthSamples/);
  assert.throws(() => strategyFromConfig({ name: 'trace', budget: 10, truthSamples: 4 }), /truthSamples/);
});

test('oracle truthSamples: outcomes the step drew itself (seen) are read as they are, with no p needed', () => {
  // No p (the world): 'mixed' was seen 1 of 2, 'solved' 2 of 2, 'unseen' never; v = (1 + s) / (2 + n).
  const candidates: RootCandidate[] = [
    { promptId: 'solved', v: 0.5, seen: { successes: 2, trials: 2 } },
    { promptId: 'mixed', v: 0.5, seen: { successes: 1, trials: 2 } },
  ];
  const oracle = createStrategy('oracle', { budget: 2, continuations: 0, min: 2, max: 2, truthSamples: 2 });
  for (let seed = 0; seed < 20; seed++)
    assert.deepEqual([...oracle.roots.plan({ candidates, round: 0, remaining: 2, results: new Map(), rng: createRng(seed) }).keys()], ['mixed']);
  // Without seen outcomes and without p the oracle still refuses, naming what it needs.
  assert.throws(
    () => oracle.roots.plan({ candidates: [{ promptId: 'x', v: 0.5 }], round: 0, remaining: 2, results: new Map(), rng: createRng(0) }),
    /true success probability/,
  );
});

test('entropy picks the highest-entropy prefixes; random-tree spreads at random', () => {
  const prefixes: PrefixCandidate[] = [0.1, 2.5, 0.7, 1.9].map((h, i) => ({ id: `p${i}`, q: 0.5, r: 1, depth: 1, entropy: h }));
  const e = createStrategy('entropy', { budget: 30 }).prefixes!.plan({ promptId: 'q', m: 2, prefixes, budget: 3, rng: createRng(0) });
  assert.deepEqual(
    [...e],
    [
      ['p1', 1],
      ['p3', 1],
      ['p2', 1],
    ],
  );
  const r = createStrategy('random-tree', { budget: 30 }).prefixes!.plan({ promptId: 'q', m: 2, prefixes, budget: 400, rng: createRng(1) });
  assert.equal(
    [...r.values()].reduce((a, b) => a + b, 0),
    400,
  );
  for (const K of r.values()) assert.ok(K > 60, `uniform draws: ${K} of 400 on one of 4 prefixes`);
});

test('knapsack uses history, not the predictor', () => {
  const candidates: RootCandidate[] = [
    { promptId: 'solved', v: 0.5, history: { successes: 20, trials: 20 } },
    { promptId: 'open', v: 0.01, history: { successes: 7, trials: 20 } },
  ];
  const plan = rootsOf(createStrategy('knapsack', { budget: 2, min: 2, max: 2 }), candidates);
  assert.deepEqual([...plan], [['open', 2]]);
});

test('unknown strategy names and bad options fail when the config is parsed', () => {
  assert.throws(() => strategyFromConfig({ name: 'tracee', budget: 10 }), ZodError);
  assert.throws(() => strategyFromConfig({ name: 'trace', budget: 10, min: 1 }), ZodError);
  assert.throws(() => strategyFromConfig({ name: 'trace', budget: 10, min: 5, max: 4 }), ZodError);
  assert.equal(strategyFromConfig({ name: 'random-tree', budget: 10 }).name, 'random-tree');
});

test('misspelt options are errors, not silently ignored', () => {
  assert.throws(() => strategyFromConfig({ name: 'trace', budget: 10, continuation: 4 }), ZodError);
  assert.throws(() => createStrategy('grpo', { budget: 10, groupsize: 4 } as never), ZodError);
});

test('ablation: uniform roots = random-tree roots (ignores v); adaptive roots follow v', () => {
  const candidates = pool(40, createRng(4));
  const uniform = rootsOf(make('trace', { ...base, roots: 'uniform' }), candidates);
  assert.deepEqual([...uniform], [...rootsOf(make('random-tree'), candidates)]);
  // Changing every v leaves the uniform plan alone but moves the adaptive one.
  const flipped = candidates.map((c, i) => ({ ...c, v: i % 2 === 0 ? 0.5 : 0.01 }));
  assert.deepEqual([...rootsOf(make('trace', { ...base, roots: 'uniform' }), flipped)], [...uniform]);
  const adaptive = rootsOf(make('trace'), flipped);
  assert.ok(
    [...adaptive.keys()].every((id) => Number(id.slice(1)) % 2 === 0),
    'adaptive roots pick the v = ½ prompts',
  );
});

test('ablation: uniform prefixes spread the budget evenly, the remainder shallowest first', () => {
  const prefixes: PrefixCandidate[] = [];
  for (let j = 0; j < 3; j++) for (let t = 1; t <= 2; t++) prefixes.push({ id: `q/${j}/${t}`, q: j === 0 ? 0.99 : 0.5, r: 1, depth: t });
  // Input order q/0/1, q/0/2, q/1/1, q/1/2, q/2/1, q/2/2: the three depth-1 prefixes first, then q/0/2.
  assert.deepEqual(evenPrefixes(prefixes, 4), [1, 1, 1, 0, 1, 0]);
  assert.deepEqual(evenPrefixes(prefixes, 13), [3, 2, 2, 2, 2, 2]);
  const even = make('trace', { ...base, prefixes: 'uniform' }).prefixes!.plan({ promptId: 'q', m: 3, prefixes, budget: 6, rng: createRng(0) });
  assert.deepEqual([...even.values()], [1, 1, 1, 1, 1, 1]);
  // The adaptive solver instead skips the prefixes whose success is near-certain to repeat (rollout 0:
  // r = 1, q = 0.99, ρ = 0.99) and doubles up on the coin flips (ρ = ½: gains ½, ¼ beat 0.01).
  const adaptive = make('trace').prefixes!.plan({ promptId: 'q', m: 3, prefixes, budget: 6, rng: createRng(0) });
  assert.equal((adaptive.get('q/0/1') ?? 0) + (adaptive.get('q/0/2') ?? 0), 0, JSON.stringify([...adaptive]));
  assert.equal(
    [...adaptive.values()].reduce((a, b) => a + b, 0),
    6,
  );
});

test('ablation options are for trace and oracle only, and only take adaptive | uniform', () => {
  assert.throws(() => strategyFromConfig({ name: 'grpo', budget: 10, roots: 'uniform' }), /apply to trace and oracle only/);
  assert.throws(() => createStrategy('random-tree', { budget: 10, prefixes: 'adaptive' } as never), ZodError);
  assert.throws(() => strategyFromConfig({ name: 'trace', budget: 10, roots: 'random' }), ZodError);
  assert.equal(strategyFromConfig({ name: 'oracle', budget: 10, roots: 'uniform', prefixes: 'uniform' }).name, 'oracle');
});

test('oracle: true probabilities a few ulps outside [0, 1] (sums of products) are clamped, gross errors are not', () => {
  const prefixes: PrefixCandidate[] = [
    { id: 'a', q: 0.5, r: 1, depth: 1, p: 1.0000000000000002 },
    { id: 'b', q: 0.5, r: 1, depth: 1, p: 0.5 },
  ];
  const plan = createStrategy('oracle', { budget: 30 }).prefixes!.plan({ promptId: 'q', m: 2, prefixes, budget: 2, rng: createRng(0) });
  assert.deepEqual([...plan], [['b', 2]]);
  assert.throws(
    () =>
      createStrategy('oracle', { budget: 30 }).prefixes!.plan({ promptId: 'q', m: 2, prefixes: [{ ...prefixes[0], p: 1.2 }], budget: 2, rng: createRng(0) }),
    /prefixes\[0\]\.q/,
  );
});

/** What the loop hands a strategy before a step: the pool with v and p, evidence from a table, the probe recorded. */
function stepStart(candidates: readonly RootCandidate[], probes: number[]): StepStart {
  return {
    candidates: candidates.map(({ promptId, v, p }) => ({ promptId, v, ...(p !== undefined ? { p } : {}) })),
    evidence: (id) => {
      const h = candidates.find((c) => c.promptId === id)?.history;
      return h ? { ...h, multiTurn: Math.floor(h.trials / 2) } : undefined;
    },
    multiTurnShare: 0.5,
    freshOutcomes: async (k) => {
      probes.push(k);
      return { outcomes: new Map(candidates.map((c) => [c.promptId, { successes: 1, trials: k }])), tokens: 10 * k };
    },
    run: { env: undefined, policy: undefined },
  };
}

test('contract: every strategy’s per-step plan keeps its name, cap and unit, plans over the same prompts, and keeps JSON memory', async () => {
  const candidates = pool(24, createRng(11));
  for (const name of strategies.names() as StrategyName[]) {
    for (const unit of ['trajectories', 'tokens'] as const) {
      if (name === 'dapo' && unit === 'tokens') continue;
      const s = strategyFromConfig({ name, unit, budget: 48, ...(name === 'oracle' ? { truthSamples: 2 } : {}) });
      if (!s.perStep) continue;
      const probes: number[] = [];
      const plan = await s.perStep(stepStart(candidates, probes));
      assert.equal(plan.strategy.name, s.name, name);
      assert.equal(plan.strategy.cap, s.cap, name);
      assert.equal(plan.strategy.unit, s.unit, `${name} ${unit}: the step's strategy is priced as the strategy`);
      assert.deepEqual(
        plan.candidates.map((c) => c.promptId),
        candidates.map((c) => c.promptId),
        name,
      );
      const ended = plan.end?.(candidates.map((c, i) => ({ promptId: c.promptId, mixed: i % 3 === 0, cost: 2 })));
      if (ended) assert.deepEqual(JSON.parse(JSON.stringify(ended.memory)), ended.memory, `${name}: memory is plain JSON`);
      // Every candidate here knows p, so the oracle draws its k outcomes from p and probes nothing.
      assert.deepEqual(probes, [], name);
    }
  }
});

test('knapsack and trace’s posterior and expansion-aware roots read the run’s evidence in their per-step plan', async () => {
  const candidates = pool(8, createRng(12));
  const knapsack = await createStrategy('knapsack', { budget: 16 }).perStep!(stepStart(candidates, []));
  assert.deepEqual(
    knapsack.candidates.map((c) => c.history),
    candidates.map((c) => c.history),
  );
  const trace = await createStrategy('trace', { budget: 16, rootValue: 'expansion-aware' }).perStep!(stepStart(candidates, []));
  // Shrunk towards the run's share: (multiTurn + 2 · ½) / (trials + 2).
  assert.deepEqual(
    trace.candidates.map((c) => c.expandable),
    candidates.map((c) => (Math.floor(c.history!.trials / 2) + 1) / (c.history!.trials + 2)),
  );
  assert.equal(createStrategy('trace', { budget: 16 }).perStep, undefined, 'the paper’s trace reads Ṽ alone');
});

test('oracle truthSamples where the environment does not know p: the k outcomes come from the loop’s fresh rollouts, their tokens a metric', async () => {
  const candidates = pool(6, createRng(13)).map(({ promptId, v }) => ({ promptId, v }));
  const probes: number[] = [];
  const plan = await createStrategy('oracle', { budget: 12, continuations: 0, truthSamples: 3 }).perStep!(stepStart(candidates, probes));
  assert.deepEqual(probes, [3]);
  assert.deepEqual(plan.metrics, { probe_tokens: 30 });
  assert.ok(plan.candidates.every((c) => c.seen?.trials === 3 && c.seen.successes === 1));
});
