import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Simulator, nodeValue } from '../../src/env/index.ts';
import { SimulatorPolicy } from '../../src/policy/index.ts';
import type { Prompt, Turn } from '../../src/tree/types.ts';
import { createRng, type Rng } from '../../src/util/rng.ts';
import { playEpisode } from '../contracts/episode.ts';

async function rollout(sim: Simulator, policy: SimulatorPolicy, prompt: Prompt, prefix: readonly Turn[], rng: Rng) {
  const { turns, last } = await playEpisode(sim, policy, prompt, rng, { prefix });
  return { turns, reward: last.reward ?? 0 };
}

test('trueSuccess is the martingale of its children (exact at every prefix)', async () => {
  const sim = new Simulator({ seed: 3 });
  for (const prompt of sim.prompts(20)) {
    const { turns } = await rollout(sim, new SimulatorPolicy(sim), prompt, [], createRng(1).fork(prompt.id));
    for (let t = 0; t < turns.length; t++) {
      const prefix = turns.slice(0, t);
      const v = sim.trueSuccess(prompt, prefix);
      const node = sim.node(sim.restore(prompt, prefix));
      let sum = 0;
      for (const b of node.branches) {
        const step = await sim.step(sim.restore(prompt, prefix), { type: b.kind, input: b.label });
        sum += b.p * sim.trueSuccess(prompt, [...prefix, { thought: '', action: { type: b.kind, input: b.label }, observation: step.observation }]);
      }
      assert.ok(Math.abs(v - sum) < 1e-12, `prompt ${prompt.id} prefix ${t}: ${v} vs ${sum}`);
    }
  }
});

test('Monte Carlo success rate of the random policy matches trueSuccess at the root and at a prefix', async () => {
  const sim = new Simulator({ seed: 11 });
  const policy = new SimulatorPolicy(sim);
  const prompts = sim.prompts(40).filter((p) => {
    const v = sim.trueSuccess(p, []);
    return v > 0.2 && v < 0.8;
  });
  const prompt = prompts[0]!;
  const rng = createRng(5);
  const n = 3000;
  let wins = 0;
  for (let i = 0; i < n; i++) wins += (await rollout(sim, policy, prompt, [], rng.fork(i))).reward;
  const v = sim.trueSuccess(prompt, []);
  assert.ok(Math.abs(wins / n - v) < 4 * Math.sqrt((v * (1 - v)) / n), `root: empirical ${wins / n} vs true ${v}`);

  const first = (await rollout(sim, policy, prompt, [], rng.fork('x'))).turns.slice(0, 1);
  const q = sim.trueSuccess(prompt, first);
  let w2 = 0;
  for (let i = 0; i < n; i++) w2 += (await rollout(sim, policy, prompt, first, rng.fork(`p${i}`))).reward;
  assert.ok(Math.abs(w2 / n - q) < 4 * Math.sqrt((q * (1 - q)) / n) + 1e-9, `prefix: empirical ${w2 / n} vs true ${q}`);
});

test('difficulty is spread: some prompts ~always, some ~never, many mixed; prefixes move the value', () => {
  const sim = new Simulator({ seed: 2 });
  const vs = sim.prompts(300).map((p) => sim.trueSuccess(p, []));
  const never = vs.filter((v) => v < 0.05).length;
  const always = vs.filter((v) => v > 0.95).length;
  const mixed = vs.filter((v) => v >= 0.2 && v <= 0.8).length;
  assert.ok(never >= 15 && always >= 15 && mixed >= 100, `never ${never}, always ${always}, mixed ${mixed}`);
  let moved = 0;
  for (const p of sim.prompts(300)) {
    const root = sim.tree(p.id);
    const v = nodeValue(root, sim.maxTurns);
    for (const b of root.branches) {
      const c = b.kind === 'answer' ? (b.reward ?? 0) : nodeValue(b.child!, sim.maxTurns - 1);
      moved += b.p * Math.abs(c - v);
    }
  }
  assert.ok(moved / 300 > 0.08, `mean first-turn value change ${moved / 300}`);
});

// Restore equals replay is part of the environment contract (test/env/contract.test.ts).
test('same seed gives the same trees; another seed gives others', () => {
  const a = new Simulator({ seed: 9 });
  const b = new Simulator({ seed: 9 });
  const prompt = a.prompts(1)[0]!;
  assert.equal(JSON.stringify(a.tree(prompt.id)), JSON.stringify(b.tree(prompt.id)));
  assert.notEqual(JSON.stringify(a.tree(prompt.id)), JSON.stringify(new Simulator({ seed: 10 }).tree(prompt.id)));
});

test('invalid actions become observations, count as turns, and the turn limit ends with reward 0', async () => {
  const sim = new Simulator({ seed: 1, maxTurns: 3 });
  const prompt = sim.prompts(1)[0]!;
  let s = sim.reset(prompt);
  const bad = await sim.step(s, { type: 'search', input: 'nope' });
  assert.equal(bad.invalid, true);
  assert.equal(bad.done, false);
  assert.match(bad.observation, /not an option/);
  assert.equal(bad.state.turn, 1);
  assert.deepEqual(bad.state.path, []);
  s = (await sim.step(bad.state, { type: 'answer', input: '' })).state;
  const last = await sim.step(s, { type: 'invalid', input: 'x' });
  assert.equal(last.done, true);
  assert.equal(last.reward, 0);
  assert.equal(last.reason, 'turn_limit');
  await assert.rejects(sim.step(last.state, { type: 'answer', input: 'x' }));
  // the state is a frozen value: stepping never mutates it
  assert.ok(Object.isFrozen(s));
  const badTurn: Turn = { thought: '', action: { type: 'search', input: 'nope' }, observation: bad.observation };
  assert.equal(sim.trueSuccess(prompt, [badTurn, badTurn, badTurn]), 0);
});

test('a given tree: trueSuccess equals the hand-computed probability, including the turn limit', async () => {
  // root: search s (p .6) → { answer win (p .5, r 1), answer lose (p .5, r 0) }; answer direct (p .4, r 1)
  const tree = {
    branches: [
      {
        label: 's',
        kind: 'search' as const,
        p: 0.6,
        child: {
          branches: [
            { label: 'win', kind: 'answer' as const, p: 0.5, reward: 1 as const },
            { label: 'lose', kind: 'answer' as const, p: 0.5, reward: 0 as const },
          ],
        },
      },
      { label: 'direct', kind: 'answer' as const, p: 0.4, reward: 1 as const },
    ],
  };
  const sim = new Simulator({ seed: 0, trees: new Map([['given', tree]]) });
  const prompt = { id: 'given', question: 'q', answers: ['x'] };
  assert.ok(Math.abs(sim.trueSuccess(prompt, []) - (0.6 * 0.5 + 0.4)) < 1e-15);
  const s = await sim.step(sim.reset(prompt), sim.parse('<search>s</search>').action);
  assert.match(s.observation, /clue 0\.50/);
  assert.equal(sim.trueSuccess(prompt, [{ thought: '', action: { type: 'search', input: 's' }, observation: s.observation }]), 0.5);
  const short = new Simulator({ seed: 0, maxTurns: 1, trees: new Map([['given', tree]]) });
  assert.ok(Math.abs(short.trueSuccess(prompt, []) - 0.4) < 1e-15, 'searching on the last turn cannot succeed');
  const bad = await sim.step(sim.reset(prompt), sim.parse('no tags').action);
  assert.equal(bad.reason, 'no_action');
  assert.throws(
    () => new Simulator({ seed: 0, trees: new Map([['bad', { branches: [{ label: 'a', kind: 'answer' as const, p: 0.7, reward: 1 as const }] }]]) }),
    /sum to 0.7/,
  );
});
