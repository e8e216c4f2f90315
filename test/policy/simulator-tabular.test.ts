/**
 * The simulator's learnable tabular policy (policy.kind simulator-tabular): exact log-probabilities
 * and entropy on a hand-made tree, the exact size of one update, exact J against brute-force
 * enumeration and against Monte Carlo, save/load, and its place in the registry and the run's parts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Simulator, type SimNode } from '../../src/env/index.ts';
import { PolicySnapshotError, SimulatorPolicy, SimulatorTabularPolicy, softmax, type PolicySample } from '../../src/policy/index.ts';
import { rootCandidates } from '../../src/rollout/index.ts';
import { RunStore } from '../../src/store/index.ts';
import { buildComponents, ConfigError, parseTrainConfig, train } from '../../src/train/index.ts';
import type { Prompt, Turn } from '../../src/tree/types.ts';
import { createRng } from '../../src/util/rng.ts';

// Root: answer a (p .5, r 1), search s (p .3) → { answer b (p .6, r 0), answer c (p .4, r 1) }, answer d (p .2, r 0).
const tree = (): SimNode => ({
  branches: [
    { label: 'a', kind: 'answer', p: 0.5, reward: 1 },
    {
      label: 's',
      kind: 'search',
      p: 0.3,
      child: {
        branches: [
          { label: 'b', kind: 'answer', p: 0.6, reward: 0 },
          { label: 'c', kind: 'answer', p: 0.4, reward: 1 },
        ],
      },
    },
    { label: 'd', kind: 'answer', p: 0.2, reward: 0 },
  ],
});
const prompt: Prompt = { id: 'hand', question: 'Simulated task hand.', answers: ['(simulated)'] };
const makeSim = () => new Simulator({ seed: 0, trees: new Map([['hand', tree()]]) });
const H = (p: readonly number[]) => -p.reduce((h, x) => h + x * Math.log(x), 0);
const close = (a: number, b: number, tol = 1e-12, what = '') => assert.ok(Math.abs(a - b) <= tol, `${what}: ${a} vs ${b}`);

async function turnOf(sim: Simulator, policy: SimulatorTabularPolicy, turns: Turn[], rng = createRng(1), greedy = false): Promise<Turn> {
  const out = await policy.act({ prompt, rendered: sim.render(prompt), turns, rng, greedy, maxTokens: 32 });
  const step = await sim.step(sim.restore(prompt, turns), out.action!);
  return {
    thought: out.thought!,
    action: out.action!,
    text: out.text,
    observation: step.observation,
    generatedTokens: out.generatedTokens,
    logprob: out.logprob,
    entropy: out.entropy,
  } as Turn;
}

/** A turn taking `label` at the node after `turns`, with the behaviour log-probability `logprob`. */
async function forced(sim: Simulator, turns: Turn[], label: string, kind: 'answer' | 'search', logprob: number): Promise<Turn> {
  const action = { type: kind, input: label };
  const step = await sim.step(sim.restore(prompt, turns), action);
  return { thought: '', action, text: `<${kind}>${label}</${kind}>`, observation: step.observation, generatedTokens: 8, logprob } as Turn;
}

/** J by enumerating every path: Σ over leaves of Π π along the path · reward. */
function bruteForce(policy: SimulatorTabularPolicy, node: SimNode, path: number[] = []): number {
  const pi = policy.branchProbabilities('hand', path, node);
  return node.branches.reduce((j, b, i) => j + (b.kind === 'answer' ? pi[i]! * (b.reward ?? 0) : pi[i]! * bruteForce(policy, b.child!, [...path, i])), 0);
}

test('log-probabilities and entropy are exact: the tree’s p_b before any update, softmax(θ) after', async () => {
  const sim = makeSim();
  const policy = new SimulatorTabularPolicy(sim);
  const random = new SimulatorPolicy(sim);
  for (const greedy of [true, false]) {
    for (let k = 0; k < 20; k++) {
      const ctx = { prompt, rendered: sim.render(prompt), turns: [], rng: createRng(k), greedy, maxTokens: 32 };
      const [a, b] = [await policy.act(ctx), await random.act({ ...ctx, rng: createRng(k) })];
      assert.deepEqual(a.action, b.action, 'step 0 acts as SimulatorPolicy');
      assert.equal(a.logprob, b.logprob);
      close(a.entropy!, H([0.5, 0.3, 0.2]), 1e-12, 'entropy');
    }
  }
  const greedy = await policy.act({ prompt, rendered: '', turns: [], rng: createRng(0), greedy: true, maxTokens: 32 });
  assert.equal(greedy.action!.input, 'a');
  close(greedy.logprob!, Math.log(0.5), 1e-15, 'log π(a)');
  // One update on d with A = 2 makes θ_root = log p + η·A·(1[c = d] − p_c); log-probs follow softmax(θ).
  const t = await forced(sim, [], 'd', 'answer', Math.log(0.2));
  policy.update([{ prompt, turns: [t], advantages: [2] }], { learningRate: 0.5, clip: 10, epochs: 1 });
  const theta = [Math.log(0.5) - 0.5 * 2 * 0.5, Math.log(0.3) - 0.5 * 2 * 0.3, Math.log(0.2) + 0.5 * 2 * 0.8];
  const pi = softmax(theta);
  const out = await policy.act({ prompt, rendered: '', turns: [], rng: createRng(0), greedy: true, maxTokens: 32 });
  const k = pi.indexOf(Math.max(...pi));
  assert.equal(out.action!.input, ['a', 's', 'd'][k]);
  close(out.logprob!, Math.log(pi[k]!), 1e-12, 'log π after the update');
  close(out.entropy!, H(pi), 1e-12, 'entropy after the update');
  close(policy.logprob(prompt, [], { type: 'search', input: 's' })!, Math.log(pi[1]!), 1e-12, 'logprob()');
  assert.equal(policy.logprob(prompt, [], { type: 'search', input: 'zz' }), undefined);
});

test('one update moves the logits in the advantage’s direction by exactly η·ρA(1[c = a] − π_c) / n', async () => {
  const sim = makeSim();
  const p = [0.5, 0.3, 0.2];
  const s = await forced(sim, [], 's', 'search', Math.log(0.3));
  const c = await forced(sim, [s], 'c', 'answer', Math.log(0.4));
  const a = await forced(sim, [], 'a', 'answer', Math.log(0.5));
  // Two samples: s → c with A = +1 (both turns), a with A = −0.5.
  const samples: PolicySample[] = [
    { prompt, turns: [s, c], advantages: [1, 1] },
    { prompt, turns: [a], advantages: [-0.5] },
    // Two dead samples (no advantage): counted by samples and batch, never by turns.
    { prompt, turns: [s, c], advantages: [0, 0] },
    { prompt, turns: [a], advantages: [0] },
  ];
  const eta = 0.3;
  // samples: the four samples; turns: the three contributing turns; batch: all six sampled turns.
  for (const normalise of ['samples', 'turns', 'batch'] as const) {
    const policy = new SimulatorTabularPolicy(sim);
    const n = { samples: 4, turns: 3, batch: 6 }[normalise];
    const metrics = policy.update(samples, { learningRate: eta, clip: 0.2, epochs: 1, normalise });
    assert.equal(metrics.turns, 3);
    const root = policy.nodeLogits('hand', [], tree());
    const want = p.map((pc, i) => Math.log(pc) + (eta / n) * (1 * ((i === 1 ? 1 : 0) - pc) + -0.5 * ((i === 0 ? 1 : 0) - pc)));
    want.forEach((w, i) => close(root[i]!, w, 1e-14, `${normalise}: θ_root[${i}]`));
    const child = policy.nodeLogits('hand', [1], tree().branches[1]!.child!);
    [0.6, 0.4].forEach((pc, i) => close(child[i]!, Math.log(pc) + (eta / n) * ((i === 1 ? 1 : 0) - pc), 1e-14, `${normalise}: θ_s[${i}]`));
    // In the advantage's direction: the rewarded search and its answer gain, the penalised answer loses.
    assert.ok(root[1]! > Math.log(0.3) && root[0]! < Math.log(0.5) && child[1]! > Math.log(0.4));
  }
  // A ratio outside the clip range gives no gradient (here π_old made the ratio 2 with A > 0).
  const clipped = new SimulatorTabularPolicy(sim);
  const far = await forced(sim, [], 'a', 'answer', Math.log(0.25));
  const m = clipped.update([{ prompt, turns: [far], advantages: [1] }], { learningRate: 1, clip: 0.2, epochs: 1 });
  assert.equal(m.clipFraction, 1);
  assert.deepEqual([...clipped.nodeLogits('hand', [], tree())], p.map(Math.log));
});

test('exact J of the current policy equals brute-force enumeration and the Monte-Carlo success rate', async () => {
  const sim = makeSim();
  const policy = new SimulatorTabularPolicy(sim);
  const view = sim.withPlayer(policy);
  // Before any update: the random policy's value, 0.5 + 0.3 · 0.4 = 0.62.
  close(view.trueSuccess(prompt, []), 0.62, 1e-15, 'J at step 0');
  close(view.trueSuccess(prompt, []), sim.trueSuccess(prompt, []), 1e-15, 'view = random policy at step 0');
  const s = await forced(sim, [], 's', 'search', Math.log(0.3));
  const b = await forced(sim, [s], 'b', 'answer', Math.log(0.6));
  policy.update([{ prompt, turns: [s, b], advantages: [0.7, -1.3] }], { learningRate: 2, clip: 100, epochs: 1 });
  const J = view.trueSuccess(prompt, []);
  close(J, bruteForce(policy, tree()), 1e-15, 'J vs enumeration');
  assert.ok(Math.abs(J - 0.62) > 0.01, 'the update changed J');
  close(view.trueSuccess(prompt, [s]), policy.branchProbabilities('hand', [1], tree().branches[1]!.child!)[1]!, 1e-15, 'V after the search');
  assert.equal(view.trueSuccess(prompt, [s, b]), 0, 'a finished episode: its reward');
  // Monte Carlo: 20,000 sampled episodes, 4.5 standard errors.
  const N = 20_000;
  const rng = createRng(7);
  let wins = 0;
  for (let i = 0; i < N; i++) {
    const turns: Turn[] = [];
    for (;;) {
      const t = await turnOf(sim, policy, turns, rng.fork(`e${i}/${turns.length}`));
      turns.push(t);
      const state = sim.restore(prompt, turns);
      if (state.done) {
        wins += state.reward ?? 0;
        break;
      }
    }
  }
  const se = Math.sqrt((J * (1 - J)) / N);
  assert.ok(Math.abs(wins / N - J) < 4.5 * se, `Monte Carlo ${wins / N} vs exact ${J} (se ${se.toFixed(4)})`);
});

test('save/load: a snapshot restores the exact logits in a fresh instance; a foreign snapshot is refused by name', async () => {
  const sim = makeSim();
  const policy = new SimulatorTabularPolicy(sim);
  const before = policy.save();
  const s = await forced(sim, [], 's', 'search', Math.log(0.3));
  policy.update([{ prompt, turns: [s], advantages: [1.7] }], { learningRate: 0.9, clip: 0.2, epochs: 3 });
  const after = policy.save();
  const fresh = new SimulatorTabularPolicy(sim);
  fresh.load(after);
  assert.deepEqual([...fresh.nodeLogits('hand', [], tree())], [...policy.nodeLogits('hand', [], tree())]);
  assert.deepEqual(fresh.save(), after);
  for (let k = 0; k < 10; k++) {
    const ctx = { prompt, rendered: '', turns: [], rng: createRng(k), maxTokens: 32 };
    assert.deepEqual(await fresh.act(ctx), await policy.act({ ...ctx, rng: createRng(k) }));
  }
  policy.load(before);
  assert.deepEqual([...policy.nodeLogits('hand', [], tree())], [0.5, 0.3, 0.2].map(Math.log));
  assert.throws(() => policy.load(new TextEncoder().encode('{"format":"trace-rl/embedded-policy@1"}')), PolicySnapshotError);
  assert.throws(() => policy.load(new Uint8Array([1, 2, 3])), PolicySnapshotError);
});

test('registry: policy.kind simulator-tabular replaces the simulator’s fixed policy and supplies the truth; a foreign field fails on its path', async () => {
  const base = { env: { kind: 'simulator', questions: 40 }, pool: 8, strategy: { name: 'oracle', budget: 12 }, predictor: { kind: 'global' } };
  const parts = await buildComponents(parseTrainConfig({ ...base, policy: { kind: 'simulator-tabular' } }));
  assert.ok(parts.policy instanceof SimulatorTabularPolicy);
  assert.equal(parts.trainable, parts.policy);
  assert.ok(parts.truth, 'the run knows its policy’s truth');
  const fixed = await buildComponents(parseTrainConfig(base));
  assert.ok(fixed.policy instanceof SimulatorPolicy, 'without it the simulator keeps its random policy');
  assert.equal(fixed.truth, undefined);
  assert.throws(
    () => parseTrainConfig({ ...base, policy: { kind: 'simulator-tabular', warmStart: 'bc' } }),
    (e: unknown) =>
      e instanceof ConfigError &&
      /config\.policy\.warmStart: "warmStart" is not a setting of policy\.kind simulator-tabular \(embedded takes it\)/.test(e.message),
  );
  assert.throws(
    () => parseTrainConfig({ ...base, policy: { kind: 'simulator-tabular', learningRate: -1 } }),
    (e: unknown) => e instanceof ConfigError && /config\.policy\.learningRate/.test(e.message),
  );
  await assert.rejects(
    buildComponents(
      parseTrainConfig({
        env: { kind: 'world', questions: 60 },
        pool: 8,
        strategy: { name: 'grpo', budget: 12 },
        predictor: { kind: 'global' },
        policy: { kind: 'simulator-tabular' },
      }),
    ),
    /acts in env\.kind simulator only/,
  );
});

test('training: allocation’s true p and the logged exact J follow the current policy', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sim-tabular-'));
  try {
    let t = 0;
    const config = {
      env: { kind: 'simulator', questions: 40 },
      steps: 2,
      pool: 8,
      strategy: { name: 'oracle', budget: 24 },
      predictor: { kind: 'global' },
      policy: { kind: 'simulator-tabular' },
      eval: { every: 1, questions: 8 },
    };
    const outcome = await train({ out: dir, config, clock: () => t++ });
    assert.equal(outcome.status, 'finished');
    const store = RunStore.open(dir, { readonly: true });
    const steps = store.steps();
    const parts = await buildComponents(parseTrainConfig(config));
    // A fresh policy is the random one: its J is the simulator's own.
    const J0 = parts.train.reduce((s, p) => s + parts.truth!.trueSuccess(p, []), 0) / parts.train.length;
    // The step-0 evaluation runs after step 0's update: its J moved away from the random policy's.
    assert.ok(Number.isFinite(steps[0]!.metrics.train_accuracy_exact) && Number.isFinite(steps[0]!.metrics.test_accuracy_exact));
    assert.notEqual(steps[1]!.metrics.train_accuracy_exact, J0);
    // Resume-exact: the stored policy checkpoint of step 1 reproduces its logged J.
    parts.trainable!.load(store.checkpoints(1).policy!);
    const J1 = parts.train.reduce((s, p) => s + parts.truth!.trueSuccess(p, []), 0) / parts.train.length;
    close(J1, steps[1]!.metrics.train_accuracy_exact!, 1e-12, 'J from the checkpoint');
    // The root candidates' true p (what oracle and pcl-on-the-truth allocate by) is the trained policy's, not the random policy's.
    const pool = parts.train.slice(0, 16);
    const random = new Simulator({ seed: 7 });
    const cs = rootCandidates(pool, parts.env, (hs) => hs.map(() => 0.5));
    cs.forEach((c, i) => close(c.p!, parts.truth!.trueSuccess(pool[i]!, []), 0, `p of ${c.promptId}`));
    assert.ok(
      cs.some((c, i) => Math.abs(c.p! - random.trueSuccess(pool[i]!, [])) > 1e-6),
      'some prompt’s p moved with training',
    );
    store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
