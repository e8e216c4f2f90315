import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStrategy } from '../../src/allocate/index.ts';
import { Simulator } from '../../src/env/index.ts';
import { SimulatorPolicy } from '../../src/policy/index.ts';
import { Recording, runStep, type Allocator, type StepOptions } from '../../src/rollout/index.ts';
import { partitionPlan, pricedCaps, runSplitStep, SplitRefused, StepWorkerError, StepWorkerPool, type WorkerStats } from '../../src/rollout/split/index.ts';
import { RunStore } from '../../src/store/index.ts';
import { ConfigError, parseTrainConfig, train } from '../../src/train/index.ts';
import { createRng } from '../../src/util/rng.ts';
import type { FixtureArgs } from './split-parts-fixture.ts';
import { moduleBeside } from '../helpers/checkout.ts';

/**
 * A step split across worker processes by prompt (src/rollout/split): real child processes, the real
 * simulator and world, the real engine on both sides. Every stream the engine draws from is forked
 * by node id or prompt id from the step's seed, so the split step must grow the very trees the
 * in-process step grows; a worker that dies, hangs or answers too much must fail the step, naming it,
 * and leave no process behind.
 */

const SEED = 7;
const FIXTURE = moduleBeside(import.meta.url, 'split-parts-fixture').href;
// 64: the plan leaves one trajectory for the leftover top-up, which the coordinator runs on the merged trees.
const TRACE = { preset: 'paper', budget: 64, continuations: 2 } as const;

function simStep(prompts = 16) {
  const env = new Simulator({ seed: SEED });
  return {
    prompts: env.prompts(prompts),
    env: env as StepOptions<unknown>['env'],
    policy: new SimulatorPolicy(env),
    rng: createRng(11).fork('rollout'),
    strategy: createStrategy('trace', TRACE) as Allocator,
    settings: { concurrency: 6 },
  };
}

const parts = (extra: Partial<FixtureArgs> = {}) => ({ module: FIXTURE, args: { seed: SEED, strategy: TRACE, ...extra } satisfies FixtureArgs });

/** One pool of 2 workers on the plain fixture, shared by the tests that only need a working split (each start costs seconds of CPU). */
let shared: Promise<StepWorkerPool> | undefined;
const sharedPool = () => (shared ??= StepWorkerPool.start({ workers: 2, parts: parts() }));
after(async () => {
  if (shared) await (await shared).close();
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('split step: 2 and 3 workers grow the same trees, spend and rounds as the in-process step', async () => {
  const inProcess = await runStep(simStep());
  assert.ok(inProcess.spend.continuation > 0, 'the step expands prefixes');
  assert.ok(inProcess.rounds.length > 1, 'the step tops up its leftover');
  for (const workers of [2, 3]) {
    const stats: WorkerStats[] = [];
    const split = await runSplitStep(simStep(), { workers: workers === 2 ? await sharedPool() : workers, parts: parts(), onWorker: (s) => stats.push(s) });
    assert.deepEqual(split.trees, inProcess.trees, `${workers} workers`);
    assert.deepEqual(split.spend, inProcess.spend);
    assert.deepEqual(split.rounds, inProcess.rounds);
    assert.deepEqual(split.progress, inProcess.progress);
    assert.equal(stats.length, workers);
    // The ledger's totals are the sum of the workers' (the coordinator's own leftover top-up aside).
    const leftover = inProcess.rounds.slice(1).reduce((a, r) => a + [...r.values()].reduce((x, y) => x + y, 0), 0);
    assert.equal(stats.reduce((a, s) => a + s.trajectories, 0) + leftover, split.spend.bare + split.spend.continuation);
  }
});

test('split step: a training run with engine.workers: 2 stores the same trees, metrics and checkpoints as in process', async () => {
  const root = mkdtempSync(join(tmpdir(), 'trace-split-'));
  try {
    const base = { env: { kind: 'world', questions: 120 }, steps: 2, pool: 16, eval: { every: 5, questions: 8 } };
    for (const [arm, strategy] of [
      ['trace-paper', { name: 'trace', preset: 'paper', budget: 24, continuations: 2 }],
      ['trace', { name: 'trace', budget: 24 }],
      ['defensive', { name: 'defensive', budget: 24, groupSize: 3 }],
    ] as const) {
      const stored: unknown[] = [];
      for (const workers of [1, 2]) {
        const dir = join(root, `${arm}-${workers}`);
        let clock = 0;
        const out = await train({ out: dir, config: { ...base, strategy, engine: { workers } }, clock: () => clock++ });
        assert.equal(out.status, 'finished');
        const s = RunStore.open(dir, { readonly: true });
        stored.push(
          s.steps().map((st) => ({
            metrics: Object.fromEntries(Object.entries(st.metrics).filter(([k]) => !k.startsWith('time_'))),
            trees: s.trees(st.step),
            checkpoints: Object.entries(s.checkpoints(st.step)).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
          })),
        );
        s.close();
      }
      // Compared as values: the same nodes with the same content. The order nodes were added to a tree
      // follows completion order, which differs with the requests in flight (as between concurrencies in process).
      assert.deepEqual(stored[1], stored[0], arm);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('split step: a worker that dies fails the step, naming the worker and its prompts; no worker is left running', async () => {
  const step = simStep();
  const victim = step.prompts[3]!.id;
  const pool = await StepWorkerPool.start({ workers: 2, parts: parts({ crashOn: victim }) });
  await assert.rejects(runSplitStep(step, { workers: pool }), (e: Error) => {
    assert.ok(e instanceof StepWorkerError, e.message);
    assert.match(e.message, /worker [12] of 2 \(pid \d+\) exited with code 3/);
    assert.ok(e.message.includes(`"${victim}"`) || /prompts "/.test(e.message), e.message);
    return true;
  });
  await pool.exited();
  for (const pid of pool.pids) assert.equal(alive(pid), false, `worker ${pid} still running`);
});

test('split step: cancelling the step kills the workers and returns a cancelled step without their trees', async () => {
  const step = simStep();
  const ctl = new AbortController();
  const pool = await StepWorkerPool.start({ workers: 2, parts: parts({ hangOn: step.prompts[0]!.id }) });
  setTimeout(() => ctl.abort(), 300);
  const res = await runSplitStep({ ...step, signal: ctl.signal }, { workers: pool });
  assert.equal(res.cancelled, true);
  assert.equal(res.trees.length, 0);
  await pool.exited();
  for (const pid of pool.pids) assert.equal(alive(pid), false);
});

test('split step: workers past the deadline are killed and the step fails with the deadline in the message', async () => {
  const step = simStep();
  await assert.rejects(
    runSplitStep(step, { workers: 2, parts: parts({ hangOn: step.prompts[1]!.id }), timeoutMs: 300 }),
    /after 300 ms \(timeoutMs\); all were killed/,
  );
});

test('split step: an answer over the message limit fails the step before it is buffered', async () => {
  await assert.rejects(runSplitStep(simStep(), { workers: 2, parts: parts(), maxMessageBytes: 2000 }), (e: Error) => {
    assert.ok(e instanceof StepWorkerError);
    assert.match(e.message, /over the limit of 2000/);
    return true;
  });
});

test('split step: settings whose outcome depends on every prompt at once are refused, naming the setting', async () => {
  const step = simStep();
  const w = { workers: 2, parts: parts() };
  const refused = async (o: StepOptions<unknown>, pattern: RegExp) =>
    assert.rejects(runSplitStep(o, w), (e: Error) => e instanceof SplitRefused && pattern.test(e.message) && /engine\.workers: 1/.test(e.message));
  await refused({ ...step, strategy: createStrategy('dapo', { budget: 24, groupSize: 4 }) }, /dynamic sampling/);
  await refused({ ...step, strategy: createStrategy('trace', { ...TRACE, prefixBudget: 'shared' }) }, /prefixBudget: per-prompt/);
  await refused({ ...step, record: new Recording() }, /record\/replay/);
  await refused({ ...step, caps: { tokens: 1000 } }, /caps on turns or tokens/);
});

test('split step: the configuration refuses engine.workers > 1 with a strategy that cannot split, before a run starts', () => {
  assert.throws(
    () => parseTrainConfig({ strategy: { name: 'dapo', budget: 24, groupSize: 4 }, engine: { workers: 2 } }),
    (e: Error) => e instanceof ConfigError && /^config\.engine\.workers: .*dynamic sampling.*engine\.workers: 1$/.test(e.message),
  );
  assert.doesNotThrow(() => parseTrainConfig({ strategy: { name: 'grpo', budget: 11500, unit: 'tokens' }, engine: { workers: 4 } }), 'a priced budget splits');
  assert.equal(parseTrainConfig({ strategy: { name: 'trace', budget: 24 }, engine: { workers: 2 } }).engine.workers, 2);
});

test('partitionPlan: balanced by weight, in plan order within a share, the same for the same plan', () => {
  const plan = new Map([
    ['a', 8],
    ['b', 1],
    ['c', 4],
    ['d', 0],
    ['e', 4],
    ['f', 2],
  ]);
  const shares = partitionPlan(plan, 2, (m) => m);
  // Heaviest first to the lightest share: a → 0, c → 1, e → 1, f → 0 (tie: lower index), b → 1.
  assert.deepEqual(shares, [
    [
      ['a', 8],
      ['f', 2],
    ],
    [
      ['b', 1],
      ['c', 4],
      ['e', 4],
    ],
  ]);
  assert.deepEqual(
    partitionPlan(plan, 2, (m) => m),
    shares,
  );
  assert.deepEqual(
    partitionPlan(plan, 4, (m) => m).map((s) => s.length),
    [1, 1, 1, 2],
  );
});

test('split step under a budget in turns: each worker admits against its share of the step, the step never passes B and tops up what the shares left', async () => {
  const TURNS = { preset: 'paper', unit: 'turns', budget: 150, continuations: 2 } as const;
  const priced = () => ({ ...simStep(24), strategy: createStrategy('trace', TURNS) as Allocator, rootCost: 3 });
  const inProcess = await runStep(priced());
  const stats: WorkerStats[] = [];
  const split = await runSplitStep(priced(), { workers: 2, parts: parts({ strategy: TURNS }), onWorker: (s) => stats.push(s) });
  for (const r of [inProcess, split]) assert.ok(r.spend.turns <= 150, `spent ${r.spend.turns} turns of 150`);
  // Every planned prompt came back with its tree; the shares' admission is local, so the trees may
  // differ from the in-process step's, but the step spends about as much of B.
  assert.equal(stats.length, 2);
  const rooted = (r: typeof split) => r.trees.filter((t) => t.nodes[t.promptId]!.children.length > 0).length;
  assert.ok(rooted(split) >= rooted(inProcess) - 2, `${rooted(split)} prompts rolled out against ${rooted(inProcess)} in process`);
  assert.ok(split.spend.turns >= 0.9 * 150, `${split.spend.turns} turns of 150 (${inProcess.spend.turns} in process)`);
  assert.ok(split.rounds.length <= 2, 'round 0 in the workers, then at most the coordinator’s top-up');
  assert.ok(split.spend.continuation > 0, 'the workers expanded prefixes under their own caps');
});

test('pricedCaps: each share at the planned price, scaled down together when the step has less left', () => {
  const shares: Array<Array<[string, number]>> = [
    [
      ['a', 2],
      ['b', 3],
    ],
    [['c', 4]],
  ];
  const N = (m: number) => 2 * m;
  assert.deepEqual(pricedCaps(shares, N, { root: 10, available: 1000 }), [150, 120]);
  const scaled = pricedCaps(shares, N, { root: 10, available: 135 });
  assert.deepEqual(scaled, [75, 60]);
  assert.ok(scaled.reduce((a, b) => a + b, 0) <= 135);
});

test("split step: the workers' progress reaches the step's events, summed, ending at the step's counts before the top-up", async () => {
  const events: Array<{ kind: string; done: number; planned: number }> = [];
  const split = await runSplitStep(
    { ...simStep(), onEvent: (e) => events.push({ kind: e.kind, done: e.progress.bareDone + e.progress.continuationDone, planned: e.progress.barePlanned }) },
    { workers: await sharedPool() },
  );
  const heard = events.filter((e) => e.kind === 'workers');
  assert.ok(heard.length >= 2, `each worker reports at least once before its result (${heard.length} reports)`);
  const done = heard.map((e) => e.done);
  assert.deepEqual(
    done,
    [...done].sort((a, b) => a - b),
    'the summed counts never go back',
  );
  const last = heard.at(-1)!;
  const roundZero = [...split.rounds[0]!.values()].reduce((a, b) => a + b, 0);
  assert.equal(last.planned, roundZero, "the last report plans round 0's bare rollouts");
  assert.ok(last.done <= split.progress.bareDone + split.progress.continuationDone);
  const topUp = events.findIndex((e) => e.kind === 'roots' && e !== events[0]);
  const lastReport = events.map((e) => e.kind).lastIndexOf('workers');
  if (topUp >= 0) assert.ok(lastReport < topUp, 'reports come before the leftover top-up');
});
